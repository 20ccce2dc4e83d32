package app

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"sigs.k8s.io/yaml"

	"github.com/cdprelay/cdprelay/secrets"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/ingress"
)

// File is the config file (--config), YAML or JSON (JSON is YAML). Every
// field is optional; docs/CONFIG.md documents them with an example.
type File struct {
	// Policy is the global policy: method rules and the URL fence.
	Policy denylist.Config `json:"policy"`
	// Profiles are named policies for instances; a non-empty list in a
	// profile replaces the global one.
	Profiles map[string]denylist.Profile `json:"profiles"`
	// DefaultProfile is the profile of the default instance; empty: the
	// global policy. Minted instances name theirs (connect-url --profile).
	DefaultProfile string `json:"default_profile"`
	// Audit configures the audit log.
	Audit AuditConfig `json:"audit"`
	// Tokens, when not empty, are required on every request but the
	// live-view page shell, loopback included.
	Tokens []ingress.Token `json:"tokens"`
	// Hosts are the names the relay answers to besides localhost,
	// 127.0.0.0/8 and ::1.
	Hosts []string `json:"hosts"`
	// Origins relaxes the Origin rules of some endpoints.
	Origins OriginsConfig `json:"origins"`
	// TLS serves HTTPS and WSS; Config.TLSCert and TLSKey override it.
	TLS TLSConfig `json:"tls"`
	// Secrets are values automation may type by reference
	// ({{secret:NAME}}), on their own origins only, and never read.
	Secrets []secrets.Config `json:"secrets"`
	// RedactHeaders are header names, besides Cookie, Set-Cookie,
	// Authorization and Proxy-Authorization, whose values never reach a
	// client (an API key header, say). Read at start.
	RedactHeaders []string `json:"redact_headers"`
	// Dialogs and Approvals are the person's: how long a JavaScript
	// dialog, and a command held for approval, wait for an answer. Read at
	// start.
	Dialogs   TimeoutConfig `json:"dialogs"`
	Approvals TimeoutConfig `json:"approvals"`
	// Downloads says where the relay may write the files of a client's
	// downloads (Browser.setDownloadBehavior's downloadPath). Read at
	// start.
	Downloads DownloadsConfig `json:"downloads"`
	// Scripts bounds the automation's script in the person's tabs
	// (relay.Config.ScriptTimeout). Read at start.
	Scripts TimeoutConfig `json:"scripts"`
	// Tenants is what the operator says of the tenants the tokens name:
	// how many instances each may keep, their policy profiles, and
	// whether metrics count their instances.
	Tenants TenantsConfig `json:"tenants"`
}

// DownloadsConfig is the file's downloads section.
type DownloadsConfig struct {
	// Dirs are the folders a client's download folder must be in. Absent:
	// the OS temp dir; [] (given, empty): no download is copied.
	Dirs []string `json:"dirs"`
	// MaxBytes is the largest file copied; 0: 1 GiB.
	MaxBytes int64 `json:"max_bytes"`
}

// TimeoutConfig is a wait with a default.
type TimeoutConfig struct {
	// Timeout is a Go duration ("30s", "2m"). Default: the relay's.
	Timeout Duration `json:"timeout"`
}

// Duration is a time.Duration written as Go writes one: "30s", "1m30s".
type Duration time.Duration

// UnmarshalJSON reads "30s" (or a number of seconds).
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var secs float64
		if json.Unmarshal(b, &secs) != nil {
			return errors.New("a duration is a string such as \"30s\"")
		}
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

// MarshalJSON writes the duration as "30s".
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// OriginsConfig relaxes the Origin rules.
type OriginsConfig struct {
	// CDP are the browser origins that may use the CDP endpoints.
	// Default: none.
	CDP []string `json:"cdp"`
	// ExtensionIDs are the extensions that may pair; set, it replaces the
	// default (ours and Playwright's).
	ExtensionIDs []string `json:"extension_ids"`
}

