package viewer

// Credential is what a viewer presented, as the relay sees it.
type Credential struct {
	// Name names the credential ("person key", "token ops"). An
	// interactive viewer's name carries it, so that the audit log, the
	// other viewers and the automation's notices say who acted.
	Name string
	// Hint tells a view-only viewer why it may only watch and how the
	// person acts (the live view shows it).
	Hint string
	// KeyRefused: the viewer offered a person key that is not the relay's
	// (the page drops the one it kept).
	KeyRefused bool
}

// Protocol is the subprotocol of the viewer socket. A client may offer
// it, and must when it offers others (the live view offers the person key
// as one, which the relay's ingress takes out first): the server then
// answers with it.
const Protocol = "cdprelay-viewer"
