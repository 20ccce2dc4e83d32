package denylist

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// Config is the global policy. The zero value is the default policy: the
// default method rules, http and https (plus about:blank and about:srcdoc),
// any host, private addresses allowed.
type Config struct {
	// DenyMethods are glob patterns over CDP method names whose commands
	// are answered with a CDP error. '*' matches any run of characters,
	// dots included; '?', [classes] and {alternatives} work as in
	// github.com/gobwas/glob. Matching is case-sensitive, as Chrome's
	// dispatch is. Default: none beyond the default rules.
	DenyMethods []string `json:"deny_methods,omitempty" yaml:"deny_methods,omitempty"`

	// AckAndDropMethods are glob patterns, as DenyMethods, whose commands
	// are answered with an empty result and never forwarded. A method
	// matched by both lists is denied. Default: none beyond the default
	// rules.
	AckAndDropMethods []string `json:"ack_and_drop_methods,omitempty" yaml:"ack_and_drop_methods,omitempty"`

	// AllowedSchemes are the URL schemes the URL fence lets through, in
	// place of the default. about:blank and about:srcdoc are always
	// allowed; "about" allows every about: URL and "view-source" allows a
	// view-source: wrapper around an otherwise allowed URL. Schemes other
	// than http, https, ws, wss and ftp name no network host, so host
	// lists do not apply to them. Default: http, https.
	AllowedSchemes []string `json:"allowed_schemes,omitempty" yaml:"allowed_schemes,omitempty"`

	// AllowedHosts, when not empty, are the only hosts the URL fence lets
	// through. An entry is an exact host ("example.com"), a leading-dot
	// entry for a host and all its subdomains (".example.com"), a glob
	// with '.' as separator ("*.example.com", "api-*.example.com"; '*'
	// stays within one label, '**' crosses labels), an IP address
	// ("127.0.0.1", "::1", any form the URL standard reads) or a CIDR
	// prefix ("10.0.0.0/8"). Entries are normalised as hosts are: case,
	// trailing dot, IDN to punycode. Default: empty, any host.
	AllowedHosts []string `json:"allowed_hosts,omitempty" yaml:"allowed_hosts,omitempty"`

	// BlockedHosts are refused even when AllowedHosts lets them through.
	// Entries as AllowedHosts. Default: empty.
	BlockedHosts []string `json:"blocked_hosts,omitempty" yaml:"blocked_hosts,omitempty"`

	// BlockPrivateAddresses refuses IP literals that are not public
	// (unspecified, loopback, private, link-local, CGNAT, unique local,
	// multicast, reserved, and IPv6 forms that embed one) and the names
	// Chrome itself resolves to loopback (localhost, *.localhost). It wins
	// over AllowedHosts. Names that DNS resolves to such addresses are not
	// seen: the policy does no I/O. Default: false.
	BlockPrivateAddresses bool `json:"block_private_addresses,omitempty" yaml:"block_private_addresses,omitempty"`

	// NoDefaults drops the default method rules (DefaultMethodRules).
	// Default: false.
	NoDefaults bool `json:"no_defaults,omitempty" yaml:"no_defaults,omitempty"`

	// UploadsDir are the folders, absolute paths on the machine the
	// browser runs on, that automation may upload files from
	// (DOM.setFileInputFiles, Input.dispatchDragEvent). The relay resolves
	// symlinks and ".." in both before it compares. Default: none, so
	// uploads are refused.
	UploadsDir []string `json:"uploads_dir,omitempty" yaml:"uploads_dir,omitempty"`

	// Tiers give hosts the blind or read-only tier: what automation may do
	// on a page, by the host the page is on right now (see Tier). The
	// strictest tier a host matches wins. Default: none.
	Tiers []TierRule `json:"tiers,omitempty" yaml:"tiers,omitempty"`

	// DefaultTier is the tier of a host no tier rule matches: full,
	// read-only or blind. Default: full.
	DefaultTier string `json:"default_tier,omitempty" yaml:"default_tier,omitempty"`

	// AskMethods are glob patterns, as DenyMethods, whose commands a
	// person approves first, in the live view. An input event is asked
	// when it acts: a mouse press, a key down or char, a touch start; the
	// events around it wait behind it. A method that a method rule denies
	// or drops is not asked. Default: none.
	AskMethods []string `json:"ask_methods,omitempty" yaml:"ask_methods,omitempty"`

	// AskDomains are hosts, entries as AllowedHosts, that automation
	// navigates to (Page.navigate, Target.createTarget) only once a person
	// approves. The URL fence decides first. Default: none.
	AskDomains []string `json:"ask_domains,omitempty" yaml:"ask_domains,omitempty"`

	// AskSubmit asks a person before a click on a form's submit control,
	// and before Enter in a form's field, which submits it too; a click
	// into a frame of another origin, whose controls the relay cannot see,
	// is asked as well. Default: false.
	AskSubmit bool `json:"ask_submit,omitempty" yaml:"ask_submit,omitempty"`
}

