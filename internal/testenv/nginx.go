package testenv

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

var execCommand = exec.CommandContext

// NginxPath is Debian's nginx, or "" when it is not installed.
func NginxPath() string {
	if p, err := exec.LookPath("nginx"); err == nil {
		return p
	}
	if _, err := os.Stat("/usr/sbin/nginx"); err == nil {
		return "/usr/sbin/nginx"
	}
	return ""
}

// frontDoorFiles are the files of deploy/nginx a front door is made of,
// copied as they are.
var frontDoorFiles = []string{"cdprelay-http.conf", "cdprelay-proxy.conf", "cdprelay-nodes.conf"}

// WriteFrontDoor writes into dir an nginx configuration that serves the
// front door of deploy/nginx on listen (host:port), routing /relay-N/ to
// nodes[N]: deploy's own files, and around them what a machine of one's
// own supplies (upstreams.conf, the http and server blocks), with every
// path nginx writes inside dir. It returns the main file's path.
func WriteFrontDoor(dir, listen string, nodes []string) (string, error) {
	deploy := filepath.Join(RepoDir(), "deploy", "nginx")
	for _, f := range frontDoorFiles {
		b, err := os.ReadFile(filepath.Join(deploy, f))
		if err != nil {
			return "", err
		}
		if f == "cdprelay-nodes.conf" {
			for i := range nodes {
				if !strings.Contains(string(b), fmt.Sprintf("location /relay-%d/ ", i)) {
					return "", fmt.Errorf("deploy/nginx/%s has no location for node %d", f, i)
				}
			}
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			return "", err
		}
	}
	var up strings.Builder
	for i, n := range nodes {
		fmt.Fprintf(&up, "upstream cdprelay_%d {\n    server %s;\n}\n", i, n)
	}
	up.WriteString("upstream cdprelay_fleet {\n")
	for _, n := range nodes {
		fmt.Fprintf(&up, "    server %s;\n", n)
	}
	up.WriteString("}\n")
	if err := os.WriteFile(filepath.Join(dir, "upstreams.conf"), []byte(up.String()), 0o644); err != nil {
		return "", err
	}
	main := fmt.Sprintf(`daemon off;
worker_processes 1;
pid %[1]s/nginx.pid;
error_log %[1]s/error.log info;
events {
    worker_connections 256;
}
http {
    access_log %[1]s/access.log;
    client_body_temp_path %[1]s/client_body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include cdprelay-http.conf;
    include upstreams.conf;
    server {
        listen %[2]s;
        include cdprelay-nodes.conf;
        location / {
            return 404;
        }
    }
}
`, dir, listen)
	path := filepath.Join(dir, "nginx.conf")
	return path, os.WriteFile(path, []byte(main), 0o644)
}

// NginxTest runs nginx -t on the configuration conf, whose files are in
// its folder; nothing is written outside that folder.
func NginxTest(ctx context.Context, conf string) (string, error) {
	nginx := NginxPath()
	if nginx == "" {
		return "", errors.New("nginx is not installed")
	}
	dir := filepath.Dir(conf)
	return runIn(ctx, dir, nginx, "-t", "-q", "-p", dir, "-c", conf, "-e", filepath.Join(dir, "startup.log"))
}

// FrontDoor is a running nginx in front of relay nodes.
type FrontDoor struct {
	Addr string // host:port it listens on
	Dir  string // its configuration, logs and temporary files
	cmd  *exec.Cmd
	done chan struct{}
}

// URL is the front door's base URL.
func (f *FrontDoor) URL() string { return "http://" + f.Addr }

// StartFrontDoor runs nginx on a free loopback port with WriteFrontDoor's
// configuration for nodes, in a folder of its own under dir; it returns
// once nginx accepts connections. Call Close when done.
func StartFrontDoor(ctx context.Context, dir string, nodes []string) (*FrontDoor, error) {
	nginx := NginxPath()
	if nginx == "" {
		return nil, errors.New("nginx is not installed")
	}
	addr, err := FreeAddr()
	if err != nil {
		return nil, err
	}
	fd := &FrontDoor{Addr: addr, Dir: filepath.Join(dir, "frontdoor"), done: make(chan struct{})}
	if err := os.MkdirAll(fd.Dir, 0o755); err != nil {
		return nil, err
	}
	conf, err := WriteFrontDoor(fd.Dir, addr, nodes)
	if err != nil {
		return nil, err
	}
	if out, err := NginxTest(ctx, conf); err != nil {
		return nil, fmt.Errorf("nginx -t: %v: %s", err, out)
	}
	fd.cmd = exec.Command(nginx, "-p", fd.Dir, "-c", conf, "-e", filepath.Join(fd.Dir, "startup.log"))
	log, err := os.Create(filepath.Join(fd.Dir, "stderr.log"))
	if err != nil {
		return nil, err
	}
	fd.cmd.Stdout, fd.cmd.Stderr = log, log
	if err := fd.cmd.Start(); err != nil {
		log.Close()
		return nil, err
	}
	go func() { fd.cmd.Wait(); log.Close(); close(fd.done) }()
	deadline := time.Now().Add(10 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, time.Second)
		if err == nil {
			c.Close()
			return fd, nil
		}
		select {
		case <-fd.done:
			return nil, fmt.Errorf("nginx exited: %s", fd.Log())
		case <-time.After(50 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			fd.Close()
			return nil, fmt.Errorf("nginx does not listen on %s: %s", addr, fd.Log())
		}
	}
}

// Log is the end of nginx's error log.
func (f *FrontDoor) Log() string {
	b, _ := os.ReadFile(filepath.Join(f.Dir, "error.log"))
	s, _ := os.ReadFile(filepath.Join(f.Dir, "stderr.log"))
	return tailLines(string(s)+string(b), 40)
}

// Close stops nginx (SIGINT, its fast stop; SIGKILL after a while) and
// waits for it.
func (f *FrontDoor) Close() {
	if f.cmd == nil || f.cmd.Process == nil {
		return
	}
	f.cmd.Process.Signal(os.Interrupt)
	select {
	case <-f.done:
	case <-time.After(5 * time.Second):
		f.cmd.Process.Kill()
		<-f.done
	}
}

// FreeAddr is a loopback address with a port nobody listens on right
// now.
func FreeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer ln.Close()
	return ln.Addr().String(), nil
}

func tailLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
