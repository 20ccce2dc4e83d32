package cdp

import "strings"

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
// Chrome's text itself (PolicyCauseOf). Either way the relay says in words
// which policy and where to look: in the client's error or console, the
// audit log, and the live view (the browser stage's refusals.go keeps the
// refusals per tab).

// Causes of a policy's refusal, as our extension reports them.
const (
	CausePolicyBlockedHost = "policy_blocked_host"
	CausePolicyHostAccess  = "policy_host_access"
	CausePolicyScreenshots = "policy_screenshots"
	CausePolicyDevTools    = "policy_devtools"
)

// Chrome's texts for those refusals.
const (
	chromeBlockedHost  = "cannot be scripted due to an ExtensionsSettings policy"
	chromeHostAccess   = "Host access is restricted by policy"
	chromeScreenshots  = "Screenshot capture is restricted by policy"
	chromeCannotAttach = "Cannot attach to this target."
	chromeNotAllowed   = "Not allowed"
)

// RuleBrowserPolicy names the browser's policy in audit records: the
// refusal is Chrome's, not one of the relay's rules.
const RuleBrowserPolicy = "browser-policy"

// whereToLook ends every explanation: where the person sees the policy.
const whereToLook = "chrome://policy in that browser shows it; the browser's administrator sets it"

// IsPolicyCause reports whether cause is one of a policy's (the
// CausePolicy constants).
func IsPolicyCause(cause string) bool {
	switch cause {
	case CausePolicyBlockedHost, CausePolicyHostAccess, CausePolicyScreenshots, CausePolicyDevTools:
		return true
	}
	return false
}

// PolicyCauseOf reads a policy's cause from Chrome's error text for
// method ("" for an attach), or "" for any other error. "Cannot attach to
// this target." on a web page (the only tabs the relay attaches) is what
// DeveloperToolsAvailability gives; "Not allowed" for a navigation to a
// web page is what a blocked host gives.
func PolicyCauseOf(method, msg string) string {
	switch {
	case strings.Contains(msg, chromeBlockedHost):
		return CausePolicyBlockedHost
	case strings.Contains(msg, chromeHostAccess):
		return CausePolicyHostAccess
	case strings.Contains(msg, chromeScreenshots):
		return CausePolicyScreenshots
	case method == "" && strings.TrimSpace(msg) == chromeCannotAttach:
		return CausePolicyDevTools
	case method == "Page.navigate" && msg == chromeNotAllowed:
		return CausePolicyBlockedHost
	}
	return ""
}

// PolicyName is the policy a cause comes from, for short records; "" for
// a cause that is not a policy's.
func PolicyName(cause string) string {
	switch cause {
	case CausePolicyBlockedHost, CausePolicyHostAccess:
		return "ExtensionSettings (runtime_blocked_hosts)"
	case CausePolicyScreenshots:
		return "ScreenCaptureAllowed, DisableScreenshots or a data-loss-prevention rule"
	case CausePolicyDevTools:
		return "DeveloperToolsAvailability"
	}
	return ""
}

// PolicyText says in words why Chrome refuses, which policy and where to
// look; "" for a cause that is not a policy's.
func PolicyText(cause string) string {
	switch cause {
	case CausePolicyBlockedHost:
		return "a policy of the browser keeps extensions off this site (ExtensionSettings → runtime_blocked_hosts), so Chrome does not let cdprelay debug a tab on it or with a frame of it; " + whereToLook + ". The tab comes back as a new target once it is on a site the policy allows"
	case CausePolicyHostAccess:
		return "a policy of the browser restricts which sites extensions may access (ExtensionSettings → runtime_blocked_hosts), and Chrome then lets no extension debug any tab; " + whereToLook
	case CausePolicyScreenshots:
		return "a policy of the browser restricts screen capture (ScreenCaptureAllowed, DisableScreenshots or a data-loss-prevention rule), and Chrome then lets no extension debug any tab; " + whereToLook
	case CausePolicyDevTools:
		return "Chrome refuses to debug web pages in this browser: a policy most likely turns developer tools off (DeveloperToolsAvailability); " + whereToLook
	}
	return ""
}

// ExplainPolicy adds the words of a policy's refusal to Chrome's error
// text for method ("" for an attach); any other text is returned as it
// is.
func ExplainPolicy(method, msg string) string {
	cause := PolicyCauseOf(method, msg)
	switch {
	case cause == "":
		return msg
	case method == "Page.navigate":
		return msg + " (cdprelay: Chrome does not let cdprelay take the tab there: a policy of the browser keeps extensions off that site (ExtensionSettings → runtime_blocked_hosts); " + whereToLook + ")"
	}
	return msg + " (cdprelay: " + PolicyText(cause) + ")"
}