// Profile overrides the global policy for the instances that name it. A
// non-empty list replaces the global list of the same name (it does not
// add to it); an empty one inherits it. A nil flag inherits the global
// flag.
type Profile struct {
	DenyMethods           []string   `json:"deny_methods,omitempty" yaml:"deny_methods,omitempty"`
	AckAndDropMethods     []string   `json:"ack_and_drop_methods,omitempty" yaml:"ack_and_drop_methods,omitempty"`
	AllowedSchemes        []string   `json:"allowed_schemes,omitempty" yaml:"allowed_schemes,omitempty"`
	AllowedHosts          []string   `json:"allowed_hosts,omitempty" yaml:"allowed_hosts,omitempty"`
	BlockedHosts          []string   `json:"blocked_hosts,omitempty" yaml:"blocked_hosts,omitempty"`
	BlockPrivateAddresses *bool      `json:"block_private_addresses,omitempty" yaml:"block_private_addresses,omitempty"`
	NoDefaults            *bool      `json:"no_defaults,omitempty" yaml:"no_defaults,omitempty"`
	UploadsDir            []string   `json:"uploads_dir,omitempty" yaml:"uploads_dir,omitempty"`
	Tiers                 []TierRule `json:"tiers,omitempty" yaml:"tiers,omitempty"`
	DefaultTier           string     `json:"default_tier,omitempty" yaml:"default_tier,omitempty"`
	AskMethods            []string   `json:"ask_methods,omitempty" yaml:"ask_methods,omitempty"`
	AskDomains            []string   `json:"ask_domains,omitempty" yaml:"ask_domains,omitempty"`
	AskSubmit             *bool      `json:"ask_submit,omitempty" yaml:"ask_submit,omitempty"`
}

// EntryError is one invalid configuration entry.
type EntryError struct {
	Profile string // empty for the global policy
	Field   string // the JSON/YAML name of the list
	Index   int
	Entry   string
	Err     error
}

func (e *EntryError) Error() string {
	where := ""
	if e.Profile != "" {
		where = fmt.Sprintf("profile %q: ", e.Profile)
	}
	return fmt.Sprintf("%s%s[%d] %q: %v", where, e.Field, e.Index, e.Entry, e.Err)
}

func (e *EntryError) Unwrap() error { return e.Err }

// Policy is a compiled global policy and its profiles. It is immutable and
// safe for concurrent use; a reload compiles a new one.
type Policy struct {
	global   *Effective
	profiles map[string]*Effective
}

