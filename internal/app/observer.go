package app

import (
	"github.com/cdprelay/cdprelay/audit"
	"github.com/cdprelay/cdprelay/relay"
)

// AuditObserver records the relay's observations in an audit log. It is
// the one adapter between the two packages, which know nothing of each
// other: the relay says what happened, the audit log keeps it.
type AuditObserver struct{ Log *audit.Log }

// Observe records ev. A refusal's rule leads its detail, so that a reader
// of the log sees which rule decided before why.
func (o AuditObserver) Observe(ev relay.Event) {
	detail := ev.Detail
	if ev.Rule != "" {
		detail = "rule " + ev.Rule
		if ev.Detail != "" {
			detail += ": " + ev.Detail
		}
	}
	o.Log.Record(audit.Record{
		Instance: ev.Instance,
		Tenant:   ev.Tenant,
		Actor:    audit.Actor(ev.Actor),
		By:       ev.By,
		Kind:     audit.Kind(ev.Kind),
		Method:   ev.Method,
		Target:   ev.Target,
		Outcome:  audit.Outcome(ev.Outcome),
		Detail:   detail,
	})
}
