package person

import (
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// What a held command would do, in a person's words: the card the live
// view shows says it. For a mouse press or a key, the relay looks at the
// page first, from the browser's own answers: what the browser's hit test
// finds under the pointer, or what has the focus, and what the
// accessibility tree calls it (api.PointTarget). Nothing the client can change
// in a world of script decides what the card says.

// Description is what the relay knows to say what a command would do.
type Description struct {
	Method string
	Origin string   // of the tab's page
	URL    string   // the URL the command carries (Page.navigate, Target.createTarget)
	Files  []string // the files it makes the page read (an upload, a drop)
	Params []byte   // the command's params, as the client sent them
	// From looking at the page.
	Looked bool
	Target api.PointTarget
}

// Text says in a person's words what the command would do.
func (d Description) Text() string {
	on := ""
	if d.Origin != "" {
		on = " on " + hostOf(d.Origin)
	}
	if d.Looked && d.Target.Origin != "" && d.Target.Origin != d.Origin {
		on = " in a frame of " + hostOf(d.Target.Origin) + on
	}
	p := d.Params
	switch d.Method {
	case "Page.navigate":
		return "navigate to " + ClipText(d.URL, 200)
	case "Target.createTarget":
		u := d.URL
		if u == "" {
			u = "about:blank"
		}
		return "open a new tab at " + ClipText(u, 200)
	case "DOM.setFileInputFiles", "Input.dispatchDragEvent":
		var names []string
		for _, f := range d.Files {
			names = append(names, filepath.Base(f))
		}
		if len(names) == 0 {
			return "drop onto the page" + on
		}
		return "upload " + ClipText(strings.Join(names, ", "), 120) + on
	case "Input.insertText":
		text := string(wire.StringField(p, "text"))
		into := ""
		if d.Looked && d.Target.Kind != "nothing" && d.Target.Kind != "" {
			into = " into the " + d.Target.Kind
			if d.Target.Text != "" {
				into += " \"" + d.Target.Text + "\""
			}
		}
		if name, ok := secretName(text); ok {
			return "type the secret " + name + into + on
		}
		return "type \"" + ClipText(text, 60) + "\"" + into + on
	case "Input.dispatchMouseEvent":
		if !d.Looked {
			return "click at (" + Num(p, "x") + ", " + Num(p, "y") + ")" + on
		}
		switch t := d.Target; t.Kind {
		case "frame":
			return "click inside a frame from " + hostOf(t.Frame) + on + " (cdprelay cannot see what is there)"
		case "nothing", "":
			return "click at (" + Num(p, "x") + ", " + Num(p, "y") + ")" + on
		case "button", "link", "field":
			what := "click the " + t.Kind
			if t.Submit {
				what = "click the submit button"
			}
			if t.Text != "" {
				what += " \"" + t.Text + "\""
			}
			return what + on
		default:
			if t.Text != "" {
				return "click \"" + t.Text + "\"" + on
			}
			return "click a " + t.Kind + " element" + on
		}
	case "Input.dispatchKeyEvent":
		key := string(wire.StringField(p, "key"))
		if key == "" {
			key = string(wire.StringField(p, "text"))
		}
		if key == "\r" {
			key = "Enter"
		}
		what := "press " + ClipText(key, 20)
		if d.Looked && d.Target.Form {
			what += " in the field"
			if d.Target.Text != "" {
				what += " \"" + d.Target.Text + "\""
			}
			return what + " of a form" + on + " (it submits the form)"
		}
		return what + on
	case "Input.dispatchTouchEvent":
		return "tap the page" + on
	}
	return d.Method + on
}

func secretName(text string) (string, bool) {
	if strings.HasPrefix(text, "{{secret:") && strings.HasSuffix(text, "}}") {
		return text[len("{{secret:") : len(text)-2], true
	}
	return "", false
}

// Num is the number field key of the JSON object p, as a person reads it;
// "?" when it is missing or not a number.
func Num(p []byte, key string) string {
	v := wire.Field(p, key)
	if v == nil {
		return "?"
	}
	if f, err := strconv.ParseFloat(string(v), 64); err == nil {
		return strconv.FormatFloat(f, 'f', -1, 64)
	}
	return "?"
}

func hostOf(u string) string {
	if i := strings.Index(u, "://"); i >= 0 {
		h := u[i+3:]
		if j := strings.IndexAny(h, "/?#"); j >= 0 {
			h = h[:j]
		}
		return h
	}
	return u
}

// ClipText keeps text for a person short and on one line: its runs of
// white space become one space, and it is cut after max runes (with an
// ellipsis).
func ClipText(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}
