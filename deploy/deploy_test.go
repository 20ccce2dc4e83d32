package deploy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/testenv"
)

// instruction is one Dockerfile instruction, continuations joined.
type instruction struct {
	cmd  string
	args string
	line int
}

func dockerfile(t *testing.T) []instruction {
	t.Helper()
	f, err := os.Open("Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []instruction
	var cur strings.Builder
	start := 0
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if cur.Len() == 0 && (line == "" || strings.HasPrefix(line, "#")) {
			continue
		}
		if cur.Len() == 0 {
			start = n
		}
		if strings.HasSuffix(line, "\\") {
			cur.WriteString(strings.TrimSuffix(line, "\\") + " ")
			continue
		}
		cur.WriteString(line)
		cmd, args, _ := strings.Cut(cur.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args), start})
		cur.Reset()
	}
	return out
}

// dockerignored reports whether the build context leaves path out.
func dockerignored(t *testing.T, path string) bool {
	t.Helper()
	b, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(string(b), "\n") {
		l = strings.TrimSpace(l)
		if l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		if path == l || strings.HasPrefix(path, l+"/") {
			return true
		}
	}
	return false
}

// TestDockerfile checks the image's build against the repository: what
// it copies exists and is in the build context, the Go it builds with is
// go.mod's, every file the binary is built from reaches the builder, and
// the stages and paths agree with one another.
func TestDockerfile(t *testing.T) {
	ins := dockerfile(t)
	var stages []string
	copied := map[string]string{} // destination → source
	var entrypoint, goImage string
	for _, in := range ins {
		switch in.cmd {
		case "FROM":
			f := strings.Fields(in.args)
			if len(f) == 3 && strings.EqualFold(f[1], "AS") {
				stages = append(stages, f[2])
			}
			if strings.HasPrefix(f[0], "golang:") {
				goImage = f[0]
			}
			if len(f) != 3 && !slices.Contains(stages, f[0]) {
				t.Errorf("line %d: FROM %s: every stage is named", in.line, in.args)
			}
		case "COPY":
			f := strings.Fields(in.args)
			from := ""
			for len(f) > 0 && strings.HasPrefix(f[0], "--") {
				from, _ = strings.CutPrefix(f[0], "--from=")
				f = f[1:]
			}
			if len(f) < 2 {
				t.Errorf("line %d: COPY %s", in.line, in.args)
				continue
			}
			dst := f[len(f)-1]
			for _, src := range f[:len(f)-1] {
				copied[dst] = src
				if from != "" {
					if !slices.Contains(stages, from) {
						t.Errorf("line %d: COPY --from=%s: no such stage", in.line, from)
					}
					continue
				}
				if src == "." {
					continue
				}
				if _, err := os.Stat(filepath.Join("..", src)); err != nil {
					t.Errorf("line %d: COPY %s: %v", in.line, src, err)
				}
				if dockerignored(t, src) {
					t.Errorf("line %d: COPY %s: .dockerignore leaves it out of the build context", in.line, src)
				}
			}
		case "ENTRYPOINT":
			var args []string
			if err := json.Unmarshal([]byte(in.args), &args); err != nil || len(args) == 0 {
				t.Errorf("line %d: ENTRYPOINT %s: not the exec form", in.line, in.args)
				continue
			}
			entrypoint = args[0]
		case "RUN":
			if m := regexp.MustCompile(`go build .* (\./\S+)$`).FindStringSubmatch(in.args); m != nil {
				if _, err := os.Stat(filepath.Join("..", m[1], "main.go")); err != nil {
					t.Errorf("line %d: builds %s: %v", in.line, m[1], err)
				}
			}
		}
	}
	if !slices.Equal(stages, []string{"build", "base", "chromium", "relay"}) {
		t.Errorf("stages %v: the default (last) must be the relay alone, the Chromium variant a target", stages)
	}
	if src := copied[entrypoint]; src != "deploy/entrypoint.sh" {
		t.Errorf("ENTRYPOINT %s is copied from %q, want deploy/entrypoint.sh", entrypoint, src)
	}
	if fi, err := os.Stat("entrypoint.sh"); err != nil || fi.Mode()&0o111 == 0 {
		t.Errorf("entrypoint.sh is not executable: %v", err)
	}
	// The builder's Go is go.mod's.
	mod, _ := os.ReadFile("../go.mod")
	m := regexp.MustCompile(`(?m)^go (\d+\.\d+)`).FindSubmatch(mod)
	if m == nil || !strings.HasPrefix(goImage, "golang:"+string(m[1])+"-") {
		t.Errorf("the builder is %s; go.mod wants go %s", goImage, m[1])
	}
	// Every file the binary is built from is in the build context.
	out, err := exec.Command("go", "list", "-deps", "-f", `{{if not .Standard}}{{$d := .Dir}}{{range .GoFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{range .EmbedFiles}}{{$d}}/{{.}}{{"\n"}}{{end}}{{end}}`, "../cmd/cdprelay").Output()
	if err != nil {
		t.Fatal(err)
	}
	root, _ := filepath.Abs("..")
	n := 0
	for _, f := range strings.Fields(string(out)) {
		rel, err := filepath.Rel(root, f)
		if err != nil || strings.HasPrefix(rel, "..") {
			continue // a module's, downloaded by go mod download
		}
		n++
		if dockerignored(t, filepath.ToSlash(rel)) {
			t.Errorf("%s is needed by the build and left out by .dockerignore", rel)
		}
	}
	if n < 50 {
		t.Errorf("only %d files of the repository build the binary: go list went wrong", n)
	}
	// The Chromium variant points the relay at Debian's Chromium.
	if !strings.Contains(readFile(t, "Dockerfile"), "ENV CHROME_PATH=/usr/lib/chromium/chromium") {
		t.Error("the chromium stage does not set CHROME_PATH to Debian's Chromium")
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// relayBinary builds cmd/cdprelay once for the tests that run it.
func relayBinary(t *testing.T) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin, err := testenv.BuildRelay(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// syncBuffer is what a process writes, read while it runs.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestEntrypoint runs the image's entrypoint here, as the image would,
// with the relay built from this repository: it turns the environment of
// a StatefulSet's pod into serve's flags, and the relay gets SIGTERM
// itself.
func TestEntrypoint(t *testing.T) {
	bin := relayBinary(t)
	dir := t.TempDir()
	cfg := app.File{Tokens: []ingress.Token{{Name: "ops", SHA256: ingress.HashToken("tok-ops"), Scopes: []string{"admin", "cdp"}}}}
	b, _ := json.Marshal(cfg)
	os.WriteFile(filepath.Join(dir, "config.yaml"), b, 0o600)

	run := func(env ...string) (*exec.Cmd, *syncBuffer) {
		cmd := exec.Command("sh", "entrypoint.sh")
		cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "CDPRELAY_BIN=" + bin}, env...)
		out := &syncBuffer{}
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		return cmd, out
	}
	addr, _ := testenv.FreeAddr()
	state := filepath.Join(dir, "state")
	cmd, out := run("CDPRELAY_ADDR="+addr, "CDPRELAY_STATE_DIR="+state, "CDPRELAY_CONFIG="+filepath.Join(dir, "config.yaml"),
		"CDPRELAY_PUBLIC_BASE=https://relay.example.com/", "POD_NAME=cdprelay-3", "HOSTNAME=ignored-9", "CDPRELAY_LOG_FORMAT=json")
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	var body string
	for deadline := time.Now().Add(20 * time.Second); ; {
		req, _ := http.NewRequest("GET", "http://"+addr+"/relay-3/json/version", nil)
		req.Header.Set("Authorization", "Bearer tok-ops")
		resp, err := http.DefaultClient.Do(req)
		if err == nil {
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			body = string(b)
			break
		}
		select {
		case err := <-exited:
			t.Fatalf("the entrypoint exited: %v\n%s", err, out)
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the relay does not serve on %s:\n%s", addr, out)
		}
	}
	if !strings.Contains(body, `"webSocketDebuggerUrl": "wss://relay.example.com/relay-3/devtools/browser/`) {
		t.Errorf("/json/version under the pod's public URL: %s", body)
	}
	if _, err := os.Stat(filepath.Join(state, "default-guid")); err != nil {
		t.Errorf("the state dir: %v", err)
	}
	if !strings.Contains(out.String(), `"msg":"cdprelay listening"`) {
		t.Errorf("not the JSON log asked for:\n%s", out)
	}
	// exec: the signal reaches the relay, which ends cleanly.
	cmd.Process.Signal(syscall.SIGTERM)
	select {
	case err := <-exited:
		if err != nil {
			t.Errorf("after SIGTERM: %v\n%s", err, out)
		}
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("the relay ignored SIGTERM:\n%s", out)
	}

	for _, tt := range []struct {
		env  []string
		want string
	}{
		{[]string{"CDPRELAY_PUBLIC_BASE=https://relay.example.com", "POD_NAME=cdprelay"}, "does not end in -N"},
		{[]string{"CDPRELAY_PUBLIC_BASE=https://relay.example.com", "HOSTNAME=7"}, "has no -N ending"},
		{[]string{"CDPRELAY_PUBLIC_BASE=https://relay.example.com", "POD_NAME=cdprelay-x1"}, "does not end in -N"},
		{[]string{"CDPRELAY_INSECURE_NO_TLS=maybe"}, "is 1 or 0"},
		// Off loopback without tokens, serve refuses, and says why.
		{[]string{"CDPRELAY_ADDR=0.0.0.0:0", "CDPRELAY_STATE_DIR=" + state, "CDPRELAY_CONFIG=/nonexistent"}, "configure tokens"},
	} {
		cmd, out := run(tt.env...)
		err := cmd.Wait()
		if err == nil || !strings.Contains(out.String(), tt.want) {
			t.Errorf("%v: %v %q, want an error saying %q", tt.env, err, out, tt.want)
		}
	}
}

// TestEntrypointShellcheck: the entrypoint is POSIX sh, as Debian's dash
// and busybox run it.
func TestEntrypointShellcheck(t *testing.T) {
	sc, err := exec.LookPath("shellcheck")
	if err != nil {
		t.Skip("SKIPPED: shellcheck is not installed (Debian's shellcheck package; .ci/run installs it)")
	}
	if out, err := exec.Command(sc, "-s", "sh", "entrypoint.sh").CombinedOutput(); err != nil {
		t.Errorf("shellcheck: %v\n%s", err, out)
	}
}

// manifests are the Kubernetes documents of k8s/, by kind and name.
type manifest = map[string]any

func manifests(t *testing.T) map[string]manifest {
	t.Helper()
	out := map[string]manifest{}
	files, _ := filepath.Glob("k8s/*.yaml")
	for _, f := range files {
		if f == "k8s/config.yaml" {
			continue
		}
		for _, doc := range strings.Split(readFile(t, f), "\n---\n") {
			var m manifest
			if err := yaml.Unmarshal([]byte(doc), &m); err != nil {
				t.Fatalf("%s: %v", f, err)
			}
			if m == nil {
				continue
			}
			key := fmt.Sprint(m["kind"], "/", get(m, "metadata", "name"))
			if _, dup := out[key]; dup {
				t.Errorf("%s twice", key)
			}
			out[key] = m
		}
	}
	return out
}

// get walks a manifest: string keys for maps, ints for lists.
func get(v any, path ...any) any {
	for _, p := range path {
		switch k := p.(type) {
		case string:
			m, _ := v.(map[string]any)
			v = m[k]
		case int:
			l, _ := v.([]any)
			if k >= len(l) {
				return nil
			}
			v = l[k]
		}
	}
	return v
}

func str(v any, path ...any) string { s, _ := get(v, path...).(string); return s }

// subset reports whether every label of sel is in labels.
func subset(sel, labels any) bool {
	s, _ := sel.(map[string]any)
	l, _ := labels.(map[string]any)
	if len(s) == 0 {
		return false
	}
	for k, v := range s {
		if l[k] != v {
			return false
		}
	}
	return true
}

// TestManifests checks that the Kubernetes manifests fit together: the
// kustomization's files exist, the StatefulSet's Service is headless,
// selectors select the pods they are for, mounts name volumes, the state
// dir is on the volume, the front door's configuration is exactly
// deploy/nginx's and names every node of the StatefulSet, and the relay's
// config validates. (make lint also validates each manifest against the
// Kubernetes schema, tools/manifests.)
func TestManifests(t *testing.T) {
	ms := manifests(t)
	var kust manifest
	if err := yaml.Unmarshal([]byte(readFile(t, "kustomization.yaml")), &kust); err != nil {
		t.Fatal(err)
	}
	ns := str(kust, "namespace")
	for _, r := range get(kust, "resources").([]any) {
		if _, err := os.Stat(r.(string)); err != nil {
			t.Errorf("kustomization: %v", err)
		}
	}
	generated := map[string][]string{}
	for _, g := range get(kust, "configMapGenerator").([]any) {
		for _, f := range get(g, "files").([]any) {
			if _, err := os.Stat(f.(string)); err != nil {
				t.Errorf("kustomization: %v", err)
			}
			generated[str(g, "name")] = append(generated[str(g, "name")], filepath.Base(f.(string)))
		}
	}
	for key, m := range ms {
		if got := str(m, "metadata", "namespace"); got != ns && m["kind"] != "Namespace" {
			t.Errorf("%s is in namespace %q, the kustomization's is %q", key, got, ns)
		}
	}
	if ms["Namespace/"+ns] == nil {
		t.Errorf("no Namespace %s", ns)
	}

	sts := ms["StatefulSet/cdprelay"]
	svc := ms["Service/"+str(sts, "spec", "serviceName")]
	switch {
	case sts == nil:
		t.Fatal("no StatefulSet cdprelay")
	case svc == nil:
		t.Fatalf("the StatefulSet's serviceName %q is no Service", str(sts, "spec", "serviceName"))
	case str(svc, "spec", "clusterIP") != "None":
		t.Error("the StatefulSet's Service is not headless")
	}
	podLabels := get(sts, "spec", "template", "metadata", "labels")
	if !subset(get(sts, "spec", "selector", "matchLabels"), podLabels) || !subset(get(svc, "spec", "selector"), podLabels) {
		t.Error("the StatefulSet's or its Service's selector does not select its pods")
	}
	if np := ms["NetworkPolicy/cdprelay-nodes"]; np == nil || !subset(get(np, "spec", "podSelector", "matchLabels"), podLabels) {
		t.Error("the NetworkPolicy does not select the nodes")
	}
	c := get(sts, "spec", "template", "spec", "containers", 0)
	env := map[string]string{}
	for _, e := range get(c, "env").([]any) {
		env[str(e, "name")] = str(e, "value")
	}
	if str(get(c, "env").([]any)[1], "valueFrom", "fieldRef", "fieldPath") != "metadata.name" || env["CDPRELAY_PUBLIC_BASE"] == "" {
		t.Error("the pod does not give the entrypoint its name and the front door's base URL")
	}
	mounts := map[string]string{}
	for _, m := range get(c, "volumeMounts").([]any) {
		mounts[str(m, "name")] = str(m, "mountPath")
	}
	claim := str(sts, "spec", "volumeClaimTemplates", 0, "metadata", "name")
	if mounts[claim] == "" || mounts[claim] != env["CDPRELAY_STATE_DIR"] {
		t.Errorf("the state dir %s is not the persistent volume %s (mounted at %s)", env["CDPRELAY_STATE_DIR"], claim, mounts[claim])
	}
	if filepath.Dir(env["CDPRELAY_CONFIG"]) != mounts["config"] || str(sts, "spec", "template", "spec", "volumes", 0, "configMap", "name") != "cdprelay-config" {
		t.Error("the config file is not the cdprelay-config ConfigMap's")
	}
	if !slices.Contains(generated["cdprelay-config"], filepath.Base(env["CDPRELAY_CONFIG"])) {
		t.Errorf("the ConfigMap cdprelay-config has no %s", filepath.Base(env["CDPRELAY_CONFIG"]))
	}
	f, err := app.ReadFile("k8s/config.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Validate(); err != nil {
		t.Errorf("k8s/config.yaml: %v", err)
	}
	if str(get(c, "ports").([]any)[0], "name") != str(svc, "spec", "ports", 0, "targetPort") {
		t.Error("the Service's targetPort is not the container's port")
	}

	// The front door: its files mounted from the generated ConfigMap,
	// nginx's image new enough for "resolve", and an upstream and a
	// location for each node.
	fd := ms["Deployment/cdprelay-frontdoor"]
	fc := get(fd, "spec", "template", "spec", "containers", 0)
	for _, m := range get(fc, "volumeMounts").([]any) {
		if !slices.Contains(generated["cdprelay-frontdoor"], str(m, "subPath")) {
			t.Errorf("the front door mounts %s, which the ConfigMap lacks", str(m, "subPath"))
		}
	}
	if !subset(get(fd, "spec", "selector", "matchLabels"), get(fd, "spec", "template", "metadata", "labels")) ||
		!subset(get(ms["Service/cdprelay-frontdoor"], "spec", "selector"), get(fd, "spec", "template", "metadata", "labels")) {
		t.Error("the front door's selectors do not select its pods")
	}
	if !subset(get(ms["NetworkPolicy/cdprelay-nodes"], "spec", "ingress", 0, "from", 0, "podSelector", "matchLabels"), get(fd, "spec", "template", "metadata", "labels")) {
		t.Error("the NetworkPolicy does not let the front door in")
	}
	if img := str(fc, "image"); !regexp.MustCompile(`:1\.(2[89]|[3-9]\d)`).MatchString(img) {
		t.Errorf("the front door's image %s predates nginx 1.27.3's resolve", img)
	}
	ing := ms["Ingress/cdprelay"]
	if str(ing, "spec", "rules", 0, "http", "paths", 0, "backend", "service", "name") != "cdprelay-frontdoor" {
		t.Error("the Ingress does not go to the front door")
	}
	if host := str(ing, "spec", "rules", 0, "host"); !strings.Contains(env["CDPRELAY_PUBLIC_BASE"], "://"+host) {
		t.Errorf("the Ingress's host %s is not the nodes' public base %s", host, env["CDPRELAY_PUBLIC_BASE"])
	}
	replicas := int(get(sts, "spec", "replicas").(float64))
	nodes := readFile(t, "nginx/cdprelay-nodes.conf")
	ups := readFile(t, "k8s/frontdoor/upstreams.conf")
	for i := range replicas {
		if !strings.Contains(nodes, fmt.Sprintf("location /relay-%d/ {\n    proxy_pass http://cdprelay_%d;", i, i)) {
			t.Errorf("nginx/cdprelay-nodes.conf does not route /relay-%d/ to cdprelay_%d", i, i)
		}
		pod := fmt.Sprintf("server cdprelay-%d.%s.%s.svc.cluster.local:%v resolve;", i, str(svc, "metadata", "name"), ns, get(svc, "spec", "ports", 0, "port"))
		if !strings.Contains(ups, fmt.Sprintf("upstream cdprelay_%d {", i)) || strings.Count(ups, pod) != 2 {
			t.Errorf("k8s/frontdoor/upstreams.conf: node %d is not %q (in its upstream and the fleet's)", i, pod)
		}
	}
}

// TestNginxConfigs: nginx -t on the shipped front doors, a machine's
// (nginx/nginx.conf, with a certificate of the test's) and the
// Kubernetes one (k8s/frontdoor/default.conf inside the image's http
// block, upstreams without "resolve", which Debian's nginx predates).
// The fleet test (e2e/team) runs the front door for real.
func TestNginxConfigs(t *testing.T) {
	if testenv.NginxPath() == "" {
		t.Skip("SKIPPED: nginx is not installed (Debian's nginx package; .ci/run installs it)")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	copyTo := func(dir string, files ...string) {
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, filepath.Base(f)), []byte(readFile(t, f)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	shared := []string{"nginx/cdprelay-http.conf", "nginx/cdprelay-proxy.conf", "nginx/cdprelay-nodes.conf"}
	paths := func(dir string) string {
		return fmt.Sprintf("pid %[1]s/nginx.pid;\nerror_log %[1]s/error.log;\n", dir)
	}
	httpPaths := func(dir string) string {
		return fmt.Sprintf("access_log %[1]s/access.log; client_body_temp_path %[1]s/cb; proxy_temp_path %[1]s/p; fastcgi_temp_path %[1]s/f; uwsgi_temp_path %[1]s/u; scgi_temp_path %[1]s/s;\n", dir)
	}

	// A machine's: the example as it is, with its certificate's paths
	// replaced by a certificate of the test's.
	vm := t.TempDir()
	copyTo(vm, append(shared, "nginx/upstreams.conf")...)
	cert, err := testenv.NewCert()
	if err != nil {
		t.Fatal(err)
	}
	certFile, keyFile, err := cert.WriteFiles(vm)
	if err != nil {
		t.Fatal(err)
	}
	conf := readFile(t, "nginx/nginx.conf")
	conf = strings.Replace(conf, "/etc/ssl/relay.example.com/fullchain.pem", certFile, 1)
	conf = strings.Replace(conf, "/etc/ssl/relay.example.com/privkey.pem", keyFile, 1)
	conf = strings.Replace(conf, "http {", "http {\n"+httpPaths(vm), 1)
	os.WriteFile(filepath.Join(vm, "nginx.conf"), []byte(paths(vm)+conf), 0o644)
	if out, err := testenv.NginxTest(ctx, filepath.Join(vm, "nginx.conf")); err != nil {
		t.Errorf("nginx -t of nginx/nginx.conf: %v\n%s", err, out)
	}

	// Kubernetes': the image's layout, default.conf in conf.d.
	k := t.TempDir()
	copyTo(k, shared...)
	os.MkdirAll(filepath.Join(k, "conf.d"), 0o755)
	os.WriteFile(filepath.Join(k, "conf.d", "default.conf"), []byte(readFile(t, "k8s/frontdoor/default.conf")), 0o644)
	ups := readFile(t, "k8s/frontdoor/upstreams.conf")
	ups = regexp.MustCompile(`(?m)^resolver .*$`).ReplaceAllString(ups, "resolver 127.0.0.1;")
	ups = regexp.MustCompile(`server cdprelay-\d+\.\S+ resolve;`).ReplaceAllString(ups, "server 127.0.0.1:9;")
	os.WriteFile(filepath.Join(k, "upstreams.conf"), []byte(ups), 0o644)
	main := paths(k) + "events {}\nhttp {\n" + httpPaths(k) + "include conf.d/*.conf;\n}\n"
	os.WriteFile(filepath.Join(k, "nginx.conf"), []byte(main), 0o644)
	if out, err := testenv.NginxTest(ctx, filepath.Join(k, "nginx.conf")); err != nil {
		t.Errorf("nginx -t of the Kubernetes front door: %v\n%s", err, out)
	}
}
