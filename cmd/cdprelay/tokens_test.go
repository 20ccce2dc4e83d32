package main

import (
	"bytes"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/internal/ingress"
)

func TestHashTokenCommand(t *testing.T) {
	tests := []struct {
		in       string
		code     int
		out, err string
	}{
		{"cdpr_0123456789abcdefghijklmnopqrstuvwxyz\n", 0, ingress.HashToken("cdpr_0123456789abcdefghijklmnopqrstuvwxyz") + "\n", ""},
		{"cdpr_0123456789abcdefghijklmnopqrstuvwxyz\r\n", 0, ingress.HashToken("cdpr_0123456789abcdefghijklmnopqrstuvwxyz") + "\n", ""},
		{"short", 0, ingress.HashToken("short") + "\n", "short"},
		{"", 1, "", "empty"},
		{"\n", 1, "", "empty"},
		{"two words\n", 1, "", "escaping"},
		{"two\nlines\n", 1, "", "escaping"},
	}
	for _, tt := range tests {
		var out, errb bytes.Buffer
		code := hashToken(nil, strings.NewReader(tt.in), &out, &errb)
		if code != tt.code || out.String() != tt.out || !strings.Contains(errb.String(), tt.err) {
			t.Errorf("hash-token < %q = %d %q %q", tt.in, code, out.String(), errb.String())
		}
	}
	if code := hashToken([]string{"secret"}, strings.NewReader(""), &bytes.Buffer{}, &bytes.Buffer{}); code != 2 {
		t.Errorf("a token as an argument (it would land in shell history): %d", code)
	}
}

func TestGenTokenCommand(t *testing.T) {
	var out, errb bytes.Buffer
	if code := genToken([]string{"-name", "ci", "-scopes", "cdp,viewer-interactive"}, &out, &errb); code != 0 {
		t.Fatalf("gen-token: %d %s", code, errb.String())
	}
	lines := strings.SplitN(out.String(), "\n", 2)
	tok, ok := strings.CutPrefix(lines[0], "token: ")
	if !ok || ingress.CheckTokenText(tok) != "" {
		t.Fatalf("first line %q", lines[0])
	}
	// The entry it prints, pasted under tokens:, grants the token.
	p := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(p, []byte("tokens:\n"+lines[1]), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := loadConfig(p, policyFlags{})
	if err != nil {
		t.Fatalf("the printed entry: %v\n%s", err, out.String())
	}
	if len(cfg.Tokens) != 1 || cfg.Tokens[0].Name != "ci" || cfg.Tokens[0].SHA256 != ingress.HashToken(tok) || strings.Join(cfg.Tokens[0].Scopes, ",") != "cdp,viewer-interactive" {
		t.Errorf("entry %+v", cfg.Tokens)
	}
	if code := genToken([]string{"-scopes", "root"}, &bytes.Buffer{}, &errb); code != 2 || !strings.Contains(errb.String(), "unknown scope") {
		t.Errorf("bad scope: %d %s", code, errb.String())
	}
}

func TestLocalAddr(t *testing.T) {
	for in, want := range map[string]string{"0.0.0.0:9222": "127.0.0.1:9222", "[::]:80": "127.0.0.1:80", "192.0.2.1:1": "192.0.2.1:1", "[::1]:2": "[::1]:2"} {
		if got := localAddr(fakeAddr(in)); got != want {
			t.Errorf("localAddr(%s) = %s, want %s", in, got, want)
		}
	}
	if got := withToken("ws://h/extension/g", "t"); got != "ws://h/extension/g?token=t" {
		t.Errorf("withToken = %s", got)
	}
	if got := withToken("ws://h/x?a=1", "t"); got != "ws://h/x?a=1&token=t" {
		t.Errorf("withToken = %s", got)
	}
}

type fakeAddr string

func (a fakeAddr) Network() string { return "tcp" }
func (a fakeAddr) String() string  { return string(a) }

var _ net.Addr = fakeAddr("")
