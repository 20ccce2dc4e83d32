package person

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// The brake: ending script that does not end.
//
// A client's script that never returns (while(true){} through
// Runtime.evaluate or callFunctionOn, a timer or a promise it left behind,
// a page function it rewrote) keeps the main thread of the person's tab —
// and of every tab of the same site in that renderer — busy for good.
// Chrome refuses Runtime.terminateExecution to an extension ("not allowed
// for untrusted clients"), and a busy renderer takes no other command from
// it either: every one waits behind the script. Two things do reach it:
//
//   - Runtime.evaluate's own timeout, which ends the evaluation's
//     synchronous run. The relay gives every client evaluation one: the
//     client's own when it is shorter, else Config.ScriptTimeout. It
//     bounds the synchronous part only; a promise the client awaits (with
//     awaitPromise) may take as long as it likes.
//   - Debugger.pause, which Chrome sends on its IO thread, so that it
//     interrupts running script; and Debugger.resume with
//     terminateOnResume, which ends the task that was paused. This needs
//     the Debugger domain on before the script starts: the relay keeps it
//     on in every tab it attaches and every frame and worker its client's
//     auto-attach brings, with breakpoints deactivated, so that nothing (a
//     page's own `debugger;` statement included) pauses the page for it.
//     It is not the client's: its events reach only a session that enabled
//     the Debugger itself, the domain's commands from any other are refused
//     as Chrome refuses them to a disabled Debugger (stopRules), and a
//     client's Debugger.disable gives the relay back its own Debugger.
//     Debugger.setSkipAllPauses, which would keep the relay's pause from
//     landing, is carried out as Debugger.setBreakpointsActive; what else
//     would (blackboxing, callFunctionOn under the side-effect check) is
//     refused (stopundo.go).
//
// The brake is used when a person stops the automation (stopundo.go), and
// as a bound: a client's script command still waiting after
// Config.ScriptTimeout, on a page whose main thread does not answer within
// busyWait, has the running task ended and fails with msgScriptEnded.
// Whether the page is busy is asked with a command that runs on its main
// thread and compiles no script (Runtime.getIsolateId): a page that
// answers is left alone, however long the client's command waits.

const (
	// busyWait is how long a page's main thread may take to answer before
	// the relay takes it as busy.
	busyWait = time.Second
	// pauseWait bounds how long the relay's pause may take to land.
	pauseWait = 5 * time.Second
)

// KindScriptEnded is the audit kind of a client's script the relay ended
// for keeping a page busy past its bound.
const KindScriptEnded = "script-ended"

// MsgScriptEnded answers a client command whose script the bound ended.
func MsgScriptEnded(bound time.Duration) string {
	return "cdprelay: the script kept the page busy past the relay's bound (" + bound.String() + ") and was ended"
}

// brakeKey names a debugger session: a tab's own ("") or a child's.
type brakeKey struct {
	tab int64
	sid string
}

// brake is one use of the brake on a session.
type brake struct {
	// Guarded by brakes.mu.
	asked    bool // the pause was asked for: a pause before that is not the brake's
	answered bool // the page answered: it is not (or no longer) busy
	ended    bool // the pause landed while it was busy
	landed   bool // paused is closed
	paused   chan struct{}
	// stray: the pause was asked for but did not land in time; it may
	// land later, on the page's own next script, which is then let go.
	stray bool
	// strayBefore: this brake took the place of a stray one whose pause
	// has not landed. A pause before this brake asks for its own is that
	// one, and is let go; one after serves both (Chrome pauses once).
	strayBefore bool
}

// brakes are an instance's brakes under way, and the bound's watch.
type brakes struct {
	mu sync.Mutex
	m  map[brakeKey]*brake // guarded by mu
	// watching: a watch of the client's script commands is armed.
	watching bool // guarded by mu
	// fresh: a script command came since the watch last looked; it may
	// not have been among the pending calls yet.
	fresh bool // guarded by mu
}

