package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/app"
	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/internal/owneronly"
	"github.com/cdprelay/cdprelay/relay"
)

// TestInstancesKept: what the relay saves is what the next run restores,
// in a file its owner alone reads; a file that does not parse is an
// error that says what to do, not a silent fresh start.
func TestInstancesKept(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "state")
	if got, err := loadInstances(dir); err != nil || got != nil {
		t.Fatalf("nothing saved yet: %v %v", got, err)
	}
	want := []relay.SavedInstance{
		{ID: "0123456789ab", GUID: relay.NewGUID(), Tenant: "alice", Profile: "strict", Created: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Paired: true},
		{ID: "ba9876543210", GUID: relay.NewGUID(), Created: time.Date(2026, 1, 3, 3, 4, 5, 0, time.UTC)},
	}
	save := instanceSaver(dir)
	if err := save(want); err != nil {
		t.Fatal(err)
	}
	got, err := loadInstances(dir)
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("loaded %+v, %v", got, err)
	}
	if err := owneronly.Check(filepath.Join(dir, instancesFile)); err != nil {
		t.Error(err)
	}
	if err := save(nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := loadInstances(dir); len(got) != 0 {
		t.Errorf("after all were removed: %v", got)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, instancesFile+".*")); len(left) != 0 {
		t.Errorf("temporary files left: %v", left)
	}
	os.WriteFile(filepath.Join(dir, instancesFile), []byte("{not json"), 0o600)
	if _, err := loadInstances(dir); err == nil || !strings.Contains(err.Error(), "move it away") {
		t.Errorf("a broken file: %v", err)
	}
}

// TestConnectURLForATenant: connect-url with a tenant's pair token mints
// an instance of that tenant, through the relay's public URL.
func TestConnectURLForATenant(t *testing.T) {
	a, err := app.New(app.Config{
		Addr:      "127.0.0.1:0",
		PublicURL: "http://127.0.0.1:1/relay-1",
		File: app.File{Tokens: []ingress.Token{
			{Name: "alice-browser", SHA256: ingress.HashToken("tok-alice"), Scopes: []string{"pair", "extension"}, Tenant: "alice"},
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close(context.Background())
	hs := httptest.NewServer(a)
	defer hs.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	if err := printConnectURL(ctx, &out, mintRequest{Base: hs.URL + "/relay-1/", Token: "tok-alice"}); err != nil {
		t.Fatal(err)
	}
	s := out.String()
	if !strings.Contains(s, "of tenant alice") || !strings.Contains(s, "ws://127.0.0.1:1/relay-1/extension/") || !strings.Contains(s, "?token=") {
		t.Errorf("connect-url printed:\n%s", s)
	}
	if err := printConnectURL(ctx, &out, mintRequest{Base: hs.URL, Token: "tok-alice", Tenant: "bob"}); err == nil || !strings.Contains(err.Error(), "its own tenant only") {
		t.Errorf("a tenant's token minting for another: %v", err)
	}
}
