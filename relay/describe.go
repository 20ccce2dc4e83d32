package relay

import (
	"context"
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// What a held command would do, in a person's words: the card the live
// view shows says it. For a mouse press or a key, the relay looks at the
// page first, from the browser's own answers (relayworld.go): what the
// browser's hit test finds under the pointer, or what has the focus, and
// what the accessibility tree calls it. Nothing the client can change in
// a world of script decides what the card says.

// description is what the relay knows to say what a command would do.
type description struct {
	method string
	origin string // of the tab's page
	a      args
	params []byte
	// From looking at the page.
	looked bool
	target pointTarget
}

// pointTarget is what the page has at a point, or in focus.
type pointTarget struct {
	Origin string `json:"origin"`
	Kind   string `json:"kind"` // button, link, field, frame, nothing, or a tag name
	Text   string `json:"text"`
	Submit bool   `json:"submit"`
	Frame  string `json:"frame"` // the src of a frame the relay cannot look into
	Form   bool   `json:"form"`  // a field of a form (for Enter)
}

// text says in a person's words what the command would do.
func (d description) text() string {
	on := ""
	if d.origin != "" {
		on = " on " + hostOf(d.origin)
	}
	if d.looked && d.target.Origin != "" && d.target.Origin != d.origin {
		on = " in a frame of " + hostOf(d.target.Origin) + on
	}
	p := d.params
	switch d.method {
	case "Page.navigate":
		return "navigate to " + clipText(d.a.url, 200)
	case "Target.createTarget":
		u := d.a.url
		if u == "" {
			u = "about:blank"
		}
		return "open a new tab at " + clipText(u, 200)
	case "DOM.setFileInputFiles", "Input.dispatchDragEvent":
		var names []string
		for _, f := range d.a.files {
			names = append(names, filepath.Base(f))
		}
		if len(names) == 0 {
			return "drop onto the page" + on
		}
		return "upload " + clipText(strings.Join(names, ", "), 120) + on
	case "Input.insertText":
		text := string(wire.StringField(p, "text"))
		into := ""
		if d.looked && d.target.Kind != "nothing" && d.target.Kind != "" {
			into = " into the " + d.target.Kind
			if d.target.Text != "" {
				into += " \"" + d.target.Text + "\""
			}
		}
		if name, ok := secretName(text); ok {
			return "type the secret " + name + into + on
		}
		return "type \"" + clipText(text, 60) + "\"" + into + on
	case "Input.dispatchMouseEvent":
		if !d.looked {
			return "click at (" + num(p, "x") + ", " + num(p, "y") + ")" + on
		}
		switch t := d.target; t.Kind {
		case "frame":
			return "click inside a frame from " + hostOf(t.Frame) + on + " (cdprelay cannot see what is there)"
		case "nothing", "":
			return "click at (" + num(p, "x") + ", " + num(p, "y") + ")" + on
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
		what := "press " + clipText(key, 20)
		if d.looked && d.target.Form {
			what += " in the field"
			if d.target.Text != "" {
				what += " \"" + d.target.Text + "\""
			}
			return what + " of a form" + on + " (it submits the form)"
		}
		return what + on
	case "Input.dispatchTouchEvent":
		return "tap the page" + on
	}
	return d.method + on
}

func secretName(text string) (string, bool) {
	if strings.HasPrefix(text, "{{secret:") && strings.HasSuffix(text, "}}") {
		return text[len("{{secret:") : len(text)-2], true
	}
	return "", false
}

func num(p []byte, key string) string {
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

// clipText keeps text for a person short and on one line.
func clipText(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > max {
		return string(r[:max]) + "…"
	}
	return s
}

// probeThenAsk looks at the page where h would act, then asks the person
// (with what is there), or lets h go on when it only may have submitted a
// form and does not.
func (c *clientConn) probeThenAsk(h *heldCmd, via *session, desc description) {
	in := c.inst
	ctx, cancel := c.callCtx()
	defer cancel()
	var seen seenTarget
	err := errors.New("no page")
	if via != nil {
		seen, err = c.look(ctx, via, h.method, h.k.env.Params)
	}
	t := seen.target
	desc.looked, desc.target = err == nil, t
	st := in.lock()
	defer in.unlock()
	if h.stage != holdProbing || st.lines[h.key] == nil {
		return // stopped, or the client went
	}
	h.seen = seen // looked at again when a person approves (recheck.go)
	if h.d.Rule == ruleAskSubmit && err == nil && !t.Submit && !t.Form && t.Kind != "frame" {
		// Nothing a form would submit: on it goes.
		h.stage, h.approved = holdWaiting, true
		in.startDrain(st, h.key)
		return
	}
	st.askPerson(h, desc.text())
}

// lookAt asks the browser what is where a mouse press would land, or
// what has the focus for a key.
func (c *clientConn) lookAt(ctx context.Context, via *session, method string, params []byte) (pointTarget, error) {
	var v pointTarget
	if method == "Input.dispatchMouseEvent" {
		x, err1 := strconv.ParseFloat(num(params, "x"), 64)
		y, err2 := strconv.ParseFloat(num(params, "y"), 64)
		if err1 != nil || err2 != nil {
			return pointTarget{}, errors.New("no point")
		}
		t, err := c.pointAt(ctx, via, x, y)
		if err != nil {
			return pointTarget{}, err
		}
		v = t
	} else {
		look, err := c.newLook(ctx, via)
		if err != nil {
			return pointTarget{}, err
		}
		defer look.close()
		f, err := look.focus(ctx)
		switch {
		case errors.Is(err, errNoFocus):
			c.inst.lock()
			v = pointTarget{Origin: via.tab.frameOrigin(look.sid, look.frame), Kind: "nothing"}
			c.inst.unlock()
		case err != nil:
			return pointTarget{}, err
		default:
			if v, err = c.personsView(ctx, look.t, look.sid, f.origin, f.el); err != nil {
				return pointTarget{}, err
			}
		}
	}
	if v.Origin == "" {
		return pointTarget{}, errors.New("the page could not be looked at")
	}
	v.Text = clipText(v.Text, 80)
	return v, nil
}
