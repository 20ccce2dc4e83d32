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
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/relay"
)

// connectURL asks a running relay for a fresh instance and prints the links
// that connect an extension to it: the stock Playwright extension's, so that
// a person who has it needs nothing else, and ours.
func connectURL(args []string) int {
	fs := flag.NewFlagSet("connect-url", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:9222", "address of the running relay")
	profile := fs.String("profile", "", "the policy profile of the new instance (from the relay's config); default: the global policy")
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
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := printConnectURL(ctx, os.Stdout, *addr, *profile); err != nil {
		fmt.Fprintln(os.Stderr, "cdprelay connect-url:", err)
		return 1
	}
	return 0
}

func printConnectURL(ctx context.Context, w io.Writer, addr, profile string) error {
	u := "http://" + addr + "/v1/instances"
	if profile != "" {
		u += "?profile=" + url.QueryEscape(profile)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, nil)
	if err != nil {
		return err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("is the relay running on %s? %w", addr, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		return fmt.Errorf("the relay refused a new instance: %s: %s", resp.Status, b)
	}
	var info relay.NewInstanceInfo
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil {
		return fmt.Errorf("the relay's answer: %w", err)
	}
	_, err = fmt.Fprintf(w, `A new instance %s is waiting for its extension (for a minute).
Open one of these links in the Chrome whose tabs you want to share:
  Playwright extension (Chrome Web Store): %s
  cdprelay extension:                      %s
Then connect a client to %s (or %s).
`, info.InstanceID, info.ConnectURL, ourConnectURL(info.ExtensionURL), info.HTTPURL, info.CDPURL)
	return err
}

// ourConnectURL opens our extension's connect page on extURL.
func ourConnectURL(extURL string) string {
	return "chrome-extension://" + extension.ID + "/connect.html?relay=" + url.QueryEscape(extURL)
}
