package main

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/ingress"
)

// fileConfig is the --config file, YAML or JSON (JSON is YAML). Every
// field is optional; see docs/CONFIG.md for an example.
type fileConfig struct {
	// Policy is the global policy: method rules and the URL fence.
	Policy denylist.Config `json:"policy"`
	// Profiles are named policies for instances; a non-empty list in a
	// profile replaces the global one.
	Profiles map[string]denylist.Profile `json:"profiles"`
	// DefaultProfile is the profile of the default instance; empty: the
	// global policy. Minted instances name theirs (connect-url --profile).
	DefaultProfile string `json:"default_profile"`
	// Audit configures the audit log.
	Audit auditConfig `json:"audit"`
	// Tokens, when not empty, are required on every request but the
	// live-view page shell, loopback included.
	Tokens []ingress.Token `json:"tokens"`
	// Hosts are the names the relay answers to besides localhost,
	// 127.0.0.0/8 and ::1.
	Hosts []string `json:"hosts"`
	// Origins relaxes the Origin rules of some endpoints.
	Origins originsConfig `json:"origins"`
	// TLS serves HTTPS and WSS; --tls-cert and --tls-key override it.
	TLS tlsConfig `json:"tls"`
}

type originsConfig struct {
	// CDP are the browser origins that may use the CDP endpoints.
	// Default: none.
	CDP []string `json:"cdp"`
	// ExtensionIDs are the extensions that may pair; set, it replaces the
	// default (ours and Playwright's).
	ExtensionIDs []string `json:"extension_ids"`
}

type tlsConfig struct {
	// Cert and Key are PEM files, re-read on SIGHUP.
	Cert string `json:"cert"`
	Key  string `json:"key"`
}

type auditConfig struct {
	// RingSize is how many records the in-memory ring keeps. Default 4096.
	RingSize int `json:"ring_size"`
	// File, when set, is an append-only JSONL file that keeps every record.
	File string `json:"file"`
}

// policyFlags are the command-line shortcuts for common policy settings;
// they add to what the config file says.
type policyFlags struct {
	allowedDomains, blockedDomains, denyMethods string
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// loadConfig reads path (empty: no file) and applies the flags.
func loadConfig(path string, pf policyFlags) (*fileConfig, error) {
	cfg := &fileConfig{}
	if path != "" {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("config: %w", err)
		}
		if err := yaml.UnmarshalStrict(b, cfg); err != nil {
			return nil, fmt.Errorf("config %s: %w", path, err)
		}
	}
	cfg.Policy.AllowedHosts = append(cfg.Policy.AllowedHosts, splitList(pf.allowedDomains)...)
	cfg.Policy.BlockedHosts = append(cfg.Policy.BlockedHosts, splitList(pf.blockedDomains)...)
	cfg.Policy.DenyMethods = append(cfg.Policy.DenyMethods, splitList(pf.denyMethods)...)
	if cfg.Audit.RingSize < 0 {
		return nil, errors.New("config: audit.ring_size must not be negative")
	}
	if (cfg.TLS.Cert == "") != (cfg.TLS.Key == "") {
		return nil, errors.New("config: tls needs both cert and key")
	}
	if err := cfg.ingress(ingressExtra{}).Validate(); err != nil {
		return nil, fmt.Errorf("config: %w", err)
	}
	return cfg, nil
}

// ingress is the file's ingress rules with what the process adds: the
// launched browser's token, the name --addr listens on. The process's
// tokens join only a file's tokens: alone they would turn the zero-config
// relay into one that wants a token of every client.
func (cfg *fileConfig) ingress(extra ingressExtra) ingress.Config {
	tokens := cfg.Tokens
	if len(tokens) > 0 {
		tokens = append(slices.Clip(tokens), extra.tokens...)
	}
	return ingress.Config{
		Tokens:       tokens,
		Hosts:        append(slices.Clip(cfg.Hosts), extra.hosts...),
		CDPOrigins:   cfg.Origins.CDP,
		ExtensionIDs: cfg.Origins.ExtensionIDs,
	}
}

// compilePolicy validates the policy part of cfg.
func (cfg *fileConfig) compilePolicy() (*denylist.Policy, error) {
	p, err := denylist.Compile(cfg.Policy, cfg.Profiles)
	if err != nil {
		return nil, fmt.Errorf("policy: %w", err)
	}
	if cfg.DefaultProfile != "" && !slices.Contains(p.Profiles(), cfg.DefaultProfile) {
		return nil, fmt.Errorf("default_profile %q is not one of the profiles", cfg.DefaultProfile)
	}
	return p, nil
}

// checkConfig is `cdprelay check-config FILE`: it validates the file and
// explains the policy it describes.
func checkConfig(args []string) int {
	if len(args) != 1 {
		fmt.Fprintln(os.Stderr, "usage: cdprelay check-config FILE")
		return 2
	}
	cfg, err := loadConfig(args[0], policyFlags{})
	if err == nil {
		var p *denylist.Policy
		if p, err = cfg.compilePolicy(); err == nil {
			fmt.Printf("%s: OK\n\n%s", args[0], p.Explain())
			if cfg.Audit.File != "" {
				size := cfg.Audit.RingSize
				if size == 0 {
					size = audit.DefaultCapacity
				}
				fmt.Printf("\naudit: ring of %d records, everything also appended to %s\n", size, cfg.Audit.File)
			}
			fmt.Printf("\n%s", cfg.explainIngress())
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", args[0], err)
	return 1
}
