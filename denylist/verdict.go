package denylist

// Verdict is what the relay does with one command.
type Verdict uint8

const (
	// Allow forwards the command (or lets the relay emulate it).
	Allow Verdict = iota
	// Deny answers the command with a CDP error and never forwards it.
	Deny
	// AckAndDrop answers the command with an empty result and never
	// forwards it: for commands that clients send unconditionally and
	// would abort on an error, but that must not reach the person's
	// browser.
	AckAndDrop
	// Ask holds the command until a person approves or denies it (the
	// relay's approvals). A denial, the method rules and the URL fence are
	// decided first: only a command they let through is asked.
	Ask
)

// String returns the verdict as it appears in audit records and metric
// labels.
func (v Verdict) String() string {
	switch v {
	case Allow:
		return "allow"
	case Deny:
		return "deny"
	case AckAndDrop:
		return "ack-and-drop"
	case Ask:
		return "ask"
	}
	return "unknown"
}

// MessagePrefix starts the message of every CDP error the relay sends for
// a denied command, so that clients and tests can recognise policy errors.
const MessagePrefix = "Denied by cdprelay policy: "

// Decision is the outcome of one check. The zero value is Allow.
type Decision struct {
	Verdict Verdict
	// Rule names the rule that decided, from a set bounded by the
	// configuration (see Policy.Rules), so that it can be a metric label.
	// Empty for Allow.
	Rule string
	// Reason says what was refused and why, for people: it may quote the
	// client's method name or the URL's host, so it is not a metric label.
	Reason string
}

// Message is the CDP error message for a denied command.
func (d Decision) Message() string {
	return MessagePrefix + d.Reason
}
