package origins

import (
	"encoding/json"
	"net"
	"net/netip"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// The relay's own origins.
//
// The relay's pages are never a shared tab's, as an extension's pages are
// not: the live view's buttons are the person's authority, and a script
// on the relay's origin reaches the relay as the live view does. Which
// origins are the relay's: the address it listens on (Config.Listen) under
// every name that reaches it — for a loopback or unspecified address all
// of 127.0.0.0/8, ::1, 0.0.0.0, ::, localhost and *.localhost; for an
// unspecified one also the machine's own addresses — the local addresses
// its connections arrive on (so a port 0 is learnt), and the public URL's
// host and port. Any scheme (http, https, ws, wss) counts, since it is the
// host and port that reach the listener.
//
// Navigation there is refused by every fenced command (the rules stage's
// rules.Relay) and the live view's navigate (package handles); our
// extension's first-request rules block every request to them from a
// shared tab, or a tab not known yet, while a client is connected
// (WithOwnRules, netfence.go); the navigation backstop fails every request
// a shared tab makes there, whatever the policy (FetchPatterns, the rules
// stage's backstop.go), so that a tab bound there (a link, a script, a form, a
// redirect) stays, on Chrome's error page; and a tab that is on one all
// the same is never attached, or let go at once (Origins.NeverShared,
// nevershared.go), as a tab bound for one without the backstop is as soon
// as Chrome says where it is going.

// RuleOwnOrigin is the rule id of a refusal to take a tab to the relay's
// own origins.
const RuleOwnOrigin = "relay:own-origin"

// maxLearnt bounds the local addresses learnt from connections.
const maxLearnt = 32

// Origins is where the relay itself is reached. Its methods may be called
// from any goroutine.
type Origins struct {
	static []ownEntry // from the config: static
	learns bool       // a listener is configured: learn its port and addresses. Static
	// unspecified: the listener is on every address, so a port learnt
	// from a connection is reached by every loopback name and every
	// address of the machine. Static.
	unspecified bool
	learnt      atomic.Pointer[[]ownEntry] // local addresses connections arrived on; replaced under mu
	mu          sync.Mutex                 // serialises learning
}

// ownEntry is one host (or class of hosts) at one port.
type ownEntry struct {
	port     uint16
	loopback bool       // every loopback name and address, 0.0.0.0 and ::
	addr     netip.Addr // an address (unmapped), when valid
	host     string     // a name, lower case, without a trailing dot
}

// NewOrigins reads where the relay is reached from listen (host:port, ""
// for unknown) and public (a validated public URL, or "").
func NewOrigins(listen, public string) (*Origins, error) {
	o := &Origins{}
	empty := []ownEntry{}
	o.learnt.Store(&empty)
	if listen != "" {
		host, port, err := net.SplitHostPort(listen)
		if err != nil {
			return nil, err
		}
		p, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			return nil, err
		}
		o.learns = true
		ip, ipErr := netip.ParseAddr(host)
		o.unspecified = host == "" || ipErr == nil && ip.IsUnspecified()
		if p != 0 {
			o.static = append(o.static, listenEntries(host, uint16(p), o.unspecified)...)
		}
	}
	if public != "" {
		u, err := denylist.ParseURL(public)
		if err != nil {
			return nil, err
		}
		e := ownEntry{port: u.Port, addr: u.Addr.Unmap(), loopback: u.Addr.IsValid() && loopbackAddr(u.Addr) || !u.Addr.IsValid() && loopbackName(u.Host)}
		if !u.Addr.IsValid() {
			e.host = u.Host
		}
		o.static = append(o.static, e)
	}
	return o, nil
}

// listenEntries are the hosts that reach a listener on host:port.
func listenEntries(host string, port uint16, unspecified bool) []ownEntry {
	if unspecified {
		out := []ownEntry{{port: port, loopback: true}}
		if addrs, err := net.InterfaceAddrs(); err == nil {
			for _, a := range addrs {
				if p, err := netip.ParsePrefix(a.String()); err == nil && !loopbackAddr(p.Addr()) {
					out = append(out, ownEntry{port: port, addr: p.Addr().Unmap().WithZone("")})
				}
			}
		}
		return out
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		if loopbackAddr(ip) {
			return []ownEntry{{port: port, loopback: true}}
		}
		return []ownEntry{{port: port, addr: ip.Unmap().WithZone("")}}
	}
	h := strings.TrimSuffix(strings.ToLower(host), ".")
	if loopbackName(h) {
		return []ownEntry{{port: port, loopback: true}}
	}
	return []ownEntry{{port: port, host: h}}
}