// pausedLocked is the event path's share: a Debugger.paused of session
// sid of tab id. It reports whether the relay's brake asked for it, and
// then whether the event path is to let the page go on (a pause that
// landed after its brake gave up); otherwise the brake resumes it itself.
// Called with the instance's lock held.
func pausedLocked(in *core.Instance, id int64, sid string) (unpause, ours bool) {
	b := &instSlot.Of(in).brakes
	b.mu.Lock()
	defer b.mu.Unlock()
	k := brakeKey{id, sid}
	br := b.m[k]
	if br != nil && br.strayBefore {
		br.strayBefore = false
		if !br.asked {
			return true, true // the stray pause of the brake before
		}
	}
	if br == nil || !br.asked {
		// Not the brake's: the page's own, or a client's, as without it.
		return false, false
	}
	if br.stray {
		delete(b.m, k)
		return true, true
	}
	if br.landed {
		return false, false
	}
	br.landed = true
	br.ended = !br.answered
	close(br.paused)
	return false, true
}

// forgetBrakes drops the brakes of tab id: its debugger session ended.
func forgetBrakes(in *core.Instance, id int64) {
	b := &instSlot.Of(in).brakes
	b.mu.Lock()
	for k := range b.m {
		if k.tab == id {
			delete(b.m, k)
		}
	}
	b.mu.Unlock()
}

// endScript ends the script that keeps the main thread of session sid of
// tab id busy, if any: it reports whether it ended one. ending, when not
// nil, runs just before the paused task is ended.
func endScript(ctx context.Context, in *core.Instance, x core.Upstream, id int64, sid string, ending func()) bool {
	b := &instSlot.Of(in).brakes
	k := brakeKey{id, sid}
	br := &brake{paused: make(chan struct{})}
	b.mu.Lock()
	if b.m == nil {
		b.m = map[brakeKey]*brake{}
	}
	old := b.m[k]
	if old != nil && !old.stray {
		b.mu.Unlock()
		return false // another is under way
	}
	br.strayBefore = old != nil
	b.m[k] = br
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		if b.m[k] == br && !br.stray {
			if br.strayBefore {
				// The stray pause before this brake is still to land: it
				// stays expected, to be let go.
				br.asked, br.stray, br.strayBefore = true, true, false
			} else {
				delete(b.m, k)
			}
		}
		b.mu.Unlock()
	}()

	answered := make(chan struct{})
	go func() {
		// Answered once the main thread is free: at once, or once the
		// brake has ended what kept it busy.
		pctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.Srv.Cfg.CallTimeout)
		defer cancel()
		// Noted on the read loop, as the answer comes: a pause that lands
		// after it (the page answered late, and ran script as the pause
		// came) finds the page answered, and its script is not ended.
		x.CallThen(pctx, func([]byte) {
			b.mu.Lock()
			br.answered = true
			b.mu.Unlock()
		}, "chrome.debugger.sendCommand", cdp.Debuggee(id, sid), "Runtime.getIsolateId")
		close(answered)
	}()
	wait := time.NewTimer(busyWait)
	defer wait.Stop()
	select {
	case <-answered:
		return false
	case <-ctx.Done():
		return false
	case <-wait.C:
	}
	b.mu.Lock()
	br.asked = true
	b.mu.Unlock()
	if _, err := x.SendCommand(ctx, id, sid, "Debugger.pause", nil); err != nil {
		in.Log.Debug("brake: pause refused", "tab", id, "session", sid, "err", err)
		return false
	}
	wait.Reset(pauseWait)
	select {
	case <-br.paused:
	case <-answered:
	case <-wait.C:
	case <-ctx.Done():
	}
	// Whatever came first, a pause that landed is resumed here. A paused
	// page answers the isolate's question from its debugger loop, so the
	// answer may come together with the pause: the brake never leaves a
	// page paused. One that has not landed is the event path's (stray),
	// decided under the lock that path takes.
	b.mu.Lock()
	landed, ended := br.landed, br.ended
	if !landed {
		br.stray = true
	}
	b.mu.Unlock()
	if !landed {
		return false
	}
	// Resumed before the caller goes on (a Stop detaches next: a detach
	// would let the script run on), even if the caller gave up waiting.
	var p any
	if ended {
		if ending != nil {
			ending()
		}
		p = map[string]bool{"terminateOnResume": true}
	}
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), in.Srv.Cfg.CallTimeout)
	defer cancel()
	if _, err := x.SendCommand(rctx, id, sid, "Debugger.resume", p); err != nil {
		in.Log.Debug("brake: resume", "tab", id, "session", sid, "err", err)
		return false
	}
	return ended
}

