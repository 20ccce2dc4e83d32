package api

// Verdict is a policy's answer for one client command.
type Verdict uint8

const (
	// Allow lets the command through to emulation or the tab.
	Allow Verdict = iota
	// Deny answers the command with a CDP error and never forwards it.
	Deny
	// AckAndDrop answers the command with an empty result and never
	// forwards it.
	AckAndDrop
	// Ask holds the command until a person approves it (then it goes on
	// through the pipeline) or denies it (the relay's approvals).
	Ask
)

// Decision is a verdict with what to tell the client and what to record.
type Decision struct {
	Verdict Verdict
	Rule    string // a bounded rule id, for records and metrics
	Message string // the CDP error message of a denial
}

// Policy decides client commands before anything is emulated or forwarded.
// Implementations must be safe for concurrent use and must not keep method
// or params: params alias the client's read buffer.
type Policy interface {
	// Command judges one command of an instance whose policy profile is
	// profile ("" for the global policy) by its method rules. Only the
	// envelope's top-level method counts. The URL of a URL-bearing
	// command is not judged here but by MethodURL.
	Command(profile, method string, params []byte) Decision
	// MethodURL judges the URL of a URL-bearing command (Page.navigate,
	// Target.createTarget, ...), as the relay read it from its params:
	// url is the value, found whether the field was there.
	MethodURL(profile, method, url string, found bool) Decision
	// URL judges a navigation target (the live view's navigate, and the
	// Document requests the navigation backstop sees).
	URL(profile, url string) Decision
	// FencesNavigation reports whether URL can refuse an ordinary http(s)
	// host for profile; only then are navigations watched beyond the
	// commands that announce them.
	FencesNavigation(profile string) bool
	// UploadDirs are the folders files may be uploaded from (absolute
	// paths); none: uploads are refused.
	UploadDirs(profile string) []string
}

// Asker is a Policy that asks a person before a click on a form's submit
// control (the relay's approvals). Method rules and navigations are asked
// by the Ask verdict of Command and MethodURL; a submit control is known
// only once the relay has looked at the page, which it does when
// AsksSubmit.
type Asker interface {
	AsksSubmit(profile string) bool
}

// NavigationAsker is a Policy that asks a person before a tab goes to
// some hosts, whichever way the navigation started.
type NavigationAsker interface {
	// AsksNavigation reports whether any host is asked about for profile.
	AsksNavigation(profile string) bool
	// AskNavigation is Ask for a navigation to url that a person is to
	// approve, and Allow otherwise.
	AskNavigation(profile, url string) Decision
}

// NetworkRuler is a Policy that can also express its URL fence as rules
// the browser applies itself, before a request leaves it
// (chrome.declarativeNetRequest: see denylist.NetworkRules). The relay's
// own extension installs them for the shared tabs while a client is
// connected, which fences what the Fetch backstop cannot see: a popup's
// first request, a speculative prefetch, an out-of-process frame. A policy
// without it has the backstop alone.
type NetworkRuler interface {
	// NetworkRules returns the rules as a JSON array, or nil when the
	// fence refuses no host.
	NetworkRules(profile string) []byte
}

// TierRuler is a Policy with tiers: what automation may do on a page by
// its host (denylist.Tier). A policy without it has every site full.
type TierRuler interface {
	// Tier returns "full", "read-only" or "blind" for the page at url,
	// the rule id a refusal by it carries, and the host it was decided
	// for.
	Tier(profile, url string) (tier, rule, host string)
	// HasTiers reports whether any page can be other than full for
	// profile: then the relay follows frames too, not only tabs.
	HasTiers(profile string) bool
}

// AllowAll is the policy of a relay configured without one: it allows
// every command and URL, fences no navigation and allows no upload.
type AllowAll struct{}

func (AllowAll) Command(string, string, []byte) Decision         { return Decision{} }
func (AllowAll) MethodURL(string, string, string, bool) Decision { return Decision{} }
func (AllowAll) URL(string, string) Decision                     { return Decision{} }
func (AllowAll) FencesNavigation(string) bool                    { return false }
func (AllowAll) UploadDirs(string) []string                      { return nil }
