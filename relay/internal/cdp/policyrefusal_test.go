package cdp

import "testing"

// TestPolicyCauseOf: which of Chrome's texts are a policy's.
func TestPolicyCauseOf(t *testing.T) {
	t.Parallel()
	tests := []struct{ method, msg, cause string }{
		{"", "This page cannot be scripted due to an ExtensionsSettings policy.", CausePolicyBlockedHost},
		{"Runtime.evaluate", "This page cannot be scripted due to an ExtensionsSettings policy.", CausePolicyBlockedHost},
		{"", "Cannot attach to this target.", CausePolicyDevTools},
		{"", " Cannot attach to this target. ", CausePolicyDevTools},
		{"Runtime.evaluate", "Cannot attach to this target.", ""},
		{"", "Host access is restricted by policy.", CausePolicyHostAccess},
		{"", "Screenshot capture is restricted by policy.", CausePolicyScreenshots},
		{"Page.navigate", "Not allowed", CausePolicyBlockedHost},
		{"Page.reload", "Not allowed", ""},
		{"", "Not allowed", ""},
		{"", "The extensions gallery cannot be scripted.", ""},
		{"", "Cannot access a chrome:// URL", ""},
		{"", "Cannot access a chrome-extension:// URL of different extension", ""},
		{"", "", ""},
	}
	for _, tt := range tests {
		if got := PolicyCauseOf(tt.method, tt.msg); got != tt.cause {
			t.Errorf("PolicyCauseOf(%q, %q) = %q, want %q", tt.method, tt.msg, got, tt.cause)
		}
		if tt.cause != "" && (PolicyText(tt.cause) == "" || PolicyName(tt.cause) == "" || !IsPolicyCause(tt.cause)) {
			t.Errorf("%s has no words", tt.cause)
		}
	}
	if got := ExplainPolicy("", "Cannot access a chrome:// URL"); got != "Cannot access a chrome:// URL" {
		t.Errorf("another error changed: %q", got)
	}
}
