package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/app"
)

// policyFlags are the command-line shortcuts for common policy settings;
// they add to what the config file says.
type policyFlags struct {
	allowedDomains, blockedDomains, denyMethods string
	blindDomains, readOnlyDomains, askDomains   string
	uploadsDir                                  string
	// downloadDirs adds to downloads.dirs; given, the OS temp dir is no
	// longer one by default.
	downloadDirs string
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

// loadConfig reads path (empty: no file), applies the flags and validates
// the result.
func loadConfig(path string, pf policyFlags) (*app.File, error) {
	cfg, err := app.ReadFile(path)
	if err != nil {
		return nil, err
	}
	cfg.Policy.AllowedHosts = append(cfg.Policy.AllowedHosts, splitList(pf.allowedDomains)...)
	cfg.Policy.BlockedHosts = append(cfg.Policy.BlockedHosts, splitList(pf.blockedDomains)...)
	cfg.Policy.DenyMethods = append(cfg.Policy.DenyMethods, splitList(pf.denyMethods)...)
	if hosts := splitList(pf.blindDomains); len(hosts) > 0 {
		cfg.Policy.Tiers = append(cfg.Policy.Tiers, denylist.TierRule{Hosts: hosts, Tier: denylist.TierBlind})
	}
	if hosts := splitList(pf.readOnlyDomains); len(hosts) > 0 {
		cfg.Policy.Tiers = append(cfg.Policy.Tiers, denylist.TierRule{Hosts: hosts, Tier: denylist.TierReadOnly})
	}
	cfg.Policy.AskDomains = append(cfg.Policy.AskDomains, splitList(pf.askDomains)...)
	cfg.Policy.UploadsDir = append(cfg.Policy.UploadsDir, splitList(pf.uploadsDir)...)
	cfg.Downloads.Dirs = append(cfg.Downloads.Dirs, splitList(pf.downloadDirs)...)
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	return cfg, nil
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
		var text string
		if text, err = cfg.Explain(); err == nil {
			fmt.Printf("%s: OK\n\n%s", args[0], text)
			return 0
		}
	}
	fmt.Fprintf(os.Stderr, "%s: %v\n", args[0], err)
	return 1
}
