package api

// Rule ids and messages that the relay's core and more than one of its
// concerns give: a rule id is a bounded label of records and metrics, a
// message is what the client is told.

// MsgStopped is what a command refused or failed because a person stopped
// the automation says: the refusal of a new command and the error of every
// call still waiting when the Stop came.
const MsgStopped = "cdprelay: a person stopped the automation"

// RuleStopped is the rule id of a command refused while stopped.
const RuleStopped = "relay:stopped"

// RuleTakeOver is the rule id of what a person's take-over refuses.
const RuleTakeOver = "relay:take-over"

// The rule ids of a tab's access: a page never shared (a browser or
// extension page, a file, the relay's own), one outside the URL fence, a
// read-only tab's refusal of what would act on it, a frame on a blind
// site.
const (
	RuleNeverShared  = "relay:page-never-shared"
	RuleOutsideFence = "relay:outside-allowed-hosts"
	RuleReadOnly     = "relay:read-only"
	RuleBlindFrame   = "relay:blind-frame"
)

// RuleContext is the rule id of a command that names one of the relay's
// own worlds (the tiers' context guard).
const RuleContext = "relay:context"

// The credentials' rule ids, which the relay's own rules list names and
// the operator's HeapProfiler check uses: a secret typed by reference, the
// credentials a request carries, a page whose password field holds a
// secret, what the relay could not scan for one.
const (
	RuleSecret      = "relay:secret"
	RuleCredentials = "relay:credentials"
	RuleSecretField = "relay:secret-field"
	RuleUnscannable = "relay:secret-unscannable"
)

// MsgControlledWhy is what a refusal on a tab a person holds says, after
// "cdprelay: ".
const MsgControlledWhy = "a person has taken control of this tab from the live view; automation may read it but not act on it until they hand it back"

// RuleBreakpointCondition is the rule id of a refusal of a breakpoint's
// condition while the policy has tiers, a label value of
// cdprelay_policy_refusals_total beside the policy's.
const RuleBreakpointCondition = "relay:breakpoint-condition"

// PausedRequest is what the relay reads of Fetch.requestPaused (the
// navigation backstop, a person's navigation ask, the tiers' hold of a
// document). The event comes from Chrome, not the client.
type PausedRequest struct {
	RequestID string `json:"requestId"`
	FrameID   string `json:"frameId"`
	Request   struct {
		URL         string            `json:"url"`
		Fragment    string            `json:"urlFragment"`
		Method      string            `json:"method"`
		Headers     map[string]string `json:"headers"`
		HasPostData bool              `json:"hasPostData"`
	} `json:"request"`
	ResourceType        string `json:"resourceType"`
	ResponseStatusCode  *int   `json:"responseStatusCode"`
	ResponseErrorReason string `json:"responseErrorReason"`
}

// RuleDialogAnswered is the rule id of the automation's answer to a
// dialog someone answered first.
const RuleDialogAnswered = "relay:dialog-answered"

// Who answered a dialog, as metrics and records name them.
const (
	DialogByAutomation = "automation"
	DialogByPerson     = "person"
	DialogByTimeout    = "timeout"
	DialogByPage       = "page" // it closed without an answer through the relay
)

// DialogAnswerers lists who may answer a dialog, for counters that start
// at zero.
var DialogAnswerers = []string{DialogByAutomation, DialogByPerson, DialogByTimeout, DialogByPage}

// The answers to a command held for a person's approval, as metrics and
// records name them.
const (
	AnswerApproved = "approved"
	AnswerDenied   = "denied"
	AnswerTimeout  = "timeout"
	AnswerStopped  = "stopped"
	AnswerGone     = "gone"
)

// ApprovalAnswers lists every answer to an approval, for counters that
// start at zero.
var ApprovalAnswers = []string{AnswerApproved, AnswerDenied, AnswerTimeout, AnswerStopped, AnswerGone}