// Compile validates every entry of global and profiles and compiles them.
// The error lists every invalid entry (see EntryError); on error the
// Policy is nil.
func Compile(global Config, profiles map[string]Profile) (*Policy, error) {
	var errs []error
	p := &Policy{profiles: make(map[string]*Effective, len(profiles))}
	p.global = compileEffective("", global, func(string) bool { return true }, &errs)
	for _, name := range slices.Sorted(maps.Keys(profiles)) {
		if strings.TrimSpace(name) == "" {
			errs = append(errs, errors.New("a profile needs a name: the empty name is the global policy"))
			continue
		}
		prof := profiles[name]
		own := prof.owns()
		p.profiles[name] = compileEffective(name, global.with(prof), func(f string) bool { return own[f] }, &errs)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return p, nil
}

// For returns the policy for the instances of profile. The empty name, and
// any name that is not a profile, give the global policy; Profiles lists
// the names, for callers that want to refuse unknown ones.
func (p *Policy) For(profile string) *Effective {
	if e, ok := p.profiles[profile]; ok {
		return e
	}
	return p.global
}

// Profiles returns the profile names, sorted.
func (p *Policy) Profiles() []string {
	return slices.Sorted(maps.Keys(p.profiles))
}

// Rules returns every rule id a Decision of this policy can carry, sorted,
// so that counters can start at zero for each.
func (p *Policy) Rules() []string {
	set := map[string]bool{}
	for _, e := range append([]*Effective{p.global}, slices.Collect(maps.Values(p.profiles))...) {
		for _, r := range e.rules() {
			set[r] = true
		}
	}
	return slices.Sorted(maps.Keys(set))
}

// with applies a profile over the global configuration.
func (c Config) with(p Profile) Config {
	pick := func(own, global []string) []string {
		if len(own) > 0 {
			return own
		}
		return global
	}
	c.DenyMethods = pick(p.DenyMethods, c.DenyMethods)
	c.AckAndDropMethods = pick(p.AckAndDropMethods, c.AckAndDropMethods)
	c.AllowedSchemes = pick(p.AllowedSchemes, c.AllowedSchemes)
	c.AllowedHosts = pick(p.AllowedHosts, c.AllowedHosts)
	c.BlockedHosts = pick(p.BlockedHosts, c.BlockedHosts)
	c.UploadsDir = pick(p.UploadsDir, c.UploadsDir)
	c.AskMethods = pick(p.AskMethods, c.AskMethods)
	c.AskDomains = pick(p.AskDomains, c.AskDomains)
	if p.AskSubmit != nil {
		c.AskSubmit = *p.AskSubmit
	}
	if len(p.Tiers) > 0 {
		c.Tiers = p.Tiers
	}
	if p.DefaultTier != "" {
		c.DefaultTier = p.DefaultTier
	}
	if p.BlockPrivateAddresses != nil {
		c.BlockPrivateAddresses = *p.BlockPrivateAddresses
	}
	if p.NoDefaults != nil {
		c.NoDefaults = *p.NoDefaults
	}
	return c
}

// owns says which lists the profile sets itself: errors in inherited ones
// are reported once, for the global policy.
func (p Profile) owns() map[string]bool {
	return map[string]bool{
		fieldDeny:        len(p.DenyMethods) > 0,
		fieldAck:         len(p.AckAndDropMethods) > 0,
		fieldSchemes:     len(p.AllowedSchemes) > 0,
		fieldAllowed:     len(p.AllowedHosts) > 0,
		fieldBlocked:     len(p.BlockedHosts) > 0,
		fieldUploads:     len(p.UploadsDir) > 0,
		fieldTiers:       len(p.Tiers) > 0,
		fieldDefaultTier: p.DefaultTier != "",
		fieldAskMethods:  len(p.AskMethods) > 0,
		fieldAskDomains:  len(p.AskDomains) > 0,
	}
}

const (
	fieldDeny        = "deny_methods"
	fieldAck         = "ack_and_drop_methods"
	fieldSchemes     = "allowed_schemes"
	fieldAllowed     = "allowed_hosts"
	fieldBlocked     = "blocked_hosts"
	fieldUploads     = "uploads_dir"
	fieldTiers       = "tiers"
	fieldDefaultTier = "default_tier"
	fieldAskMethods  = "ask_methods"
	fieldAskDomains  = "ask_domains"
)

// defaultSchemes are the schemes of ordinary web pages.
var defaultSchemes = []string{"http", "https"}

// normaliseScheme accepts "https" and "https:" alike.
func normaliseScheme(s string) (string, error) {
	s = lowerASCII(strings.TrimSuffix(strings.TrimSpace(s), ":"))
	if s == "" {
		return "", errors.New("an empty scheme")
	}
	if !isAlpha(s[0]) {
		return "", errors.New("a scheme starts with a letter")
	}
	for i := 1; i < len(s); i++ {
		if c := s[i]; !isAlpha(c) && !isDigit(c) && c != '+' && c != '-' && c != '.' {
			return "", errors.New("a scheme holds only letters, digits, '+', '-' and '.' (write \"https\", not a URL)")
		}
	}
	return s, nil
}
