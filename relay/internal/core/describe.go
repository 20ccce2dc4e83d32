package core

import (
	"context"
	"errors"
	"strconv"

	"github.com/cdprelay/cdprelay/relay/internal/person"
)

// What a held command would do, in a person's words: the card the live
// view shows says it (person.Description). For a mouse press or a key, the
// relay looks at the page first, from the browser's own answers
// (relayworld.go): what the browser's hit test finds under the pointer, or
// what has the focus, and what the accessibility tree calls it. Nothing
// the client can change in a world of script decides what the card says.

// probeThenAsk looks at the page where h would act, then asks the person
// (with what is there), or lets h go on when it only may have submitted a
// form and does not.
func (c *ClientConn) probeThenAsk(h *heldCmd, via *Session, desc person.Description) {
	in := c.Inst
	ctx, cancel := c.CallCtx()
	defer cancel()
	var seen seenTarget
	err := errors.New("no page")
	if via != nil {
		seen, err = c.look(ctx, via, h.Method, h.k.Env.Params)
	}
	t := seen.target
	desc.Looked, desc.Target = err == nil, t
	st := in.Lock()
	defer in.Unlock()
	if h.Stage != HoldProbing || st.Lines[h.Key] == nil {
		return // stopped, or the client went
	}
	h.seen = seen // looked at again when a person approves (recheck.go)
	if h.d.Rule == person.RuleAskSubmit && err == nil && !t.Submit && !t.Form && t.Kind != "frame" {
		// Nothing a form would submit: on it goes.
		h.Stage, h.approved = HoldWaiting, true
		in.StartDrain(st, h.Key)
		return
	}
	st.askPerson(h, desc.Text())
}

// lookAt asks the browser what is where a mouse press would land, or
// what has the focus for a key.
func (c *ClientConn) lookAt(ctx context.Context, via *Session, method string, params []byte) (person.PointTarget, error) {
	var v person.PointTarget
	if method == "Input.dispatchMouseEvent" {
		x, err1 := strconv.ParseFloat(person.Num(params, "x"), 64)
		y, err2 := strconv.ParseFloat(person.Num(params, "y"), 64)
		if err1 != nil || err2 != nil {
			return person.PointTarget{}, errors.New("no point")
		}
		t, err := c.pointAt(ctx, via, x, y)
		if err != nil {
			return person.PointTarget{}, err
		}
		v = t
	} else {
		look, err := c.NewLook(ctx, via)
		if err != nil {
			return person.PointTarget{}, err
		}
		defer look.Close()
		f, err := look.Focus(ctx)
		switch {
		case errors.Is(err, ErrNoFocus):
			c.Inst.Lock()
			v = person.PointTarget{Origin: via.Tab.frameOrigin(look.Sid, look.frame), Kind: "nothing"}
			c.Inst.Unlock()
		case err != nil:
			return person.PointTarget{}, err
		default:
			if v, err = c.personsView(ctx, look.T, look.Sid, f.Origin, f.El); err != nil {
				return person.PointTarget{}, err
			}
		}
	}
	if v.Origin == "" {
		return person.PointTarget{}, errors.New("the page could not be looked at")
	}
	v.Text = person.ClipText(v.Text, 80)
	return v, nil
}
