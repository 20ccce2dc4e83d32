package e2e

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/testenv"
)

// TestPersonKey runs the relay as `make run` does (serve --launch:
// loopback, no tokens, its own headless Chromium) with a person's approval
// asked before navigations to the other site. A Playwright agent holds the
// CDP URL and nothing else; the person holds the link serve printed and
// opens it in a second headless Chromium (personkey.mjs). The agent tries
// every way it has to act as the person — its own HTTP requests (resume,
// delete), its own viewer socket with no Origin and with the relay's
// Origin forged, from its own page on another port of the same host, a
// key of its own making — while the person stops, resumes, approves,
// answers a dialog and takes over. Then the person key is looked for in
// everything a CDP client or an operator's reader gets: every CDP message
// the agent exchanged, /json/*, /v1/*, /metrics, the audit file and the
// relay's log lines.
//
// CDPRELAY_PERSONKEY_BINARY runs another build of cdprelay instead (an
// older one, to see which attacks it lets through).
func TestPersonKey(t *testing.T) {
	requireEnv(t)
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := os.Getenv("CDPRELAY_PERSONKEY_BINARY")
	if bin == "" {
		var err error
		if bin, err = testenv.BuildRelay(ctx, dir); err != nil {
			t.Fatal(err)
		}
	}
	auditFile := filepath.Join(dir, "audit.jsonl")
	cfg := filepath.Join(dir, "cdprelay.yaml")
	os.WriteFile(cfg, []byte("audit:\n  file: "+auditFile+"\n"), 0o600)
	state := filepath.Join(dir, "state")
	otherHost := strings.TrimPrefix(regexp.MustCompile(`:\d+$`).ReplaceAllString(env.Pages.Other, ""), "http://")

	cmd := exec.CommandContext(ctx, bin, "serve", "--launch", "--addr", "127.0.0.1:0", "--state-dir", state,
		"--config", cfg, "--ask-domains", otherHost, "--log-level", "debug")
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
	cmd.WaitDelay = 10 * time.Second
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var logs strings.Builder
	var logMu sync.Mutex
	ready := make(chan string, 1)
	readyRE := regexp.MustCompile(`CDP endpoint: (http://127\.0\.0\.1:\d+)`)
	linkRE := regexp.MustCompile(`^  (http://127\.0\.0\.1:\d+/#person=\S+)$`)
	var link string
	go func() {
		sc := bufio.NewScanner(stderr)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			logMu.Lock()
			if m := linkRE.FindStringSubmatch(line); m != nil && link == "" {
				// The one line that is meant to carry the key: the
				// person's link, printed once. It is kept out of the
				// lines searched for the key below.
				link = m[1]
			} else {
				logs.WriteString(line + "\n")
			}
			logMu.Unlock()
			if m := readyRE.FindStringSubmatch(line); m != nil {
				ready <- m[1]
			}
		}
	}()
	var relay string
	select {
	case relay = <-ready:
	case <-time.After(90 * time.Second):
		logMu.Lock()
		t.Fatalf("the relay did not get ready:\n%s", logs.String())
	}
	defer func() {
		if t.Failed() {
			logMu.Lock()
			t.Logf("relay output:\n%s", tail(logs.String(), 120))
			logMu.Unlock()
		}
	}()
	logMu.Lock()
	personLink := link
	logMu.Unlock()
	key := ""
	if personLink == "" {
		t.Error("serve printed no person's link")
		personLink = relay + "/#person=none"
	} else {
		key = personLink[strings.Index(personLink, "#person=")+len("#person="):]
		b, err := os.ReadFile(filepath.Join(state, "person-key"))
		fi, _ := os.Stat(filepath.Join(state, "person-key"))
		if err != nil || strings.TrimSpace(string(b)) != key || fi.Mode().Perm() != 0o600 {
			t.Errorf("the key file: %v, mode %v, holds the link's key: %v", err, fi.Mode(), strings.TrimSpace(string(b)) == key)
		}
	}

	// The agent's CDP traffic goes through a recorder, so that every
	// message it exchanges can be searched for the key.
	rec := newCDPRecorder(t, relay)
	shots := os.Getenv("PERSON_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	out, nodeErr := testenv.Node(ctx, "personkey.mjs", nil, personLink, rec.url, relay, env.Pages.Main, env.Pages.Other, shots)
	t.Logf("personkey.mjs:\n%s", out)
	if nodeErr != nil {
		t.Errorf("personkey.mjs: %v", nodeErr)
	}
	for _, name := range []string{"person-viewonly", "person-key"} {
		if fi, err := os.Stat(filepath.Join(shots, name+".png")); err != nil || fi.Size() < 10000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	removable := regexp.MustCompile(`(?m)^removable: (\w+)$`).FindStringSubmatch(out)
	if key == "" || removable == nil {
		return
	}

	// The person, from a program of theirs, removes the instance the
	// agent could not.
	req, _ := http.NewRequest(http.MethodDelete, relay+"/v1/instances/"+removable[1], nil)
	req.Header.Set("Authorization", "Bearer "+key)
	if resp, err := http.DefaultClient.Do(req); err != nil || resp.StatusCode != http.StatusNoContent {
		t.Errorf("the person removes an instance: %v %v", resp, err)
	}

	// Who did what: every person's action names the person's credential.
	var page struct {
		Records []struct {
			Actor, Kind, By, Detail, Outcome string
		} `json:"records"`
	}
	var raw []byte
	want := map[string]bool{"stop": false, "resume": false, "approval": false, "dialog": false, "take-over": false, "hand-back": false, "remove": false}
	deadline := time.Now().Add(10 * time.Second)
	for {
		raw = get(t, relay+"/v1/audit?limit=1000")
		json.Unmarshal(raw, &page)
		for _, r := range page.Records {
			if _, ok := want[r.Kind]; ok && strings.Contains(r.By, "(person key)") {
				want[r.Kind] = true
			}
		}
		done := true
		for _, ok := range want {
			done = done && ok
		}
		if done {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("person's actions without the person key as who did them: %v\n%s", want, raw)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}

	// Nothing a CDP client or an operator's reader gets holds the key.
	places := map[string]string{"the audit ring": string(raw)}
	for _, p := range []string{"/json/version", "/json/list", "/json/protocol", "/v1/instances", "/metrics", "/", "/app.js"} {
		places[p] = string(get(t, relay+p))
	}
	cmd.Process.Signal(os.Interrupt)
	if err := cmd.Wait(); err != nil {
		t.Errorf("the relay did not stop cleanly: %v", err)
	}
	if b, err := os.ReadFile(auditFile); err != nil || len(b) == 0 {
		t.Errorf("audit file: %v", err)
	} else {
		places["the audit file"] = string(b)
	}
	logMu.Lock()
	places["the relay's log lines"] = logs.String()
	logMu.Unlock()
	cdp := rec.all()
	places["the agent's CDP messages"] = strings.Join(cdp, "\n")
	if len(cdp) < 100 || !strings.Contains(places["the agent's CDP messages"], "CDPRelay.stopped") {
		t.Errorf("the recorder saw %d messages, none of them CDPRelay.stopped: it did not record the agent's session", len(cdp))
	}
	for name, text := range places {
		if strings.Contains(text, key) || strings.Contains(text, strings.TrimPrefix(key, "cdpp_")) {
			t.Errorf("the person key appears in %s", name)
		}
	}
}

// cdpRecorder stands between a CDP client and the relay and keeps every
// message and discovery answer that passes, for a test to search.
type cdpRecorder struct {
	t     *testing.T
	relay string // http://host:port
	url   string // what the client connects to
	mu    sync.Mutex
	msgs  []string // guarded by mu
}

func newCDPRecorder(t *testing.T, relay string) *cdpRecorder {
	r := &cdpRecorder{t: t, relay: relay}
	hs := httptest.NewServer(r)
	t.Cleanup(hs.Close)
	r.url = hs.URL
	return r
}

func (r *cdpRecorder) keep(s string) {
	r.mu.Lock()
	r.msgs = append(r.msgs, s)
	r.mu.Unlock()
}

func (r *cdpRecorder) all() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.msgs...)
}

