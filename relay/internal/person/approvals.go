package person

import (
	"github.com/cdprelay/cdprelay/internal/wire"
)

// Approvals: what of a command a person is asked about, and how the
// asking ends.
//
// An input event is asked when it acts (a mouse press, a key down, a touch
// start, a drop); the moves and releases around it wait in line. With
// Asker.AsksSubmit, the relay looks at the page before a mouse press and
// before Enter (SubmitLike): a press on a form's submit control, a press
// into a frame of another origin (whose controls it cannot see), and Enter
// in a form's field are asked.

// RuleAskSubmit is the rule id of a command asked because it may submit
// a form.
const RuleAskSubmit = "ask:submit"

// Acts reports whether the command method with params does something to
// the page an ask is about: for input events, the one that acts; the rest
// of their sequence waits in line.
func Acts(method string, params []byte) bool {
	switch method {
	case "Input.dispatchMouseEvent":
		return string(wire.StringField(params, "type")) == "mousePressed"
	case "Input.dispatchKeyEvent":
		switch string(wire.StringField(params, "type")) {
		case "keyDown", "rawKeyDown", "char":
			return true
		}
		return false
	case "Input.dispatchTouchEvent":
		return string(wire.StringField(params, "type")) == "touchStart"
	case "Input.dispatchDragEvent":
		return string(wire.StringField(params, "type")) == "drop"
	}
	return true
}

// SubmitLike reports whether the command method with params p may submit
// a form: a mouse press, or Enter.
func SubmitLike(method string, p []byte) bool {
	switch method {
	case "Input.dispatchMouseEvent":
		return string(wire.StringField(p, "type")) == "mousePressed"
	case "Input.dispatchKeyEvent":
		switch string(wire.StringField(p, "type")) {
		case "keyDown", "rawKeyDown", "char":
		default:
			return false
		}
		code, _ := wire.Int(wire.Field(p, "windowsVirtualKeyCode"))
		return string(wire.StringField(p, "key")) == "Enter" || string(wire.StringField(p, "code")) == "Enter" ||
			code == 13 || string(wire.StringField(p, "text")) == "\r"
	}
	return false
}

// LooksFirst reports whether the relay looks at the page before it asks
// about method, so that the card names what it acts on.
func LooksFirst(method string) bool {
	return method == "Input.dispatchMouseEvent" || method == "Input.dispatchKeyEvent" || method == "Input.insertText"
}

// RuleChanged is the rule id of an approved command refused because the
// page changed, since the card, where it acts.
const RuleChanged = "relay:changed-since-approval"
