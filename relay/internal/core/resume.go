package core

import (
	"context"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/methods"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// The replay: what a client's sessions set on a tab that a resume sets
// again (relay/internal/away, and a person's Resume after a Stop) is
// recorded as the commands go out (Tab.Replay, a replay.Record: send.go),
// and sent again (package away's Replay), each command judged as the
// client's own commands are (JudgeReplayed).

// ResumeWait bounds a resume: the tab attached again and what its
// sessions had set sent again.
const ResumeWait = 5 * time.Second

// tapScript notes the identifier Chrome gave a client's init script.
func (in *Instance) tapScript(t *Tab, key string) func([]byte) {
	return func(result []byte) {
		id := string(wire.StringField(result, "identifier"))
		in.Lock()
		t.Replay.Noted(key, id)
		in.Unlock()
	}
}

// JudgeReplayed runs kept command r of tab t (whose top-level session s
// carries it) through the judging stages and then the rows that act on the
// relay's own commands (CmdStage.Replays: the fence's rewrite). It
// returns the command as it is to be sent, or false when a stage refused
// it: then the refusal is counted and audited as a client command's, and
// the tab's sessions are told.
func (c *ClientConn) JudgeReplayed(t *Tab, s *Session, r replay.Cmd) (*Cmd, bool) {
	k := &Cmd{Env: wire.Envelope{Method: []byte(r.Method), Params: r.Params}, Own: true}
	k.M, k.Params, k.Policy = LookupMethod(k.Env.Method), r.Params, c.Inst.policyNow()
	c.Inst.Lock()
	k.Route = route{Sess: s, ReplyTo: s, Via: s, Tab: t, Acc: t.Acc, Top: true}
	c.Inst.Unlock()
	if err := methods.ArgsOf(k.M, k.Params, &k.Args); err != nil {
		c.Failed(k, CodeInvalidParams, err.Error())
		k.Out.d.Message = "cdprelay: " + err.Error()
	} else if c.decide(k) {
		// What acts on the relay's own commands (on a fenced tab,
		// Fetch.enable goes with the backstop's pattern).
		c.runCommand(k, k.M.Plan&replayStages)
		return k, true
	}
	if k.Out.Kind == OutEmulated {
		return k, false // kept by the access stage, for when the tab may have it (a blind tab's settings)
	}
	st := c.Inst.Lock()
	st.WarnSessions(t, r.Method+" was not set again on the tab after it was attached again: "+strings.TrimPrefix(k.Out.d.Message, "cdprelay: "))
	c.Inst.Unlock()
	c.observe(k)
	return k, false
}

// awaitResume waits while a tab is being resumed (until done closes), or
// either context ends: the client's, or the run a person's Stop ends.
func awaitResume(ctx, run context.Context, done <-chan struct{}) {
	select {
	case <-done:
	case <-ctx.Done():
	case <-run.Done():
	}
}

// forgetReplay forgets what a resume would set again: the client's
// sessions on t have ended, and the next ones set their own.
func (t *Tab) forgetReplay() { t.Replay.Forget() }
