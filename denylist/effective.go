package denylist

import (
	"errors"
	"path/filepath"
	"strings"

	"github.com/gobwas/glob"
)

// Effective is the policy for one instance: the global policy with its
// profile applied. It is immutable and safe for concurrent use.
type Effective struct {
	profile string
	cfg     Config // as merged, for Explain

	// methods holds every method name with a rule of its own: exact
	// entries of the lists, the defaults and the URL-bearing methods,
	// with the globs that match them already folded in, so that one map
	// lookup settles them.
	methods   map[string]methodEntry
	denyGlobs []methodGlob
	ackGlobs  []methodGlob

	schemes      map[string]bool
	allowed      hostList
	blocked      hostList
	blockPrivate bool
	uploads      []string
	tiers        tierList

	askMethods map[string]bool // exact names
	askGlobs   []methodGlob
	askHosts   hostList
	askSubmit  bool
}

type methodKind uint8

const (
	methodFixed      methodKind = iota // d applies
	methodURL                          // the URL in params field param decides
	methodWhenParams                   // d applies when params carry one of keys
	methodWhen                         // d applies when when(params)
)

type methodEntry struct {
	kind  methodKind
	d     Decision
	param urlParam
	keys  []string
	when  func([]byte) (bool, error)
	cond  string
}

type methodGlob struct {
	g       *glob.Pattern
	pattern string
	rule    string
}

func compileEffective(profile string, c Config, own func(field string) bool, errs *[]error) *Effective {
	e := &Effective{
		profile:      profile,
		cfg:          c,
		methods:      map[string]methodEntry{},
		schemes:      map[string]bool{},
		blockPrivate: c.BlockPrivateAddresses,
	}
	fail := func(field string, i int, entry string, err error) {
		if own(field) {
			*errs = append(*errs, &EntryError{Profile: profile, Field: field, Index: i, Entry: entry, Err: err})
		}
	}

	e.denyGlobs = e.addMethods(fieldDeny, c.DenyMethods, Deny, fail)
	e.ackGlobs = e.addMethods(fieldAck, c.AckAndDropMethods, AckAndDrop, fail)
	if !c.NoDefaults {
		for _, r := range defaultRules {
			if _, ok := e.methods[r.Method]; ok {
				continue
			}
			en := methodEntry{kind: methodFixed, d: Decision{Verdict: r.Verdict, Rule: r.Rule, Reason: r.Reason}}
			if len(r.WhenParams) > 0 {
				en.kind, en.keys = methodWhenParams, r.WhenParams
			}
			if r.When != nil {
				en.kind, en.when, en.cond = methodWhen, r.When, r.Condition
			}
			e.methods[r.Method] = en
		}
	}
	for m, param := range urlParams {
		if _, ok := e.methods[m]; !ok {
			e.methods[m] = methodEntry{kind: methodURL, param: param}
		}
	}
	// A glob that matches a name with a rule of its own still applies:
	// a deny glob wins over all but an exact deny (which keeps its rule
	// id), an ack-and-drop glob over URL and conditional rules.
	for m, en := range e.methods {
		if en.kind == methodFixed && en.d.Verdict == Deny {
			continue
		}
		if d, ok := matchGlobs(e.denyGlobs, m, Deny); ok {
			e.methods[m] = methodEntry{kind: methodFixed, d: d}
			continue
		}
		if en.kind == methodFixed {
			continue
		}
		if d, ok := matchGlobs(e.ackGlobs, m, AckAndDrop); ok {
			e.methods[m] = methodEntry{kind: methodFixed, d: d}
		}
	}

	schemes := c.AllowedSchemes
	if len(schemes) == 0 {
		schemes = defaultSchemes
	}
	for i, s := range schemes {
		n, err := normaliseScheme(s)
		if err != nil {
			fail(fieldSchemes, i, s, err)
			continue
		}
		e.schemes[n] = true
	}

	for i, d := range c.UploadsDir {
		switch {
		case !filepath.IsAbs(d):
			fail(fieldUploads, i, d, errors.New("an upload folder is an absolute path"))
		case filepath.Clean(d) == "/":
			fail(fieldUploads, i, d, errors.New("the whole file system is not an upload folder"))
		default:
			e.uploads = append(e.uploads, filepath.Clean(d))
		}
	}
	e.tiers = compileTiers(c.Tiers, c.DefaultTier, fail)
	e.compileAsk(c, fail)
	e.allowed = compileHostList(c.AllowedHosts, func(i int, entry string, err error) { fail(fieldAllowed, i, entry, err) })
	e.blocked = compileHostList(c.BlockedHosts, func(i int, entry string, err error) { fail(fieldBlocked, i, entry, err) })
	return e
}