func (r *cdpRecorder) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	relayHost := strings.TrimPrefix(r.relay, "http://")
	if !websocket.IsWebSocketUpgrade(req) {
		resp, err := http.Get(r.relay + req.URL.RequestURI())
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		r.keep(string(b))
		// The sockets the answer names are the recorder's.
		b = []byte(strings.ReplaceAll(string(b), relayHost, req.Host))
		w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
		w.WriteHeader(resp.StatusCode)
		w.Write(b)
		return
	}
	up, _, err := websocket.DefaultDialer.Dial("ws://"+relayHost+req.URL.RequestURI(), nil)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer up.Close()
	u := websocket.Upgrader{CheckOrigin: func(*http.Request) bool { return true }}
	down, err := u.Upgrade(w, req, nil)
	if err != nil {
		return
	}
	defer down.Close()
	pump := func(from, to *websocket.Conn, done chan<- struct{}) {
		defer close(done)
		for {
			mt, b, err := from.ReadMessage()
			if err != nil {
				to.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
				return
			}
			r.keep(string(b))
			if to.WriteMessage(mt, b) != nil {
				return
			}
		}
	}
	d1, d2 := make(chan struct{}), make(chan struct{})
	go pump(down, up, d1)
	go pump(up, down, d2)
	select {
	case <-d1:
	case <-d2:
	}
}