// brakeReset gives the relay back its own Debugger on session sid after a
// client's Debugger.disable: what the client set (breakpoints, pauses on
// exceptions, blackboxing) goes, as with a real disable.
func brakeReset(x core.Upstream, tabID int64, sid string) {
	x.Fire(tabID, sid, "Debugger.disable", nil)
	attach.BrakeOn(x, tabID, sid)
}

// brakesChild reports whether a child target of this type runs script the
// brake may have to end.
func brakesChild(targetType []byte) bool {
	switch string(targetType) {
	case "iframe", "worker", "shared_worker", "service_worker":
		return true
	}
	return false
}

// Methods of the Debugger domain the relay carries out its own way, and
// the script methods the bound watches.
var (
	methodSetBreakpointsActive = core.LookupMethod([]byte("Debugger.setBreakpointsActive"))
	boundMethods               = map[string]bool{"Runtime.evaluate": true, "Runtime.callFunctionOn": true, "Runtime.runScript": true, "Runtime.awaitPromise": true}
)

// brakeCommand is the forward stage's share: it reports whether it sent or
// answered k itself. A client's Debugger.enable starts from a fresh
// Debugger (Chrome then reports the scripts it has), its disable on a
// frame or worker gives the relay's back (a tab's own goes through the
// domain switch: package switches), its setSkipAllPauses becomes setBreakpointsActive; a
// Runtime.evaluate gets its timeout; the bound watches script.
func brakeCommand(c *core.ClientConn, k *core.Cmd) bool {
	via := k.Route.Via
	sid := ""
	if via.Child {
		sid = via.Id
	}
	switch k.M.Name {
	case "Runtime.evaluate":
		watchScripts(c.Inst)
		buf := link.GetBuf()
		*buf = AppendTimeout((*buf)[:0], k.Params, c.Inst.Srv.Cfg.ScriptTimeout)
		k.Params = *buf
		c.Send(k)
		link.PutBuf(buf)
		return true
	case "Runtime.callFunctionOn", "Runtime.runScript", "Runtime.awaitPromise":
		watchScripts(c.Inst)
	case "Debugger.enable":
		if via.Child {
			c.Inst.Lock()
			c.Inst.St.SwitchDomain(via, "Debugger", true)
			c.Inst.Unlock()
		}
		c.Ext().Fire(via.Tab.Id, sid, "Debugger.disable", nil)
	case "Debugger.disable":
		if via.Child {
			c.Inst.Lock()
			delete(via.Enabled, "Debugger")
			c.Inst.Unlock()
			brakeReset(c.Ext(), via.Tab.Id, sid)
			k.Out.Kind = core.OutEmulated
			c.ReplyEmptyRaw(k.Env.ID, k.Env.SessionID)
			return true
		}
	case "Page.setWebLifecycleState":
		noteLifecycle(c.Inst, via.Tab)
	case "Debugger.setSkipAllPauses":
		if v, n := wire.Member(k.Params, "skip"); n == 1 && string(v) == "true" {
			k.Params = []byte(`{"active":false}`)
		} else {
			k.Params = []byte(`{"active":true}`)
		}
		c.SendAs(k, methodSetBreakpointsActive)
		return true
	}
	return false
}

