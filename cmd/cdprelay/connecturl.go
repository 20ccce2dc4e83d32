package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/relay"
)

// connectURL asks a running relay for a fresh instance and prints the links
// that connect an extension to it: the stock Playwright extension's, so that
// a person who has it needs nothing else, and ours.
func connectURL(args []string) int {
	fs := flag.NewFlagSet("connect-url", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9222", "address of the running relay, on this machine")
	base := fs.String("url", "", "base URL of the relay instead of --addr: a remote relay, or one node of a fleet through its front door (https://relay.example.com/relay-1)")
	tokenFile := fs.String("token-file", "", "a file holding a token with scope pair or admin (default: $CDPRELAY_TOKEN); a tenant's token mints an instance of its tenant")
	tenant := fs.String("tenant", "", "with the operator's token: the tenant the new instance is for")
	profile := fs.String("profile", "", "with the operator's token: the policy profile of the new instance (from the relay's config); default: the global policy, or the tenant's")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(os.Stderr, "cdprelay connect-url: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	token := os.Getenv("CDPRELAY_TOKEN")
	if *tokenFile != "" {
		b, err := os.ReadFile(*tokenFile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "cdprelay connect-url:", err)
			return 1
		}
		token = strings.TrimSpace(string(b))
	}
	u := *base
	if u == "" {
		u = "http://" + *addr
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	req := mintRequest{Base: u, Token: token, Tenant: *tenant, Profile: *profile}
	if err := printConnectURL(ctx, os.Stdout, req); err != nil {
		fmt.Fprintln(os.Stderr, "cdprelay connect-url:", err)
		return 1
	}
	return 0
}

// mintRequest is what connect-url asks a relay for.
type mintRequest struct {
	Base            string // the relay's base URL, path prefix included
	Token           string // "": none (the zero-config relay)
	Tenant, Profile string // the operator's choices
}

func printConnectURL(ctx context.Context, w io.Writer, m mintRequest) error {
	q := url.Values{}
	if m.Profile != "" {
		q.Set("profile", m.Profile)
	}
	if m.Tenant != "" {
		q.Set("tenant", m.Tenant)
	}
	u := strings.TrimRight(m.Base, "/") + "/v1/instances"
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	if m.Token != "" {
		req.Header.Set("Authorization", "Bearer "+m.Token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("is the relay running at %s? %w", m.Base, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("the relay refused a new instance: %s: %s", resp.Status, strings.TrimSpace(string(b)))
	}
	var info relay.NewInstanceInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return fmt.Errorf("the relay's answer: %w", err)
	}
	whose := ""
	if info.Tenant != "" {
		whose = " of tenant " + info.Tenant
	}
	tokenNote := ""
	if m.Token != "" {
		// The relay keeps hashes only: it cannot put the token in.
		tokenNote = "\nThe relay wants tokens: add ?token=<your token with scope extension> to the extension URL\n(" + info.ExtensionURL + "?token=…), and give clients a token with scope cdp.\n"
	}
	_, err = fmt.Fprintf(w, `A new instance %s%s is waiting for its extension (for a minute).
Open one of these links in the Chrome whose tabs you want to share:
  Playwright extension (Chrome Web Store): %s
  cdprelay extension:                      %s
Then connect a client to %s (or %s).
%s`, info.InstanceID, whose, info.ConnectURL, ourConnectURL(info.ExtensionURL), info.HTTPURL, info.CDPURL, tokenNote)
	return err
}

// ourConnectURL opens our extension's connect page on extURL.
func ourConnectURL(extURL string) string {
	return "chrome-extension://" + extension.ID + "/connect.html?relay=" + url.QueryEscape(extURL)
}
