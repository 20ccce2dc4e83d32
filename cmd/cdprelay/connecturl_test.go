package main

import (
	"bytes"
	"context"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/relay"
)

func TestPrintConnectURL(t *testing.T) {
	srv, err := relay.New(relay.Config{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	defer srv.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var out bytes.Buffer
	addr := strings.TrimPrefix(hs.URL, "http://")
	if err := printConnectURL(ctx, &out, mintRequest{Base: "http://" + addr}); err != nil {
		t.Fatal(err)
	}
	var stock, ours string
	for _, line := range strings.Split(out.String(), "\n") {
		f := strings.Fields(line)
		switch {
		case strings.HasPrefix(line, "  Playwright extension"):
			stock = f[len(f)-1]
		case strings.HasPrefix(line, "  cdprelay extension"):
			ours = f[len(f)-1]
		}
	}
	su, err := url.Parse(stock)
	if err != nil || su.Host != relay.StockExtensionID || su.Query().Get("protocolVersion") != "2" {
		t.Fatalf("stock link %q in:\n%s", stock, out.String())
	}
	ext := su.Query().Get("mcpRelayUrl")
	if !strings.HasPrefix(ext, "ws://"+addr+"/extension/") {
		t.Fatalf("extension URL %q", ext)
	}
	// A fresh instance: not the default one.
	if strings.HasSuffix(ext, srv.Default().GUID()) {
		t.Error("the link is the default instance's")
	}
	ou, err := url.Parse(ours)
	if err != nil || ou.Host != extension.ID || ou.Query().Get("relay") != ext {
		t.Fatalf("our link %q", ours)
	}
	if len(srv.Instances()) != 2 {
		t.Errorf("%d instances", len(srv.Instances()))
	}
}