// AppendTimeout appends to dst the params of a Runtime.evaluate with a
// timeout of at most bound: the client's own when it is shorter. The
// timeout goes last, where JSON.parse (the extension's) takes it whatever
// the client wrote before it.
func AppendTimeout(dst, params []byte, bound time.Duration) []byte {
	limit := bound.Milliseconds()
	if v := wire.Field(params, "timeout"); v != nil {
		if f, err := strconv.ParseFloat(string(v), 64); err == nil && f >= 0 && f < float64(limit) {
			limit = int64(f)
		}
	}
	end := len(params)
	for end > 0 && isSpace(params[end-1]) {
		end--
	}
	start := 0
	for start < end && isSpace(params[start]) {
		start++
	}
	switch {
	case start == end || string(params[start:end]) == "null":
		dst = append(dst, `{"timeout":`...)
	case params[start] != '{' || params[end-1] != '}':
		return append(dst, params...) // Chrome refuses it as it is
	default:
		dst = append(dst, params[start:end-1]...)
		inner := params[start+1 : end-1]
		empty := true
		for _, ch := range inner {
			if !isSpace(ch) {
				empty = false
				break
			}
		}
		if !empty {
			dst = append(dst, ',')
		}
		dst = append(dst, `"timeout":`...)
	}
	dst = strconv.AppendInt(dst, limit, 10)
	return append(dst, '}')
}

func isSpace(b byte) bool { return b == ' ' || b == '\t' || b == '\n' || b == '\r' }

// watchScripts arms the bound's watch, unless it is armed.
func watchScripts(in *core.Instance) {
	b := &instSlot.Of(in).brakes
	b.mu.Lock()
	defer b.mu.Unlock()
	b.fresh = true
	if b.watching {
		return
	}
	b.watching = true
	time.AfterFunc(in.Srv.Cfg.ScriptTimeout, func() { checkScripts(in) })
}

// checkScripts brakes the sessions whose client script commands have been
// waiting longer than the bound, and watches again while any waits.
func checkScripts(in *core.Instance) {
	bound := in.Srv.Cfg.ScriptTimeout
	st := in.Lock()
	x := st.Ext
	in.Unlock()
	b := &instSlot.Of(in).brakes
	if x == nil || in.IsStopped.Load() {
		b.mu.Lock()
		b.watching = false
		b.mu.Unlock()
		return
	}
	now := time.Now()
	late := map[brakeKey]bool{}
	next := time.Duration(0)
	x.Pending(func(pc core.PendingCall) bool {
		if pc.M == nil || !boundMethods[pc.M.Name] {
			return true
		}
		waited := now.Sub(pc.Start)
		if waited < bound {
			if d := bound - waited; next == 0 || d < next {
				next = d
			}
			return true
		}
		sid := ""
		if pc.Via != nil && pc.Via.Child {
			sid = pc.Via.Id
		}
		late[brakeKey{pc.TabID, sid}] = true
		next = bound
		return true
	})
	b.mu.Lock()
	switch {
	case next != 0:
		time.AfterFunc(max(next, busyWait), func() { checkScripts(in) })
	case b.fresh:
		// A command that came as the watch looked: it is watched too.
		time.AfterFunc(bound, func() { checkScripts(in) })
	default:
		b.watching = false
	}
	b.fresh = false
	b.mu.Unlock()
	for k := range late {
		in.Tasks.Spawn("bound a script", func() {
			ctx, cancel := context.WithTimeout(context.Background(), busyWait+pauseWait+time.Second)
			defer cancel()
			n := 0
			fail := func() {
				// Before the task ends: the client hears why, not Chrome's
				// "Execution was terminated".
				n = core.FailWhere(x, func(pc core.PendingCall) bool {
					sid := ""
					if pc.Via != nil && pc.Via.Child {
						sid = pc.Via.Id
					}
					return pc.Kind == core.CallClient && pc.TabID == k.tab && sid == k.sid && pc.M != nil && boundMethods[pc.M.Name] && time.Since(pc.Start) >= bound
				}, core.CodeServerError, MsgScriptEnded(bound))
			}
			if !endScript(ctx, in, x, k.tab, k.sid, fail) {
				return
			}
			in.Lock()
			target := ""
			if t := in.St.Tabs[k.tab]; t != nil {
				target = t.TargetID
			}
			in.Unlock()
			in.Observe(core.Event{Actor: api.ActorRelay, Kind: KindScriptEnded, Target: target, Outcome: api.OutcomeOK,
				Detail: "ended a script that kept the page busy past " + bound.String() + "; " + strconv.Itoa(n) + " commands waiting for it failed"})
		})
	}
}
