package person

// Take-over and hand-back: what the client is told on the tab's session
// when a person takes control of a tab from the live view, and when they
// hand it back.

// MsgControlled is the warning the client gets when a person takes a tab.
const MsgControlled = "cdprelay: a person has taken control of this tab from the live view; input and navigation are refused until they hand it back"

// MsgHandedBack is the warning the client gets when the person hands the
// tab back.
const MsgHandedBack = "cdprelay: control of this tab was handed back to automation"
