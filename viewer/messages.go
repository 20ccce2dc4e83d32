package viewer

import (
	"encoding/json"
	"time"

	"github.com/cdprelay/cdprelay/screencast"
)

// Message types of the viewer protocol (PROTOCOL.md).
const (
	// viewer → server
	msgList        = "list"
	msgSubscribe   = "subscribe"
	msgUnsubscribe = "unsubscribe"
	msgInput       = "input"
	msgTakeControl = "take-control"
	msgHandBack    = "hand-back"
	msgStop        = "stop"
	msgResume      = "resume"
	msgDialog      = "answer-dialog"
	msgApprove     = "approve"
	msgDeny        = "deny"

	// server → viewer
	msgHello     = "hello"
	msgInstances = "instances"
	msgStatus    = "status"
	msgFrame     = "frame"
	msgError     = "error"
	msgControl   = "control"
)

// request is any message a viewer sends.
type request struct {
	Type     string `json:"type"`
	ID       int64  `json:"id,omitempty"` // echoed in an error about this request
	Instance string `json:"instance,omitempty"`
	Tab      int64  `json:"tab,omitempty"`
	Input    *Input `json:"input,omitempty"`
	// answer-dialog: the dialog's id (0: whichever the tab shows), the
	// answer and a prompt's text.
	Dialog     int64  `json:"dialog,omitempty"`
	Accept     *bool  `json:"accept,omitempty"`
	PromptText string `json:"promptText,omitempty"`
	// approve, deny: the approval's id.
	Approval int64 `json:"approval,omitempty"`
}

type helloMsg struct {
	Type        string `json:"type"`
	Viewer      string `json:"viewer"`
	Interactive bool   `json:"interactive"`
	// Hint tells a view-only viewer why, and how the person acts.
	Hint string `json:"hint,omitempty"`
	// KeyRefused: the person key it offered is not the relay's.
	KeyRefused bool `json:"keyRefused,omitempty"`
}

type instancesMsg struct {
	Type      string         `json:"type"`
	Instances []instanceView `json:"instances"`
}

type instanceView struct {
	ID        string    `json:"id"`
	Default   bool      `json:"default"`
	Extension bool      `json:"extension"`
	Ready     bool      `json:"ready"`
	Client    bool      `json:"client"`
	Browser   string    `json:"browser,omitempty"`
	Tabs      []tabView `json:"tabs"`
	// Stopped: a person stopped the automation (StoppedBy).
	Stopped   bool   `json:"stopped"`
	StoppedBy string `json:"stoppedBy,omitempty"`
	// Approvals are the commands waiting for a person's approval.
	Approvals []approvalView `json:"approvals"`
	// Refused are the tabs a policy of the browser keeps the debugger
	// out of: which policy, and where the person looks (chrome://policy).
	Refused []refusedView `json:"refused,omitempty"`
}

type refusedView struct {
	Tab    int64  `json:"tab"`
	Origin string `json:"origin,omitempty"`
	Policy string `json:"policy"`
	Reason string `json:"reason"`
}

type approvalView struct {
	ID        int64     `json:"id"`
	Tab       int64     `json:"tab,omitempty"`
	What      string    `json:"what"`
	Method    string    `json:"method"`
	AskedAt   time.Time `json:"askedAt"`
	ExpiresAt time.Time `json:"expiresAt"`
}

type dialogView struct {
	ID            int64  `json:"id"`
	Type          string `json:"type"`
	Message       string `json:"message"`
	DefaultPrompt string `json:"defaultPrompt,omitempty"`
	AnsweredBy    string `json:"answeredBy,omitempty"`
}

type tabView struct {
	ID           int64  `json:"id"`
	URL          string `json:"url"`
	Title        string `json:"title"`
	Attached     bool   `json:"attached"`
	Status       string `json:"status"`
	ControlledBy string `json:"controlledBy,omitempty"`
	Viewers      int    `json:"viewers"`
	// Access is what automation may do with the tab: full, read-only or
	// blind (then the live view shows nothing of it either).
	Access string `json:"access,omitempty"`
	// Detached is why the browser last let go of the tab while it stays
	// shared (another extension's frame, a browser page): what the person
	// reads when the automation lost it. Empty while it is attached.
	Detached string      `json:"detached,omitempty"`
	Dialog   *dialogView `json:"dialog,omitempty"`
}

// Tab statuses in the instances list besides the screencast's own.
const (
	// statusIdle: nobody watches the tab, so nothing is screencast.
	statusIdle = "idle"
	// statusUnsubscribed answers an unsubscribe.
	statusUnsubscribed = "unsubscribed"
)

type statusMsg struct {
	Type     string `json:"type"`
	Instance string `json:"instance"`
	Tab      int64  `json:"tab"`
	Status   string `json:"status"`
}

// frameMsg precedes each binary JPEG message.
type frameMsg struct {
	Type     string  `json:"type"`
	Instance string  `json:"instance"`
	Tab      int64   `json:"tab"`
	Seq      uint64  `json:"seq"`
	Width    int     `json:"width"`
	Height   int     `json:"height"`
	DeviceW  float64 `json:"deviceWidth"`
	DeviceH  float64 `json:"deviceHeight"`
	PageSF   float64 `json:"pageScaleFactor"`
	Offset   float64 `json:"offsetTop"`
	ScrollX  float64 `json:"scrollX"`
	ScrollY  float64 `json:"scrollY"`
	Time     float64 `json:"timestamp,omitempty"`
	Bytes    int     `json:"bytes"`
	ClientSC bool    `json:"clientScreencast,omitempty"`
}

type errorMsg struct {
	Type    string `json:"type"`
	Message string `json:"message"`
	Request string `json:"request,omitempty"` // the type of the request refused
	ID      int64  `json:"id,omitempty"`
}

type controlMsg struct {
	Type     string `json:"type"`
	Instance string `json:"instance"`
	Tab      int64  `json:"tab"`
	Holder   string `json:"holder"` // "" when automation has the tab
}

func newFrameMsg(instance string, tab int64, f *screencast.Frame) frameMsg {
	md := f.Metadata
	return frameMsg{
		Type: msgFrame, Instance: instance, Tab: tab, Seq: f.Seq,
		Width: f.Width, Height: f.Height,
		DeviceW: md.DeviceWidth, DeviceH: md.DeviceHeight,
		PageSF: md.PageScaleFactor, Offset: md.OffsetTop,
		ScrollX: md.ScrollOffsetX, ScrollY: md.ScrollOffsetY,
		Time: md.Timestamp, Bytes: len(f.JPEG), ClientSC: f.ClientOwned,
	}
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		// Every message type here marshals; a failure is a programming error.
		panic(err)
	}
	return b
}
