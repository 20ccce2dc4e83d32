package denylist_test

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cdprelay/cdprelay/denylist"
)

func Example() {
	// A policy file, as JSON (the YAML keys are the same).
	file := []byte(`{
	  "allowed_hosts": [".example.com", "example.org"],
	  "blocked_hosts": ["admin.example.com"],
	  "block_private_addresses": true,
	  "deny_methods": ["DOM.setFileInputFiles"],
	  "profiles": {
	    "intranet": {"allowed_hosts": [".corp.example"], "block_private_addresses": false}
	  }
	}`)
	var cfg struct {
		denylist.Config
		Profiles map[string]denylist.Profile `json:"profiles"`
	}
	if err := json.Unmarshal(file, &cfg); err != nil {
		panic(err)
	}
	policy, err := denylist.Compile(cfg.Config, cfg.Profiles)
	if err != nil {
		panic(err)
	}

	e := policy.For("")
	for _, cmd := range []struct{ method, params string }{
		{"Runtime.evaluate", `{"expression":"1+1"}`},
		{"Network.getAllCookies", `{}`},
		{"Browser.setDownloadBehavior", `{"behavior":"allow"}`},
		{"Page.navigate", `{"url":"https://www.example.com/"}`},
		{"Page.navigate", `{"url":"https://example.com@evil.net/"}`},
		{"Page.navigate", `{"url":"file:///etc/passwd"}`},
	} {
		d := e.Method(cmd.method, []byte(cmd.params))
		fmt.Println(strings.TrimSpace(fmt.Sprintf("%-28s %-12s %s", cmd.method, d.Verdict, d.Reason)))
	}
	fmt.Println(e.URL("http://2130706433/").Message())
	fmt.Println(policy.For("intranet").URL("http://wiki.corp.example/").Verdict)
	// Output:
	// Runtime.evaluate             allow
	// Network.getAllCookies        deny         Network.getAllCookies reads the person's cookies
	// Browser.setDownloadBehavior  allow
	// Page.navigate                allow
	// Page.navigate                deny         host evil.net is not in the allowed hosts
	// Page.navigate                deny         file: URLs are not allowed (scheme fence)
	// Denied by cdprelay policy: host 127.0.0.1 is a loopback address and private addresses are blocked
	// allow
}
