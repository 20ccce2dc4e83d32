package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/cdptest"
)

// TestTierSIGHUPMakesTabBlind runs the cdprelay binary as an operator
// does (serve --launch --config FILE), with a raw client on a tab of a
// site that is full. The operator rewrites the file to make the site blind
// and sends SIGHUP: the client is told the tab is blind
// (CDPRelay.accessChanged), its commands on the tab are refused — those
// naming objects it got before included — and nothing more of the page
// reaches it while the page goes on living; the change is audited.
func TestTierSIGHUPMakesTabBlind(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("SKIPPED: Windows has no SIGHUP (TestTierConfigEditMakesTabBlind reloads there)")
	}
	tierReloadMakesTabBlind(t, true)
}

// TestTierConfigEditMakesTabBlind is TestTierSIGHUPMakesTabBlind on every
// platform: the operator only saves the file, and the relay, watching it,
// reloads it.
func TestTierConfigEditMakesTabBlind(t *testing.T) {
	tierReloadMakesTabBlind(t, false)
}

func tierReloadMakesTabBlind(t *testing.T, sighup bool) {
	requireEnv(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "cdprelay")
	if out, err := exec.Command("go", "build", "-o", bin, "../cmd/cdprelay").CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	cfg := filepath.Join(dir, "cdprelay.yaml")
	// Another site has a tier; the page's is full until the reload.
	write := func(host, tier string) {
		t.Helper()
		if err := os.WriteFile(cfg, []byte("policy:\n  tiers:\n    - hosts: [\""+host+"\"]\n      tier: "+tier+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write("127.0.0.2", "read-only")

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	// With SIGHUP, the signal alone reloads.
	cmd := exec.CommandContext(ctx, bin, "serve", "--launch", "--addr", "127.0.0.1:0",
		"--state-dir", filepath.Join(dir, "state"), "--config", cfg, "--watch-config="+strconv.FormatBool(!sighup))
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		cmd.Process.Signal(os.Interrupt)
		cmd.Wait()
	}()
	var logs strings.Builder
	var logMu sync.Mutex
	ready := make(chan string, 1)
	addrRE := regexp.MustCompile(`CDP endpoint: (http://127\.0\.0\.1:\d+)`)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			logMu.Lock()
			logs.WriteString(sc.Text() + "\n")
			logMu.Unlock()
			if m := addrRE.FindStringSubmatch(sc.Text()); m != nil {
				ready <- m[1]
			}
		}
	}()
	var endpoint string
	select {
	case endpoint = <-ready:
	case <-time.After(60 * time.Second):
		logMu.Lock()
		t.Fatalf("the relay did not get ready:\n%s", logs.String())
	}
	var version struct{ WebSocketDebuggerURL string }
	if err := json.Unmarshal(get(t, endpoint+"/json/version"), &version); err != nil {
		t.Fatal(err)
	}
	c, err := cdptest.Dial(ctx, version.WebSocketDebuggerURL, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	a := &attacker{t: t, ctx: ctx, c: c}
	a.call("", "Target.setDiscoverTargets", map[string]any{"discover": true})
	a.call("", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false, "flatten": true})
	m := newMark()
	page := siteURL(env.Pages.Third, m, true)
	target, s := a.newTab(page)
	a.enableAll(s)
	res, err := a.call(s, "Runtime.evaluate", map[string]any{"expression": "document.body"})
	if err != nil {
		t.Fatal(err)
	}
	var body struct{ Result struct{ ObjectID string } }
	json.Unmarshal(res, &body)

	from := len(a.c.Messages())
	write("127.0.0.3", "blind")
	if sighup {
		cmd.Process.Signal(syscall.SIGHUP)
	}
	a.accessChanged(from, s, "blind")
	a.roundTrip()
	mark, next := a.mark(), len(a.c.Messages())
	for _, c := range []cdpCall{
		{"Runtime.evaluate", map[string]any{"expression": "document.title", "returnByValue": true}},
		{"Runtime.callFunctionOn", map[string]any{"objectId": body.Result.ObjectID, "functionDeclaration": "function() { return this.innerText; }", "returnByValue": true}},
		{"Page.captureScreenshot", nil},
		{"DOM.getDocument", map[string]any{"depth": -1}},
	} {
		a.refused(s, c.method, c.params)
	}
	// The page goes on calling its API: whatever it would have told the
	// client meanwhile, it has.
	before := env.Pages.Hits(env.Pages.Third, "/tier/api")
	deadline := time.Now().Add(15 * time.Second)
	for env.Pages.Hits(env.Pages.Third, "/tier/api") < before+3 {
		if time.Now().After(deadline) {
			t.Fatal("the page stopped calling its API")
		}
		time.Sleep(50 * time.Millisecond)
	}
	a.roundTrip()
	if l := leakIn(a.c.Frames(), mark, needles(m)...); l != "" {
		t.Errorf("the client received the blind page after the reload:\n\t%s", l)
	}
	for _, msg := range a.c.Messages()[next:] {
		if msg.SessionID == s && msg.Method != "" {
			t.Errorf("an event of the blind tab reached the client: %.300s", msg.Raw)
			break
		}
	}
	res, err = a.call("", "Target.getTargetInfo", map[string]any{"targetId": target})
	if l := leakIn([][]byte{res}, 0, needles(m)...); err != nil || l != "" {
		t.Errorf("Target.getTargetInfo of the blind tab: %s %v", res, err)
	}
	var audit struct {
		Records []struct{ Kind, Detail string }
	}
	json.Unmarshal(get(t, endpoint+"/v1/audit?limit=1000"), &audit)
	found := false
	for _, r := range audit.Records {
		found = found || (r.Kind == "access" && strings.Contains(r.Detail, "full -> blind"))
	}
	if !found {
		t.Errorf("the change of access is not in the audit log: %+v", audit.Records)
	}
}