// TLSConfig names the certificate served.
type TLSConfig struct {
	// Cert and Key are PEM files, re-read on reload.
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

// AuditConfig configures the audit log.
type AuditConfig struct {
	// RingSize is how many records the in-memory ring keeps. Default 4096.
	RingSize int `json:"ring_size"`
	// File, when set, is an append-only JSONL file that keeps every record.
	File string `json:"file"`
}

// ReadFile reads and decodes the config file at path, strictly: an
// unknown field is an error, not a setting silently ignored. An empty
// path is the empty file. It does not validate; see Validate.
func ReadFile(path string) (*File, error) {
	f := &File{}
	if path == "" {
		return f, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	if err := yaml.UnmarshalStrict(b, f); err != nil {
		return nil, fmt.Errorf("config %s: %w", path, err)
	}
	return f, nil
}

// Validate checks everything in f that New and Reload would refuse.
func (f *File) Validate() error {
	if f.Audit.RingSize < 0 {
		return errors.New("config: audit.ring_size must not be negative")
	}
	if (f.TLS.Cert == "") != (f.TLS.Key == "") {
		return errors.New("config: tls needs both cert and key")
	}
	if err := f.ingress(nil, nil).Validate(); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	if f.Dialogs.Timeout < 0 || f.Approvals.Timeout < 0 || f.Scripts.Timeout < 0 {
		return errors.New("config: dialogs.timeout, approvals.timeout and scripts.timeout must not be negative")
	}
	if f.Downloads.MaxBytes < 0 {
		return errors.New("config: downloads.max_bytes must not be negative")
	}
	for _, d := range f.Downloads.Dirs {
		if !filepath.IsAbs(d) {
			return fmt.Errorf("config: downloads.dirs: %q is not an absolute path", d)
		}
	}
	if _, err := secrets.New(f.Secrets); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	p, err := f.compilePolicy()
	if err != nil {
		return err
	}
	if err := f.validateTenants(p.Profiles()); err != nil {
		return fmt.Errorf("config: %w", err)
	}
	return nil
}

// ingress is the file's ingress rules with what the process adds: the
// launched browser's token, the name the listen address names. The
// process's tokens join only a file's tokens: alone they would turn the
// zero-config relay into one that wants a token of every client.
func (f *File) ingress(hosts []string, tokens []ingress.Token, selfOrigins ...string) ingress.Config {
	all := f.Tokens
	if len(all) > 0 {
		all = append(slices.Clip(all), tokens...)
	}
	return ingress.Config{
		Tokens:       all,
		Hosts:        append(slices.Clip(f.Hosts), hosts...),
		CDPOrigins:   f.Origins.CDP,
		ExtensionIDs: f.Origins.ExtensionIDs,
		SelfOrigins:  selfOrigins,
	}
}

// compilePolicy compiles the policy part of f.
func (f *File) compilePolicy() (*denylist.Policy, error) {
	p, err := denylist.Compile(f.Policy, f.Profiles)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if f.DefaultProfile != "" && !slices.Contains(p.Profiles(), f.DefaultProfile) {
		return nil, fmt.Errorf("default_profile %q is not one of the profiles", f.DefaultProfile)
	}
	return p, nil
}

// Explain says what a valid file does: its policy, its audit log and who
// may reach the relay under it.
func (f *File) Explain() (string, error) {
	p, err := f.compilePolicy()
	if err != nil {
		return "", err
	}
	var b strings.Builder
	b.WriteString(p.Explain())
	if f.Audit.File != "" {
		size := f.Audit.RingSize
		if size == 0 {
			size = audit.DefaultCapacity
		}
		fmt.Fprintf(&b, "\naudit: ring of %d records, everything also appended to %s\n", size, f.Audit.File)
	}
	if len(f.Secrets) > 0 {
		st, err := secrets.New(f.Secrets)
		if err != nil {
			return "", err
		}
		b.WriteString("\n")
		b.WriteString(st.Explain())
	}
	b.WriteString("\n")
	b.WriteString(f.explainIngress())
	return b.String(), nil
}

// explainIngress says who may reach the relay under f.
func (f *File) explainIngress() string {
	var b strings.Builder
	if len(f.Tokens) == 0 {
		b.WriteString("ingress: no tokens; loopback peers may drive tabs, watch and read status, others may only load the live-view page (a non-loopback --addr is refused)\n")
		b.WriteString("  the person's actions (Stop, Resume, approvals, dialogs, taking over a tab, removing an instance) need the person key: the live-view link serve prints carries it\n")
	} else {
		fmt.Fprintf(&b, "ingress: %d token(s), required on every request but the live-view page, loopback included\n", len(f.Tokens))
		for _, t := range f.Tokens {
			set, _ := ingress.ParseScopes(t.Scopes)
			whose := "the operator's: every instance"
			if t.Tenant != "" {
				whose = "tenant " + t.Tenant + "'s instances only"
			}
			fmt.Fprintf(&b, "  %s: %s (%s)\n", t.Name, set, whose)
			if set.Has(ingress.ScopeCDP) && set.HasAny(ingress.ScopeSet(ingress.ScopeViewerInteractive|ingress.ScopeAdmin|ingress.ScopePair)) {
				fmt.Fprintf(&b, "    %s carries cdp: it never acts as the person (no Stop or Resume, approvals, dialogs, taking over, removing an instance); give those to a token without cdp\n", t.Name)
			}
		}
		b.WriteString("  the person key (the live-view link serve prints) acts as the person too, and drives nothing\n")
		if ts := f.tenants(); len(ts) > 0 {
			rules := f.tenantRules()
			fmt.Fprintf(&b, "  tenants: %s; at most %d instances each", strings.Join(ts, ", "), rules.MaxInstances)
			if f.Tenants.InstancesGauge {
				b.WriteString("; counted in cdprelay_tenant_instances")
			}
			b.WriteString("\n")
			for _, t := range ts {
				if p := f.Tenants.Profiles[t]; p != "" {
					fmt.Fprintf(&b, "    %s's instances: profile %s\n", t, p)
				}
			}
		}
	}
	b.WriteString("  Host: localhost, 127.0.0.0/8, ::1")
	for _, h := range f.Hosts {
		b.WriteString(", " + h)
	}
	b.WriteString("\n")
	if len(f.Origins.CDP) > 0 {
		fmt.Fprintf(&b, "  CDP endpoints also accept Origin %s\n", strings.Join(f.Origins.CDP, ", "))
	}
	ids := f.Origins.ExtensionIDs
	if ids == nil {
		ids = ingress.DefaultExtensionIDs
	}
	fmt.Fprintf(&b, "  extensions that may pair: %s\n", strings.Join(ids, ", "))
	if f.TLS.Cert != "" {
		fmt.Fprintf(&b, "  TLS: %s, %s (not opened here; serve opens them)\n", f.TLS.Cert, f.TLS.Key)
	}
	return b.String()
}
