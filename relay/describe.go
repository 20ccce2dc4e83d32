package relay

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// What a held command would do, in a person's words: the card the live
// view shows says it. For a mouse press or a key, the relay looks at the
// page first (from its own isolated world): what is under the pointer, or
// what has the focus.

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

// lookAt asks the page what is where a mouse press would land, or what
// has the focus for a key, from the relay's own isolated world.
func (c *clientConn) lookAt(ctx context.Context, via *session, method string, params []byte) (pointTarget, error) {
	expr := focusTargetProbe
	if method == "Input.dispatchMouseEvent" {
		x, y := num(params, "x"), num(params, "y")
		if x == "?" || y == "?" {
			return pointTarget{}, errors.New("no point")
		}
		expr = "(" + pointProbe + ")(" + x + ", " + y + ")"
	}
	res, err := c.relayEval(ctx, via, expr)
	if err != nil {
		return pointTarget{}, err
	}
	var r struct {
		Result struct {
			Value pointTarget `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if json.Unmarshal(res, &r) != nil || r.ExceptionDetails != nil || r.Result.Value.Origin == "" {
		return pointTarget{}, errors.New("the page could not be looked at")
	}
	v := r.Result.Value
	v.Text = clipText(v.Text, 80)
	return v, nil
}

// pointProbe finds the element at a point of the viewport, going into
// frames of the same origin, and says what it is.
const pointProbe = `(x, y) => {
  let doc = document, origin = location.origin;
  const describe = (el) => {
    const c = el.closest("button, input, select, textarea, a[href], [role=button], [role=link], summary, label") || el;
    const tag = c.tagName.toLowerCase(), type = (c.getAttribute("type") || "").toLowerCase();
    let kind = tag, submit = false;
    if (tag === "button") { kind = "button"; submit = (type === "" || type === "submit") && !!c.form; }
    else if (tag === "input" && /^(submit|image)$/.test(type)) { kind = "button"; submit = !!c.form; }
    else if (tag === "input" && /^(button|reset)$/.test(type)) kind = "button";
    else if (/^(input|select|textarea)$/.test(tag)) kind = "field";
    else if (tag === "a" || c.getAttribute("role") === "link") kind = "link";
    else if (c.getAttribute("role") === "button") kind = "button";
    const text = c.getAttribute("aria-label") || (tag === "input" ? (c.value || c.getAttribute("placeholder") || c.name) : c.innerText) || c.getAttribute("title") || c.getAttribute("alt") || "";
    return { origin, kind, text: String(text).slice(0, 200), submit };
  };
  for (let depth = 0; depth < 32; depth++) {
    let el = doc.elementFromPoint(x, y);
    while (el && el.shadowRoot) {
      const inner = el.shadowRoot.elementFromPoint(x, y);
      if (!inner || inner === el) break;
      el = inner;
    }
    if (!el) return { origin, kind: "nothing" };
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) {}
      if (!inner) {
        let src = "";
        try { src = new URL(el.src, location.href).origin; } catch (e) {}
        return { origin, kind: "frame", frame: src };
      }
      const r = el.getBoundingClientRect();
      x -= r.left + el.clientLeft; y -= r.top + el.clientTop;
      doc = inner; origin = inner.location.origin;
      continue;
    }
    return describe(el);
  }
  return { origin, kind: "nothing" };
}`

// focusTargetProbe says what has the focus: whether Enter there submits a
// form.
const focusTargetProbe = `(() => {
  let doc = document, origin = location.origin;
  for (let depth = 0; depth < 32; depth++) {
    let el = doc.activeElement;
    while (el && el.shadowRoot && el.shadowRoot.activeElement) el = el.shadowRoot.activeElement;
    if (!el) break;
    if (el.tagName === "IFRAME" || el.tagName === "FRAME") {
      let inner = null;
      try { inner = el.contentDocument; } catch (e) {}
      if (!inner) return { origin, kind: "frame" };
      doc = inner; origin = inner.location.origin;
      continue;
    }
    const tag = el.tagName.toLowerCase(), type = (el.getAttribute("type") || "").toLowerCase();
    const submit = !!el.form && ((tag === "button" && (type === "" || type === "submit")) || (tag === "input" && /^(submit|image)$/.test(type)));
    const form = !!el.form && tag === "input" && !/^(button|reset|checkbox|radio|file|submit|image)$/.test(type);
    const text = el.getAttribute("aria-label") || el.getAttribute("placeholder") || el.name || el.innerText || "";
    return { origin, kind: tag, text: String(text).slice(0, 200), submit, form };
  }
  return { origin, kind: "nothing" };
})()`
