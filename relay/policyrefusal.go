package relay

import (
	"errors"
	"sort"
	"strings"
	"time"
)

// Managed browsers: a policy of the browser keeps chrome.debugger out.
//
// An administrator's policy (chrome://policy; on Linux the JSON files of
// /etc/<browser>/policies/managed, read for every profile and again when
// they change) can make Chrome refuse to let an extension debug a tab.
// What Chromium 156 does, tried here:
//
//   - ExtensionSettings → runtime_blocked_hosts, for our extension's id or
//     "*": a tab on a listed site (or with a frame of one) cannot be
//     attached ("This page cannot be scripted due to an ExtensionsSettings
//     policy."); an attached tab that goes there, or gets such a frame, is
//     detached; Page.navigate to such a site is refused ("Not allowed"); a
//     site added while a tab is attached there makes its commands fail
//     with the same text. Other tabs are not affected.
//   - DeveloperToolsAvailability 2: no tab can be attached ("Cannot attach
//     to this target."), and the tabs attached when it comes are detached.
//   - ScreenCaptureAllowed false, DisableScreenshots, a DataControlsRules
//     screenshot rule, URLBlocklist of the extension's pages: no effect on
//     chrome.debugger. ExtensionAllowedTypes without "extension", or our id
//     in ExtensionInstallBlocklist: the extension does not run at all, so
//     the relay only sees no extension connect.
//
// Chrome's documentation says that newer versions refuse every tab of a
// browser whose policy blocks any host ("Host access is restricted by
// policy.") or restricts screenshots ("Screenshot capture is restricted by
// policy."); those texts are recognised too.
//
// Our extension names the cause of a refusal or a detach (policy_*, the
// causes below); for the stock extension and for commands the relay reads
// Chrome's text itself (policyCauseOf). Either way the relay says in words
// which policy and where to look: in the client's error or console, the
// audit log, and the live view (Status.Refused).

// Causes of a policy's refusal, as our extension reports them.
const (
	causePolicyBlockedHost = "policy_blocked_host"
	causePolicyHostAccess  = "policy_host_access"
	causePolicyScreenshots = "policy_screenshots"
	causePolicyDevTools    = "policy_devtools"
)

// Chrome's texts for those refusals.
const (
	chromeBlockedHost  = "cannot be scripted due to an ExtensionsSettings policy"
	chromeHostAccess   = "Host access is restricted by policy"
	chromeScreenshots  = "Screenshot capture is restricted by policy"
	chromeCannotAttach = "Cannot attach to this target."
	chromeNotAllowed   = "Not allowed"
)

// ruleBrowserPolicy names the browser's policy in audit records: the
// refusal is Chrome's, not one of the relay's rules.
const ruleBrowserPolicy = "browser-policy"

// whereToLook ends every explanation: where the person sees the policy.
const whereToLook = "chrome://policy in that browser shows it; the browser's administrator sets it"

func isPolicyCause(cause string) bool {
	switch cause {
	case causePolicyBlockedHost, causePolicyHostAccess, causePolicyScreenshots, causePolicyDevTools:
		return true
	}
	return false
}

// policyCauseOf reads a policy's cause from Chrome's error text for
// method ("" for an attach), or "" for any other error. "Cannot attach to
// this target." on a web page (the only tabs the relay attaches) is what
// DeveloperToolsAvailability gives; "Not allowed" for a navigation to a
// web page is what a blocked host gives.
func policyCauseOf(method, msg string) string {
	switch {
	case strings.Contains(msg, chromeBlockedHost):
		return causePolicyBlockedHost
	case strings.Contains(msg, chromeHostAccess):
		return causePolicyHostAccess
	case strings.Contains(msg, chromeScreenshots):
		return causePolicyScreenshots
	case method == "" && strings.TrimSpace(msg) == chromeCannotAttach:
		return causePolicyDevTools
	case method == "Page.navigate" && msg == chromeNotAllowed:
		return causePolicyBlockedHost
	}
	return ""
}

// policyName is the policy a cause comes from, for short records.
func policyName(cause string) string {
	switch cause {
	case causePolicyBlockedHost, causePolicyHostAccess:
		return "ExtensionSettings (runtime_blocked_hosts)"
	case causePolicyScreenshots:
		return "ScreenCaptureAllowed, DisableScreenshots or a data-loss-prevention rule"
	case causePolicyDevTools:
		return "DeveloperToolsAvailability"
	}
	return ""
}

// policyText says in words why Chrome refuses, which policy and where to
// look; "" for a cause that is not a policy's.
func policyText(cause string) string {
	switch cause {
	case causePolicyBlockedHost:
		return "a policy of the browser keeps extensions off this site (ExtensionSettings → runtime_blocked_hosts), so Chrome does not let cdprelay debug a tab on it or with a frame of it; " + whereToLook + ". The tab comes back as a new target once it is on a site the policy allows"
	case causePolicyHostAccess:
		return "a policy of the browser restricts which sites extensions may access (ExtensionSettings → runtime_blocked_hosts), and Chrome then lets no extension debug any tab; " + whereToLook
	case causePolicyScreenshots:
		return "a policy of the browser restricts screen capture (ScreenCaptureAllowed, DisableScreenshots or a data-loss-prevention rule), and Chrome then lets no extension debug any tab; " + whereToLook
	case causePolicyDevTools:
		return "Chrome refuses to debug web pages in this browser: a policy most likely turns developer tools off (DeveloperToolsAvailability); " + whereToLook
	}
	return ""
}

