package relay

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// busyPage is a fake tab whose main thread a script can keep busy, as
// Chrome's does: a script that never ends answers no more, and neither
// does any command that runs on the main thread (Runtime.getIsolateId);
// Debugger.pause still lands (Chrome sends it on its IO thread), and
// Debugger.resume with terminateOnResume ends the script.
type busyPage struct {
	e  *fakeext.Ext // set once dialled
	mu sync.Mutex
	// busy: a script runs on the session (by id, "" for the tab's own)
	// until its channel closes.
	busy map[string]chan struct{}
	// refusePause: Debugger.pause is refused (the Debugger is off).
	refusePause bool
	seen        []string // methods with params, as received
}

func newBusyPage() *busyPage { return &busyPage{busy: map[string]chan struct{}{}} }

// loop starts a script that never ends on session sid.
func (b *busyPage) loop(sid string) chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	ch := b.busy[sid]
	if ch == nil {
		ch = make(chan struct{})
		b.busy[sid] = ch
	}
	return ch
}

func (b *busyPage) isBusy(sid string) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.busy[sid] != nil
}

func (b *busyPage) waitBusy(h *harness, sid string) {
	h.t.Helper()
	h.waitFor("the page is busy", func() bool { return b.isBusy(sid) })
}

func (b *busyPage) end(sid string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if ch := b.busy[sid]; ch != nil {
		close(ch)
		delete(b.busy, sid)
	}
}

// wait waits until session sid's main thread is free.
func (b *busyPage) wait(sid string) {
	b.mu.Lock()
	ch := b.busy[sid]
	b.mu.Unlock()
	if ch != nil {
		<-ch
	}
}

func (b *busyPage) handler(tab int, sid, method string, params json.RawMessage) (any, error) {
	b.mu.Lock()
	b.seen = append(b.seen, method+" "+string(params))
	b.mu.Unlock()
	switch method {
	case "Runtime.evaluate", "Runtime.callFunctionOn":
		if strings.Contains(string(params), "while(true)") {
			<-b.loop(sid)
			return nil, fakeext.CDPError(-32000, "Execution was terminated")
		}
		b.wait(sid)
	case "Runtime.getIsolateId":
		b.wait(sid)
		return map[string]any{"id": "isolate"}, nil
	case "Debugger.pause":
		b.mu.Lock()
		refuse := b.refusePause
		b.mu.Unlock()
		if refuse {
			return nil, fakeext.CDPError(-32000, "Debugger agent is not enabled")
		}
		if b.isBusy(sid) {
			go b.e.Event(tab, sid, "Debugger.paused", map[string]any{"callFrames": []any{}, "reason": "other"})
		}
		return map[string]any{}, nil
	case "Debugger.resume":
		if strings.Contains(string(params), `"terminateOnResume":true`) {
			b.end(sid)
		}
		return map[string]any{}, nil
	}
	return fakeext.DefaultHandler(tab, sid, method, params)
}

func (b *busyPage) received(prefix string) []string {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []string
	for _, s := range b.seen {
		if strings.HasPrefix(s, prefix) {
			out = append(out, s)
		}
	}
	return out
}