// addMethods adds the exact names of list to e.methods and returns its
// globs.
func (e *Effective) addMethods(field string, list []string, v Verdict, fail func(string, int, string, error)) []methodGlob {
	var globs []methodGlob
	for i, p := range list {
		pat := strings.TrimSpace(p)
		if err := checkMethodPattern(pat); err != nil {
			fail(field, i, p, err)
			continue
		}
		if !strings.ContainsAny(pat, globMeta) {
			if _, ok := e.methods[pat]; !ok {
				e.methods[pat] = methodEntry{kind: methodFixed, d: listDecision(pat, v)}
			}
			continue
		}
		g, err := glob.Compile(pat)
		if err != nil {
			fail(field, i, p, err)
			continue
		}
		globs = append(globs, methodGlob{g: g, pattern: pat, rule: "method:" + pat})
	}
	return globs
}

func checkMethodPattern(p string) error {
	if p == "" {
		return errors.New("an empty method pattern")
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if !isAlpha(c) && !isDigit(c) && c != '.' && c != '_' && !strings.ContainsRune(globMeta+",!-", rune(c)) {
			return errors.New("a method pattern holds letters, digits, '.', '_' and the glob characters * ? [ ] { } , ! - \\")
		}
	}
	if !strings.ContainsAny(p, globMeta) && !strings.Contains(p, ".") {
		return errors.New("CDP methods are named Domain.method: this pattern matches none")
	}
	return nil
}

func listDecision(method string, v Verdict) Decision {
	if v == AckAndDrop {
		return Decision{Verdict: v, Rule: "method:" + method, Reason: method + " is acknowledged but not applied (ack-and-drop list)"}
	}
	return Decision{Verdict: v, Rule: "method:" + method, Reason: method + " is on the deny list"}
}

func matchGlobs(globs []methodGlob, method string, v Verdict) (Decision, bool) {
	for _, g := range globs {
		if g.g.Match(method) {
			what := "denied"
			if v == AckAndDrop {
				what = "acknowledged but not applied"
			}
			return Decision{Verdict: v, Rule: g.rule, Reason: clip(method) + " matches " + g.pattern + " and is " + what}, true
		}
	}
	return Decision{}, false
}

// Method decides a command from its top-level method and raw params. The
// method must be the envelope's method, JSON-unescaped; a "method" inside
// params means nothing here. For a URL-bearing command (URLParam) the URL
// in params goes through URL; any other command costs a map lookup and,
// when the configuration has method globs, a match against each, without
// allocating unless it is refused.
func (e *Effective) Method(method string, params []byte) Decision {
	d, param, isURL := e.rule(method, params)
	if d.Verdict != Allow {
		return d
	}
	asked := e.ask(method)
	if !isURL {
		return asked
	}
	u, found, err := paramString(params, param.name)
	switch {
	case err != nil:
		return Decision{Verdict: Deny, Rule: RuleURLParams, Reason: method + ": " + err.Error()}
	}
	if d := e.MethodURL(method, u, found); d.Verdict != Allow || asked.Verdict == Allow {
		return d
	}
	return asked
}