// explainPolicy adds the words of a policy's refusal to Chrome's error text
// for method ("" for an attach); any other text is returned as it is.
func explainPolicy(method, msg string) string {
	cause := policyCauseOf(method, msg)
	switch {
	case cause == "":
		return msg
	case method == "Page.navigate":
		return msg + " (cdprelay: Chrome does not let cdprelay take the tab there: a policy of the browser keeps extensions off that site (ExtensionSettings → runtime_blocked_hosts); " + whereToLook + ")"
	}
	return msg + " (cdprelay: " + policyText(cause) + ")"
}

// refusals are the tabs a policy kept the debugger out of, for the live
// view: the person reads there why the automation does not get a tab.
// Guarded by the instance's lock.
type refusals map[int64]policyRefused

type policyRefused struct {
	cause  string
	origin string // the tab's origin when it was refused ("" if not known)
	at     time.Time
	// command: a command failed on the attached tab, rather than an attach
	// or a detach; such a refusal is over when commands stop failing.
	command bool
}

// Bounds of the refusals kept: a browser whose policy refuses every tab
// refuses each of them once, and a person looks at the list later; a
// policy that makes an attached tab's commands fail does so on each.
const (
	maxRefusals         = 64
	refusalsKept        = time.Hour
	commandRefusalsKept = 2 * time.Minute
)

// RefusalStatus is one tab a policy of the browser keeps the debugger out
// of.
type RefusalStatus struct {
	TabID int64 `json:"tabId"`
	// Origin is the tab's origin when Chrome refused it.
	Origin string `json:"origin,omitempty"`
	// Policy names the policy; Reason says it in words, with where to
	// look.
	Policy string    `json:"policy"`
	Reason string    `json:"reason"`
	At     time.Time `json:"at"`
}

// noteRefusal records that a policy (cause) kept the debugger out of tab
// id, and audits it once per tab and cause.
func (st *state) noteRefusal(id int64, cause, url string) { st.noteRefused(id, cause, url, false) }

func (st *state) noteRefused(id int64, cause, url string, command bool) {
	if !isPolicyCause(cause) {
		return
	}
	if st.refusals == nil {
		st.refusals = refusals{}
	}
	now := time.Now()
	prev, seen := st.refusals[id]
	if o := origin(url); o != "" || !seen {
		prev.origin = o
	}
	st.refusals[id] = policyRefused{cause: cause, origin: prev.origin, at: now, command: command}
	if len(st.refusals) > maxRefusals {
		var oldest int64
		first := true
		for k, r := range st.refusals {
			if first || r.at.Before(st.refusals[oldest].at) {
				oldest, first = k, false
			}
		}
		delete(st.refusals, oldest)
	}
	if !seen || prev.cause != cause {
		st.observe(Event{Actor: ActorExtension, Kind: KindAttach, Outcome: OutcomeDenied, Rule: ruleBrowserPolicy,
			Detail: "Chrome refuses to debug a tab because of a policy of the browser: " + policyName(cause) + " (chrome://policy)"})
	}
}

// refusalsStatus lists the refusals still in force, oldest first: a tab
// refused an attach and attached since, or refused long ago, is left out
// (and dropped).
func (st *state) refusalsStatus() []RefusalStatus {
	var out []RefusalStatus
	now := time.Now()
	for id, r := range st.refusals {
		t := st.tabs[id]
		over := now.Sub(r.at) > refusalsKept || (!r.command && t != nil && t.state == tabAttached) ||
			(r.command && (t == nil || now.Sub(r.at) > commandRefusalsKept))
		if over {
			delete(st.refusals, id)
			continue
		}
		out = append(out, RefusalStatus{TabID: id, Origin: r.origin, Policy: policyName(r.cause), Reason: policyText(r.cause), At: r.at})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].At.Before(out[j].At) })
	return out
}

// notePolicyError records that a policy (cause) made a client command on t
// fail (a site the policy added while the tab was attached).
func (in *Instance) notePolicyError(t *tab, cause string) {
	if t == nil {
		return
	}
	st := in.lock()
	st.noteRefused(t.id, cause, st.targetInfo(t).URL, true)
	in.unlock()
}

// noteAttachRefusal records an attach Chrome refused because of a policy
// (for either extension), and returns err with the explanation added.
func (in *Instance) noteAttachRefusal(t *tab, err error) error {
	var e *ExtError
	if !errors.As(err, &e) {
		return err
	}
	cause := policyCauseOf("", e.Message)
	if cause == "" {
		return err
	}
	st := in.lock()
	st.noteRefusal(t.id, cause, st.targetInfo(t).URL)
	in.unlock()
	return &ExtError{Code: e.Code, Message: explainPolicy("", e.Message)}
}