// loopbackAddr reports the addresses that reach this machine's loopback
// listeners: 127.0.0.0/8 and ::1 (mapped or not), and the unspecified
// ones, which a connect on Linux takes to loopback.
func loopbackAddr(a netip.Addr) bool {
	a = a.Unmap()
	return a.IsLoopback() || a.IsUnspecified()
}

// loopbackName reports the names Chrome resolves to loopback itself,
// without asking DNS.
func loopbackName(h string) bool {
	switch h {
	case "localhost", "localhost.localdomain", "localhost6", "localhost6.localdomain6":
		return true
	}
	return strings.HasSuffix(h, ".localhost")
}

// Learn notes the local address a connection arrived on, and reports
// whether it was new: then the fences in force must learn it too.
func (o *Origins) Learn(local net.Addr) bool {
	if !o.learns {
		return false
	}
	ap, err := netip.ParseAddrPort(local.String())
	if err != nil || ap.Port() == 0 {
		return false
	}
	a := ap.Addr().Unmap().WithZone("")
	if o.knows(a, ap.Port()) {
		return false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	cur := *o.learnt.Load()
	if o.knows(a, ap.Port()) || len(cur) >= maxLearnt {
		return false
	}
	next := append([]ownEntry(nil), cur...)
	switch {
	case o.unspecified:
		next = append(next, listenEntries("", ap.Port(), true)...)
		if !loopbackAddr(a) {
			next = append(next, ownEntry{port: ap.Port(), addr: a})
		}
	case loopbackAddr(a):
		next = append(next, ownEntry{port: ap.Port(), loopback: true})
	default:
		next = append(next, ownEntry{port: ap.Port(), addr: a})
	}
	o.learnt.Store(&next)
	return true
}

// knows reports whether a:port is among the relay's addresses already.
func (o *Origins) knows(a netip.Addr, port uint16) bool {
	for _, list := range [][]ownEntry{o.static, *o.learnt.Load()} {
		for _, e := range list {
			if e.port == port && (e.loopback && loopbackAddr(a) || e.addr.IsValid() && e.addr == a) {
				return true
			}
		}
	}
	return false
}

// entries returns every entry in force.
func (o *Origins) entries() []ownEntry {
	l := *o.learnt.Load()
	if len(l) == 0 {
		return o.static
	}
	return append(append([]ownEntry(nil), o.static...), l...)
}

// Match reports whether raw is a URL of one of the relay's own origins,
// read as Chrome reads it (denylist.ParseURL). A blob: or filesystem: URL
// is its inner URL's.
func (o *Origins) Match(raw string) bool {
	for _, p := range []string{"blob:", "filesystem:"} {
		if len(raw) > len(p) && strings.EqualFold(raw[:len(p)], p) {
			raw = raw[len(p):]
			break
		}
	}
	u, err := denylist.ParseURL(raw)
	if err != nil || u.Host == "" || u.Scheme == "ftp" {
		return false
	}
	a := u.Addr.Unmap()
	for _, list := range [][]ownEntry{o.static, *o.learnt.Load()} {
		for _, e := range list {
			if e.port != u.Port {
				continue
			}
			switch {
			case e.loopback && (a.IsValid() && loopbackAddr(a) || !a.IsValid() && loopbackName(u.Host)):
				return true
			case e.addr.IsValid() && a == e.addr:
				return true
			case e.host != "" && !a.IsValid() && u.Host == e.host:
				return true
			}
		}
	}
	return false
}

// The first-request rules of the relay's own origins: every resource type,
// above every rule of the policy's (whose priorities are 1 to 3).
const ownRulePriority = 10

var allResourceTypes = []string{"main_frame", "sub_frame", "stylesheet", "script", "image", "font", "object",
	"xmlhttprequest", "ping", "csp_report", "media", "websocket", "webtransport", "webbundle", "other"}

// The canonical URL around its host, as the policy's rules read it: a
// scheme that names a host, an optional userinfo; an optional trailing
// dot after a name.
const ownURLPrefix = `^(https?|wss?)://([^/?#@]*@)?`

// loopbackHosts is every canonical host that reaches loopback, in pieces
// small enough for Chrome: it refuses a rule whose expression takes more
// than a little memory, and then every rule given with it.
var loopbackHosts = []string{
	`127\.[0-9]+\.[0-9]+\.[0-9]+`,
	`(0\.0\.0\.0|\[::1?\]|\[::ffff:7f[0-9a-f]*:[0-9a-f]*\])`,
	`([^/?#@:]*\.)?localhost\.?`,
	`(localhost6|localhost\.localdomain|localhost6\.localdomain6)\.?`,
}

// hostRegexes are e's hosts as regular expressions over a canonical URL.
func (e ownEntry) hostRegexes() []string {
	switch {
	case e.loopback:
		return loopbackHosts
	case e.addr.Is4():
		return []string{regexp.QuoteMeta(e.addr.String())}
	case e.addr.IsValid():
		return []string{`\[` + regexp.QuoteMeta(e.addr.String()) + `\]`}
	}
	return []string{regexp.QuoteMeta(e.host) + `\.?`}
}

// dnrRules returns the rules that block every request to the relay's own
// origins, numbered from first.
func (o *Origins) dnrRules(first int) []denylist.DNRRule {
	var out []denylist.DNRRule
	add := func(re string) {
		out = append(out, denylist.DNRRule{ID: first + len(out), Priority: ownRulePriority, Action: denylist.DNRAction{Type: "block"},
			Condition: denylist.DNRCondition{RegexFilter: re, ResourceTypes: allResourceTypes}})
	}
	seen := map[string]bool{}
	for _, e := range o.entries() {
		port := strconv.Itoa(int(e.port))
		for _, host := range e.hostRegexes() {
			for _, re := range []string{ownURLPrefix + host + `:` + port + `([/?#]|$)`, defaultPortRegex(host, e.port)} {
				if re != "" && !seen[re] {
					seen[re] = true
					add(re)
				}
			}
		}
	}
	return out
}

// defaultPortRegex matches a URL without a port whose scheme's default
// port is port, or "".
func defaultPortRegex(host string, port uint16) string {
	switch port {
	case 80:
		return `^(http|ws)://([^/?#@]*@)?` + host + `([/?#]|$)`
	case 443:
		return `^(https|wss)://([^/?#@]*@)?` + host + `([/?#]|$)`
	}
	return ""
}

// WithOwnRules adds the first-request rules of the relay's own origins to
// the policy's (a JSON array, or nil), numbered after them. They block
// every request to those origins, whatever its type.
func (o *Origins) WithOwnRules(policy []byte) (json.RawMessage, error) {
	var rules []json.RawMessage
	if len(policy) > 0 {
		if err := json.Unmarshal(policy, &rules); err != nil {
			return nil, err
		}
	}
	last := 0
	for _, r := range rules {
		if id, ok := wire.Int(wire.Field(r, "id")); ok && int(id) > last {
			last = int(id)
		}
	}
	own := o.dnrRules(last + 1)
	if len(own) == 0 {
		return policy, nil
	}
	for _, r := range own {
		b, err := json.Marshal(r)
		if err != nil {
			return nil, err
		}
		rules = append(rules, b)
	}
	return json.Marshal(rules)
}

// FetchPatterns are the backstop's patterns for requests of every type to
// the relay's own origins. They may match more than those: what they
// pause is judged exactly (Match, in the rules stage's judgePaused).
func (o *Origins) FetchPatterns() []cdp.FetchPattern {
	var out []cdp.FetchPattern
	seen := map[string]bool{}
	add := func(p string) {
		if !seen[p] {
			seen[p] = true
			out = append(out, cdp.FetchPattern{URLPattern: p, RequestStage: "Request"})
		}
	}
	for _, e := range o.entries() {
		var globs []string
		switch {
		case e.loopback:
			globs = []string{"127.*", "0.0.0.0", "[::1]", "[::]", "[::ffff:7f*", "localhost*"}
		case e.addr.Is4():
			globs = []string{e.addr.String()}
		case e.addr.IsValid():
			globs = []string{"[" + e.addr.String() + "]"}
		default:
			globs = []string{fetchEscape(e.host) + "*"}
		}
		port := strconv.Itoa(int(e.port))
		for _, g := range globs {
			add("*" + g + ":" + port + "/*")
			if e.port == 80 || e.port == 443 {
				add("*//" + g + "/*")
				add("*@" + g + "/*")
			}
		}
	}
	return out
}

// fetchEscape escapes a Fetch urlPattern's wildcards in s.
func fetchEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`).Replace(s)
}
