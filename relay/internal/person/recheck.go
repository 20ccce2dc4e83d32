package person

import (
	"context"
	"errors"
	"math"
	"strconv"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/lines"
	"github.com/cdprelay/cdprelay/relay/internal/look"
)

// What the person approved is what happens.
//
// An approval card names what a held input command would act on: the
// element under the pointer for a mouse press, the focused field for a key
// or typed text (describe.go). Between the card and the approval the page
// may change — its layout shifts, it scrolls, an element is swapped for
// another under the point, a frame moves in, the focus moves to another
// form — and the command, sent as it was, would act on something else.
// So when a person approves such a command, the relay looks again, with
// the same describing function, right before it goes on: if what is there
// is not what the card named (its description, and the element itself,
// by Chrome's own id of it), the command is refused, saying what changed.
// The release that follows an approved press is looked at the same way:
// it must land on the element the press did.
//
// The element's identity comes from Chrome, not from the page's script: the
// node at a point is asked with DOM.getNodeForLocation; the focused element
// is found in a world the relay makes for the look and identified with
// DOM.describeNode.
// What remains is the instant between the last look and the command: a
// page that changes in those few milliseconds is not caught.

// pressRecord is an approved mouse press on a tab, which the release that
// follows must match.
type pressRecord struct {
	seen core.SeenTarget
	what string // the card's words
}

// seenAt is lookAt's look at the page, with the element's identity.
func seenAt(ctx context.Context, c *core.ClientConn, via *core.Session, method string, params []byte) (core.SeenTarget, error) {
	t, err := lookAt(ctx, c, via, method, params)
	if err != nil {
		return core.SeenTarget{Via: via}, err
	}
	s := core.SeenTarget{OK: true, Target: t, Via: via}
	s.Node, _ = identify(ctx, c, via, method, params)
	return s, nil
}

// identify returns Chrome's id of the element a command would act on: the
// node at a mouse event's point, or the focused element.
func identify(ctx context.Context, c *core.ClientConn, via *core.Session, method string, params []byte) (int64, error) {
	x := c.Ext()
	sid := ""
	if via.Child {
		sid = via.Id
	}
	if method == "Input.dispatchMouseEvent" {
		px, errx := strconv.ParseFloat(string(wire.Field(params, "x")), 64)
		py, erry := strconv.ParseFloat(string(wire.Field(params, "y")), 64)
		if errx != nil || erry != nil || math.IsNaN(px) || math.IsNaN(py) {
			return 0, errors.New("no point")
		}
		res, err := x.SendCommand(ctx, via.Tab.Id, sid, "DOM.getNodeForLocation", map[string]any{
			"x": int64(math.Floor(px)), "y": int64(math.Floor(py)), "includeUserAgentShadowDOM": true, "ignorePointerEventsNone": false,
		})
		if err != nil {
			return 0, err
		}
		n, _ := wire.Int(wire.Field(res, "backendNodeId"))
		return n, nil
	}
	// The focused element, through shadow roots and frames of the same
	// origin, found in a world of the relay's own made for this look
	// (package look), as describe.go found it.
	lk, err := look.New(ctx, c, via)
	if err != nil {
		return 0, err
	}
	defer lk.Close()
	f, err := lk.Focus(ctx)
	switch {
	case errors.Is(err, look.ErrNoFocus):
		return 0, nil // nothing focused
	case err != nil:
		return 0, err
	}
	return f.El.BackendNodeID, nil
}

// same reports whether now is what was seen.
func same(s core.SeenTarget, now core.SeenTarget) bool {
	return now.OK && s.Target == now.Target && s.Node == now.Node
}

