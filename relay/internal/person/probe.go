package person

import (
	"context"
	"errors"
	"strconv"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
	"github.com/cdprelay/cdprelay/relay/internal/look"
)

// What a held command would do, in a person's words: the card the live
// view shows says it (Description). For a mouse press or a key, the relay
// looks at the page first, from the browser's own answers (package
// look): what the browser's hit test finds under the pointer, or
// what has the focus, and what the accessibility tree calls it. Nothing
// the client can change in a world of script decides what the card says.

// probeThenAsk looks at the page where h would act, then asks the person
// (with what is there), or lets h go on when it only may have submitted a
// form and does not.
func probeThenAsk(c *core.ClientConn, h *core.HeldCmd, via *core.Session, desc Description) {
	in := c.Inst
	ctx, cancel := c.CallCtx()
	defer cancel()
	var seen core.SeenTarget
	err := errors.New("no page")
	if via != nil {
		seen, err = seenAt(ctx, c, via, h.Method, h.Cmd.Env.Params)
	}
	t := seen.Target
	desc.Looked, desc.Target = err == nil, t
	st := in.Lock()
	defer in.Unlock()
	if h.Stage != core.HoldProbing || !lines.Live(st, h.Key) {
		return // stopped, or the client went
	}
	h.Seen = seen // looked at again when a person approves (recheck.go)
	if h.Decision.Rule == RuleAskSubmit && err == nil && !t.Submit && !t.Form && t.Kind != "frame" {
		// Nothing a form would submit: on it goes.
		h.Stage, h.Approved = core.HoldWaiting, true
		lines.StartDrain(in, st, h.Key)
		return
	}
	askPerson(st, h, desc.Text())
}

// lookAt asks the browser what is where a mouse press would land, or
// what has the focus for a key.
func lookAt(ctx context.Context, c *core.ClientConn, via *core.Session, method string, params []byte) (api.PointTarget, error) {
	var v api.PointTarget
	if method == "Input.dispatchMouseEvent" {
		x, err1 := strconv.ParseFloat(Num(params, "x"), 64)
		y, err2 := strconv.ParseFloat(Num(params, "y"), 64)
		if err1 != nil || err2 != nil {
			return api.PointTarget{}, errors.New("no point")
		}
		t, err := look.PointAt(ctx, c, via, x, y)
		if err != nil {
			return api.PointTarget{}, err
		}
		v = t
	} else {
		lk, err := look.New(ctx, c, via)
		if err != nil {
			return api.PointTarget{}, err
		}
		defer lk.Close()
		f, err := lk.Focus(ctx)
		switch {
		case errors.Is(err, look.ErrNoFocus):
			c.Inst.Lock()
			v = api.PointTarget{Origin: via.Tab.Ctxs.FrameOrigin(lk.Sid, lk.Frame), Kind: "nothing"}
			c.Inst.Unlock()
		case err != nil:
			return api.PointTarget{}, err
		default:
			if v, err = look.PersonsView(ctx, c, lk.T, lk.Sid, f.Origin, f.El); err != nil {
				return api.PointTarget{}, err
			}
		}
	}
	if v.Origin == "" {
		return api.PointTarget{}, errors.New("the page could not be looked at")
	}
	v.Text = ClipText(v.Text, 80)
	return v, nil
}
