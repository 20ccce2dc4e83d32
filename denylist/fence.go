package denylist

// URL decides a navigation to raw: the URL of a URL-bearing command, a
// viewer's navigate, or a document request the Fetch backstop paused. In
// order: the URL must parse; the scheme must be allowed (about:blank and
// about:srcdoc always are); then, for schemes that name a network host,
// the host must not be blocked, must not be private when private
// addresses are blocked, and must be allowed when an allow list is set.
func (e *Effective) URL(raw string) Decision {
	u, rest, err := splitURL(raw)
	if err != nil {
		return refuse(err)
	}
	if u.ViewSource && !e.schemes["view-source"] {
		return Decision{Verdict: Deny, Rule: RuleURLScheme, Reason: "view-source: URLs are not allowed (scheme fence)"}
	}
	if u.Scheme == "about" {
		_ = u.parseRest(rest)
		if u.Opaque == "blank" || u.Opaque == "srcdoc" || e.schemes["about"] {
			return Decision{}
		}
		return Decision{Verdict: Deny, Rule: RuleURLAbout, Reason: "about:" + clip(u.Opaque) + " is not allowed: only about:blank and about:srcdoc are"}
	}
	if !e.schemes[u.Scheme] {
		return Decision{Verdict: Deny, Rule: RuleURLScheme, Reason: clip(u.Scheme) + ": URLs are not allowed (scheme fence)"}
	}
	if !hostScheme(u.Scheme) {
		return Decision{}
	}
	if err := u.parseRest(rest); err != nil {
		return refuse(err)
	}
	return e.host(u)
}

func (e *Effective) host(u ParsedURL) Decision {
	if entry, ok := e.blocked.match(u.Host, u.Addr); ok {
		return Decision{Verdict: Deny, Rule: RuleURLBlockedHost, Reason: "host " + clip(u.Host) + " is blocked (entry " + clip(entry) + ")"}
	}
	if e.blockPrivate {
		what := ""
		if u.Addr.IsValid() {
			if kind := privateKind(u.Addr); kind != "" {
				what = kind + " address"
			}
		} else if localName(u.Host) {
			what = "a loopback name"
		}
		if what != "" {
			return Decision{Verdict: Deny, Rule: RuleURLPrivate, Reason: "host " + clip(u.Host) + " is " + what + " and private addresses are blocked"}
		}
	}
	if !e.allowed.empty() {
		if _, ok := e.allowed.match(u.Host, u.Addr); !ok {
			return Decision{Verdict: Deny, Rule: RuleURLHostNotAllowed, Reason: "host " + clip(u.Host) + " is not in the allowed hosts"}
		}
	}
	return Decision{}
}

func refuse(err error) Decision {
	if ue, ok := err.(*URLError); ok {
		return Decision{Verdict: Deny, Rule: ue.Rule, Reason: ue.Reason}
	}
	return Decision{Verdict: Deny, Rule: RuleURLUnparseable, Reason: "the URL cannot be parsed"}
}