// Rules decides a command by its method rules alone, for a caller that
// reads a URL-bearing command's URL itself (see URLParam) and hands it to
// MethodURL. A URL-bearing command that no rule denies or drops is
// allowed here.
func (e *Effective) Rules(method string, params []byte) Decision {
	d, _, _ := e.rule(method, params)
	if d.Verdict == Allow {
		return e.ask(method)
	}
	return d
}

// MethodURL judges the URL of a URL-bearing command, as read by the
// caller: u is its value and found whether the field was there at all.
func (e *Effective) MethodURL(method, u string, found bool) Decision {
	param, ok := urlParams[method]
	switch {
	case !ok:
		return Decision{}
	case param.optional && (!found || u == ""):
		return Decision{}
	case !found:
		return Decision{Verdict: Deny, Rule: RuleURLParams, Reason: method + " carries no " + param.name}
	case u == "" && param.empty != "":
		u = param.empty
	}
	d := e.URL(u)
	if d.Verdict == Allow && param.navigates {
		return e.askURL(u)
	}
	return d
}

// rule applies the method rules and reports whether the method's URL is
// still to be judged.
func (e *Effective) rule(method string, params []byte) (d Decision, param urlParam, isURL bool) {
	if en, ok := e.methods[method]; ok {
		switch en.kind {
		case methodFixed:
			return en.d, urlParam{}, false
		case methodURL:
			return Decision{}, en.param, true
		case methodWhenParams:
			has, err := paramHasAny(params, en.keys)
			if err != nil {
				return Decision{Verdict: Deny, Rule: en.d.Rule, Reason: method + ": " + err.Error()}, urlParam{}, false
			}
			if has {
				return en.d, urlParam{}, false
			}
			return Decision{}, urlParam{}, false
		case methodWhen:
			has, err := en.when(params)
			if err != nil {
				return Decision{Verdict: Deny, Rule: en.d.Rule, Reason: method + ": " + err.Error()}, urlParam{}, false
			}
			if has {
				return en.d, urlParam{}, false
			}
			return Decision{}, urlParam{}, false
		}
	}
	if len(e.denyGlobs) > 0 {
		if d, ok := matchGlobs(e.denyGlobs, method, Deny); ok {
			return d, urlParam{}, false
		}
	}
	if len(e.ackGlobs) > 0 {
		if d, ok := matchGlobs(e.ackGlobs, method, AckAndDrop); ok {
			return d, urlParam{}, false
		}
	}
	return Decision{}, urlParam{}, false
}

// rules lists the rule ids this policy can report.
func (e *Effective) rules() []string {
	out := append([]string(nil), urlRules...)
	out = append(out, RuleTierBlind, RuleTierReadOnly)
	for _, en := range e.methods {
		if en.d.Rule != "" {
			out = append(out, en.d.Rule)
		}
	}
	for _, g := range append(append([]methodGlob(nil), e.denyGlobs...), e.ackGlobs...) {
		out = append(out, g.rule)
	}
	return append(out, e.askRules()...)
}

// clip keeps client-supplied text in reasons short and printable.
func clip(s string) string {
	const max = 80
	ok := len(s) <= max
	for i := 0; ok && i < len(s); i++ {
		ok = s[i] > ' ' && s[i] < 0x7f
	}
	if ok {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if b.Len() >= max {
			b.WriteString("…")
			break
		}
		if r > ' ' && r < 0x7f {
			b.WriteRune(r)
		} else {
			b.WriteByte('?')
		}
	}
	return b.String()
}

// FencesHosts reports whether the URL fence can refuse a navigation to an
// ordinary http(s) host: an allow list, a block list or the private-address
// rule is in force. Only then does a caller need to watch navigations that
// no command announces (link clicks, redirects, form posts).
func (e *Effective) FencesHosts() bool {
	return !e.allowed.empty() || !e.blocked.empty() || e.blockPrivate
}

// UploadDirs returns the folders automation may upload files from, cleaned;
// empty: uploads are refused. The caller resolves symlinks, which is I/O.
func (e *Effective) UploadDirs() []string { return e.uploads }