// CheckApproved is the ask stage's share for a command taken off a line:
// a command a person approved, whose card named what it acts on, is looked
// at again before it goes on; a mouse release is looked at against the
// approved press before it.
func CheckApproved(c *core.ClientConn, k *core.Cmd) bool {
	h := k.Held
	if h != nil && h.Checked {
		return true
	}
	if h != nil && h.Approved && h.ByPerson && h.Seen.OK {
		return holdToCheck(c, k, func(ctx context.Context) string {
			now, err := seenAt(ctx, c, h.Seen.Via, h.Method, h.Cmd.Env.Params)
			if err != nil {
				return "cdprelay: the page could not be looked at again after the person approved " + h.What + " (" + err.Error() + "), so it is not done"
			}
			if !same(h.Seen, now) {
				return "cdprelay: the page changed after the person approved " + h.What + ": now it would " + nowWould(c, k, now) + "; not done"
			}
			if h.Method == "Input.dispatchMouseEvent" {
				notePress(c, k.Route.Tab, h, now)
			}
			return ""
		})
	}
	if k.M.Name == "Input.dispatchMouseEvent" && k.Route.Tab != nil && k.Route.Via != nil {
		if typ := string(wire.StringField(k.Env.Params, "type")); typ == "mousePressed" || typ == "mouseReleased" {
			c.Inst.Lock()
			pc := clientSlot.Of(c)
			p, ok := pc.pressed[k.Route.Tab]
			delete(pc.pressed, k.Route.Tab) // one release per approved press
			c.Inst.Unlock()
			if ok && typ == "mouseReleased" {
				via := k.Route.Via
				params := append([]byte(nil), k.Env.Params...)
				return holdToCheck(c, k, func(ctx context.Context) string {
					now, err := seenAt(ctx, c, via, "Input.dispatchMouseEvent", params)
					if err != nil || !same(p.seen, now) {
						return "cdprelay: the release would not land where the approved press did (" + p.what + "): now it would " + nowWould(c, k, now) + "; not done"
					}
					return ""
				})
			}
		}
	}
	return true
}

// nowWould says in a person's words what k would do on what is there now.
func nowWould(c *core.ClientConn, k *core.Cmd, now core.SeenTarget) string {
	d := Description{Method: k.M.Name, URL: k.Args.Url, Files: k.Args.Files, Params: k.Env.Params, Looked: now.OK, Target: now.Target}
	if k.Route.Tab != nil {
		c.Inst.Lock()
		d.Origin = api.Origin(k.Route.Tab.DocURL)
		c.Inst.Unlock()
	}
	return c.Inst.ScrubString(d.Text())
}

// notePress records an approved press on t, for the release after it.
func notePress(c *core.ClientConn, t *core.Tab, h *core.HeldCmd, now core.SeenTarget) {
	if t == nil || string(wire.StringField(h.Cmd.Env.Params, "type")) != "mousePressed" {
		return
	}
	c.Inst.Lock()
	pc := clientSlot.Of(c)
	if pc.pressed == nil {
		pc.pressed = map[*core.Tab]pressRecord{}
	}
	pc.pressed[t] = pressRecord{seen: now, what: h.What}
	c.Inst.Unlock()
}

// holdToCheck holds k in its tab's line while check looks at the page
// beside the read loop; k then goes on, or is refused with what check
// says.
func holdToCheck(c *core.ClientConn, k *core.Cmd, check func(ctx context.Context) string) bool {
	in := c.Inst
	st := in.Lock()
	h := lines.Hold(st, c, k)
	h.Stage = core.HoldProbing
	in.Unlock()
	k.Out.Kind = core.OutHeld
	c.Wg.Add(1)
	in.Tasks.Spawn("look again before acting", func() {
		defer c.Wg.Done()
		ctx, cancel := c.CallCtx()
		defer cancel()
		why := check(ctx)
		st := in.Lock()
		defer in.Unlock()
		if h.Stage != core.HoldProbing || !lines.Live(st, h.Key) {
			return // stopped, or the client went
		}
		h.Checked = true
		if why == "" {
			h.Stage, h.Approved = core.HoldWaiting, true
		} else {
			h.Stage, h.Denial = core.HoldDenied, why
			in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindApproval, Method: h.Method, Target: core.TargetOf(h.Key.Tab), Rule: RuleChanged, Outcome: api.OutcomeDenied, Detail: why})
		}
		lines.StartDrain(in, st, h.Key)
	})
	return false
}
