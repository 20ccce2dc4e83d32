package relay

import (
	"context"
	"encoding/json"
	"errors"
	"strings"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// The relay's own isolated world.
//
// Where the relay must look at a page itself (where the focus is before it
// types a secret, what a click would press before it asks a person), it
// runs its script in an isolated world of its own, "cdprelay", made once
// per frame and kept while it lives. Chrome announces the world to whoever
// listens to Runtime; the relay withholds that from the client, which has
// no business there.

const relayWorldName = "cdprelay"

// relayEval evaluates expr in the relay's world of via's frame and
// returns Chrome's result, by value.
func (c *clientConn) relayEval(ctx context.Context, via *session, expr string) (json.RawMessage, error) {
	t := via.tab
	sid, frame := "", ""
	c.inst.lock()
	frame = t.targetID
	if via.child {
		sid, frame = via.id, via.targetID
	}
	id := t.relayWorlds[sid]
	c.inst.unlock()
	for try := 0; try < 2; try++ {
		if id == 0 {
			res, err := c.ext().sendCommand(ctx, t.id, sid, "Page.createIsolatedWorld", map[string]any{"frameId": frame, "worldName": relayWorldName, "grantUniveralAccess": false})
			if err != nil {
				return nil, err
			}
			var w struct {
				ID int64 `json:"executionContextId"`
			}
			if json.Unmarshal(res, &w) != nil || w.ID == 0 {
				return nil, errors.New("no isolated world")
			}
			id = w.ID
			c.inst.lock()
			if t.relayWorlds == nil {
				t.relayWorlds = map[string]int64{}
			}
			t.relayWorlds[sid] = id
			c.inst.unlock()
		}
		res, err := c.ext().sendCommand(ctx, t.id, sid, "Runtime.evaluate", map[string]any{"expression": expr, "contextId": id, "returnByValue": true, "silent": true})
		var ee *ExtError
		if err != nil && errors.As(err, &ee) && strings.Contains(ee.Message, "context") && try == 0 {
			// The world went with its document: make a new one.
			c.inst.lock()
			if t.relayWorlds[sid] == id {
				delete(t.relayWorlds, sid)
			}
			c.inst.unlock()
			id = 0
			continue
		}
		return res, err
	}
	return nil, errors.New("no isolated world")
}

// isRelayWorld reports whether a Runtime.executionContextCreated event is
// about the relay's own world.
func isRelayWorld(params []byte) bool {
	ctx := wire.Field(params, "context")
	return ctx != nil && string(wire.StringField(ctx, "name")) == relayWorldName
}
