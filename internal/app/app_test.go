package app

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay"
)

func get(t *testing.T, method, url string) (int, string, http.Header) {
	t.Helper()
	return getWith(t, method, url, nil)
}

func getWith(t *testing.T, method, url string, h http.Header) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(method, url, nil)
	for k, v := range h {
		req.Header[k] = v
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

// TestRoutes: every endpoint of the product is reached through the one
// assembly, each served by its part.
func TestRoutes(t *testing.T) {
	s := serve(t, Config{Addr: "127.0.0.1:0"})
	base := "http://" + s.addr
	person := http.Header{"Authorization": {"Bearer " + s.app.PersonKey()}}
	tests := []struct {
		method, path string
		code         int
		body         string // part of the body
		h            http.Header
	}{
		{"GET", "/json/version", 200, `"webSocketDebuggerUrl"`, nil},
		{"GET", "/json/list", 200, `[]`, nil},
		{"GET", "/json/protocol", 200, `"domains"`, nil},
		{"GET", "/cdp/" + s.app.Relay().Default().GUID() + "/json/version", 200, `"webSocketDebuggerUrl"`, nil},
		{"GET", "/cdp/" + relay.NewGUID() + "/json/version", 404, "404 page not found", nil},
		{"GET", "/json/new", 404, "404 page not found", nil},
		{"GET", "/metrics", 200, "cdprelay_ingress_requests_total", nil},
		{"GET", "/v1/audit", 200, `"records"`, nil},
		{"GET", "/v1/instances", 200, `"instances"`, nil},
		{"POST", "/v1/instances", 201, `"extensionUrl"`, nil},
		{"GET", "/", 200, "<html", nil},
		{"GET", "/app.js", 200, "", nil},
		{"GET", "/viewer", 400, "WebSocket", nil},
		{"GET", "/nothing-here", 404, "", nil},
		{"POST", "/v1/audit", 405, "", nil},
		{"POST", "/v1/instances/" + s.app.Relay().Default().ID() + "/stop", 403, "the person's action", nil},
		{"POST", "/v1/instances/" + s.app.Relay().Default().ID() + "/stop", 200, `"stopped":true`, person},
		{"POST", "/v1/instances/" + s.app.Relay().Default().ID() + "/stop", 409, "already stopped", person},
		{"POST", "/v1/instances/" + s.app.Relay().Default().ID() + "/resume", 403, "the person's action", nil},
		{"POST", "/v1/instances/" + s.app.Relay().Default().ID() + "/resume", 200, `"stopped":false`, person},
		{"POST", "/v1/instances/" + s.app.Relay().Default().ID() + "/resume", 409, "not stopped", person},
		{"POST", "/v1/instances/nosuchid/stop", 404, "404 page not found", person},
		{"GET", "/v1/instances/" + s.app.Relay().Default().ID() + "/stop", 405, "takes POST", person},
		{"DELETE", "/v1/instances/" + s.app.Relay().Default().ID(), 403, "the person's action", nil},
		{"DELETE", "/v1/instances/" + s.app.Relay().Default().ID(), 409, "default", person},
		{"PUT", "/v1/instances/" + s.app.Relay().Default().ID(), 405, "use GET or DELETE", nil},
	}
	for _, tt := range tests {
		code, body, _ := getWith(t, tt.method, base+tt.path, tt.h)
		if code != tt.code || !strings.Contains(body, tt.body) {
			t.Errorf("%s %s: %d %.120q, want %d with %q", tt.method, tt.path, code, body, tt.code, tt.body)
		}
	}
}

// TestRefusalCountersStart: every rule's refusal counter exists from the
// start, the relay's own rules with the policy's.
func TestRefusalCountersStart(t *testing.T) {
	a, err := New(Config{Addr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	pol, _ := (&File{}).compilePolicy()
	want := append(pol.Rules(), relay.RelayRules()...)
	if n := testutil.CollectAndCount(a.Registry(), "cdprelay_policy_refusals_total"); n != 2*len(want) {
		t.Errorf("%d refusal series, want %d (deny and ack-and-drop for each of %d rules)", n, 2*len(want), len(want))
	}
	problems, err := testutil.GatherAndLint(a.Registry())
	if err != nil || len(problems) > 0 {
		t.Errorf("lint: %v %v", err, problems)
	}
}

// TestViewerFenceByProfile: a viewer's navigate is judged by the policy
// profile of the instance it navigates, not by the global policy.
func TestViewerFenceByProfile(t *testing.T) {
	f := File{
		Policy:   denylist.Config{BlockedHosts: []string{"blocked.example"}},
		Profiles: map[string]denylist.Profile{"narrow": {AllowedHosts: []string{"example.com"}}},
	}
	a, err := New(Config{Addr: "127.0.0.1:0", File: f})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	narrow, err := a.Relay().NewInstanceWithProfile("narrow")
	if err != nil {
		t.Fatal(err)
	}
	def := a.Relay().Default().ID()
	for _, tt := range []struct {
		instance, url string
		ok            bool
	}{
		{def, "https://example.org/", true},
		{def, "https://blocked.example/", false},
		{narrow.ID(), "https://example.com/", true},
		{narrow.ID(), "https://example.org/", false},
		{"no-such-instance", "https://example.com/", false},
	} {
		if ok, why := a.urlFence(tt.instance, tt.url); ok != tt.ok || !ok && why == "" {
			t.Errorf("urlFence(%s, %s) = %v %q, want %v", tt.instance, tt.url, ok, why, tt.ok)
		}
	}
}

// TestReloadAudited: a reload, taken or refused, is audited and logged,
// and a taken one is the policy in force for the next command.
func TestReloadAudited(t *testing.T) {
	s := serve(t, Config{Addr: "127.0.0.1:0"})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	guid := s.app.Relay().Default().GUID()
	ext, err := fakeext.Dial(ctx, "ws://"+s.addr+"/extension/"+guid, fakeext.Options{
		Origin: "chrome-extension://" + extension.ID,
		Tabs:   []fakeext.Tab{{URL: "https://example.com/", Title: "Example"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer ext.Close()
	if err := s.app.Relay().Default().WaitReady(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := cdptest.Dial(ctx, "ws://"+s.addr+"/devtools/browser/"+guid, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Call(ctx, "", "Custom.method", nil); err != nil && strings.Contains(err.Error(), "policy") {
		t.Fatalf("before the reload: %v", err)
	}
	if err := s.app.Reload(Config{File: File{Policy: denylist.Config{DenyMethods: []string{"Custom.*"}}}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(ctx, "", "Custom.method", nil); err == nil || !strings.Contains(err.Error(), "Denied by cdprelay policy") {
		t.Errorf("after the reload: %v", err)
	}
	if err := s.app.Reload(Config{File: File{Policy: denylist.Config{DenyMethods: []string{"["}}}}); err == nil {
		t.Error("a bad pattern was accepted")
	}
	s.app.ReloadFailed(io.ErrUnexpectedEOF)
	recs, _, _ := s.app.Audit().Ring().Query(audit.Filter{Kind: audit.KindPolicyReload})
	var outcomes []string
	for _, r := range recs {
		outcomes = append(outcomes, string(r.Outcome))
	}
	if strings.Join(outcomes, ",") != "ok,error,error" {
		t.Errorf("reload records %v", outcomes)
	}
	// The relay records a refusal beside answering it: wait for it.
	var denied []audit.Record
	for start := time.Now(); len(denied) == 0 && time.Since(start) < 5*time.Second; time.Sleep(10 * time.Millisecond) {
		all, _, _ := s.app.Audit().Ring().Query(audit.Filter{})
		for _, r := range all {
			if r.Outcome == audit.OutcomeDenied && r.Method == "Custom.method" {
				denied = append(denied, r)
			}
		}
	}
	if len(denied) != 1 || !strings.HasPrefix(denied[0].Detail, "rule ") {
		b, _ := json.Marshal(denied)
		t.Errorf("the denial's record: %s", b)
	}
}
