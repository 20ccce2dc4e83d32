package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// TestBinaryAuditAndMetrics runs the cdprelay binary the way `make run`
// does (serve --launch: its own headless Chromium with the extension),
// drives it with Playwright and reads what an operator reads: /v1/audit,
// the JSONL audit file, /metrics and the logs. The typed password must
// appear in none of them.
func TestBinaryAuditAndMetrics(t *testing.T) {
	requireEnv(t)
	dir := t.TempDir()
	bin := filepath.Join(dir, "cdprelay")
	build := exec.Command("go", "build", "-o", bin, "../cmd/cdprelay")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	auditFile := filepath.Join(dir, "audit.jsonl")
	cfg := filepath.Join(dir, "cdprelay.yaml")
	os.WriteFile(cfg, []byte("audit:\n  ring_size: 1000\n  file: "+auditFile+"\n"), 0o600)

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "serve", "--launch", "--addr", "127.0.0.1:0",
		"--state-dir", filepath.Join(dir, "state"), "--config", cfg, "--log-level", "debug")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var logMu sync.Mutex
	ready := make(chan string, 1)
	addrRE := regexp.MustCompile(`CDP endpoint: (http://127\.0\.0\.1:\d+)`)
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			logs.WriteString(line + "\n")
			logMu.Unlock()
			if m := addrRE.FindStringSubmatch(line); m != nil {
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

	const secret = "hunter2-Secret-Passw0rd"
	runNode(t, "audit.mjs", endpoint, env.Pages.Main, secret)

	// The disconnect is recorded once the relay has read the close.
	var recs []struct {
		Seq     uint64 `json:"seq"`
		Actor   string `json:"actor"`
		Kind    string `json:"kind"`
		Method  string `json:"method"`
		Outcome string `json:"outcome"`
		Detail  string `json:"detail"`
	}
	var raw []byte
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw = get(t, endpoint+"/v1/audit?limit=1000")
		var page struct {
			Records json.RawMessage `json:"records"`
		}
		if err := json.Unmarshal(raw, &page); err != nil {
			t.Fatalf("audit: %v: %s", err, raw)
		}
		json.Unmarshal(page.Records, &recs)
		if n := len(recs); n > 0 && recs[n-1].Kind == "disconnect" && recs[n-1].Actor == "cdp-client" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no client disconnect in the audit log:\n%s", raw)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// In order: the client connects, navigates, is denied, disconnects.
	want := []string{"cdp-client connect", "cdp-client navigate", "cdp-client denied", "cdp-client disconnect"}
	i := 0
	for _, r := range recs {
		if i < len(want) && r.Actor+" "+r.Kind == want[i] {
			i++
		}
		if r.Kind == "navigate" && strings.Contains(r.Detail, "query-text") {
			t.Errorf("a navigation kept its query: %q", r.Detail)
		}
		if r.Kind == "denied" && r.Method != "Storage.getCookies" {
			t.Errorf("denied %q, want Storage.getCookies", r.Method)
		}
	}
	if i != len(want) {
		t.Fatalf("audit records are missing %q in order:\n%s", want[i], raw)
	}

	metrics := string(get(t, endpoint+"/metrics"))
	for _, m := range []string{
		`cdprelay_policy_refusals_total{rule="method:Storage.getCookies",verdict="deny"} 1`,
		`cdprelay_audit_records_total{kind="denied"} 1`,
	} {
		if !strings.Contains(metrics, m) {
			t.Errorf("/metrics lacks %s", m)
		}
	}
	// What the session did is counted: more than nothing.
	for _, series := range []string{
		`cdprelay_relay_messages_total{direction="command",domain="Runtime"}`,
		`cdprelay_relay_messages_total{direction="reply",domain="Runtime"}`,
		`cdprelay_relay_messages_total{direction="event",domain="Page"}`,
		`cdprelay_relay_command_duration_seconds_count`,
		`cdprelay_relay_extension_connects_total`,
		// Our extension and the relay agreed on batch frames, and a page
		// load's events and replies came together.
		`cdprelay_relay_extension_batches_total{direction="from_extension"}`,
		`cdprelay_relay_extension_batches_total{direction="to_extension"}`,
	} {
		m := regexp.MustCompile(regexp.QuoteMeta(series) + ` ([0-9.e+]+)`).FindStringSubmatch(metrics)
		if m == nil {
			t.Errorf("/metrics lacks %s", series)
			continue
		}
		if v, err := strconv.ParseFloat(m[1], 64); err != nil || v <= 0 {
			t.Errorf("%s is %s, want more than 0", series, m[1])
		}
	}

	// Stop the relay (flushing the audit file), then look for the secret
	// everywhere an operator could read.
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the relay did not stop cleanly: %v", err)
	}
	file, err := os.ReadFile(auditFile)
	if err != nil || len(file) == 0 {
		t.Fatalf("audit file: %v (%d bytes)", err, len(file))
	}
	logMu.Lock()
	allLogs := logs.String()
	logMu.Unlock()
	for name, text := range map[string]string{"the audit ring": string(raw), "the audit file": string(file), "the logs": allLogs, "/metrics": metrics} {
		if strings.Contains(text, secret) {
			t.Errorf("the typed password appears in %s", name)
		}
	}
	if !strings.Contains(allLogs, "browser stopped") {
		t.Errorf("the launched browser was not stopped with the relay:\n%s", allLogs)
	}
}

func get(t *testing.T, url string) []byte {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 {
		t.Fatalf("GET %s: %s: %s", url, resp.Status, b)
	}
	return b
}
