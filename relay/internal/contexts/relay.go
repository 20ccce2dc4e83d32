package contexts

import (
	"encoding/json"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// What the client hears of the relay's own worlds: nothing. Chrome
// tells every listener of a session about every context and script and
// pause in it; the relay's worlds (package look) are withheld from all
// of it, on the event path, while the relay has a world on the tab.

// RelayEvent reports whether an event of session sid comes from one
// of the relay's own worlds (a console message, an exception, a binding
// call, a script parsed, a pause in its script): the client hears nothing
// of it. A pause there is resumed by the relay (unpause). Called only
// while the relay has a world on the tab (RelayWorlds).
func (t *Tab) RelayEvent(sid string, method, params []byte) (withhold, unpause bool) {
	sc := t.sessions[sid]
	if sc == nil {
		return false, false
	}
	inRelay := func(raw []byte) bool {
		id, ok := wire.Int(raw)
		return ok && sc.ByID[id] != nil && sc.ByID[id].Relay
	}
	switch string(method) {
	case "Runtime.consoleAPICalled", "Runtime.bindingCalled", "Runtime.inspectRequested":
		return inRelay(wire.Field(params, "executionContextId")), false
	case "Runtime.exceptionThrown":
		return inRelay(wire.Field(wire.Field(params, "exceptionDetails"), "executionContextId")), false
	case "Debugger.scriptParsed", "Debugger.scriptFailedToParse":
		if !inRelay(wire.Field(params, "executionContextId")) {
			return false, false
		}
		if id := wire.StringField(params, "scriptId"); len(id) > 0 && len(sc.Scripts) < maxRelayScripts {
			if sc.Scripts == nil {
				sc.Scripts = map[string]bool{}
			}
			sc.Scripts[string(id)] = true
		}
		return true, false
	case "Debugger.breakpointResolved":
		return sc.Scripts[string(wire.StringField(wire.Field(params, "location"), "scriptId"))], false
	case "Debugger.paused":
		if pausedInRelay(sc, params) {
			sc.unpaused = true
			return true, true
		}
	case "Debugger.resumed":
		if sc.unpaused {
			sc.unpaused = false
			return true, false
		}
	}
	return false, false
}

// maxRelayScripts bounds the relay's own script ids kept per session.
const maxRelayScripts = 4096

// pausedInRelay reports whether a Debugger.paused stops with a frame of
// the relay's own worlds on the stack: its scopes would show what the
// relay's script holds.
func pausedInRelay(sc *Session, params []byte) bool {
	var p struct {
		CallFrames []struct {
			CallFrameID string `json:"callFrameId"`
			Location    struct {
				ScriptID string `json:"scriptId"`
			} `json:"location"`
		} `json:"callFrames"`
	}
	if json.Unmarshal(params, &p) != nil {
		return true // unreadable: as strict as can be
	}
	for _, f := range p.CallFrames {
		if sc.Scripts[f.Location.ScriptID] {
			return true
		}
		if id, ok := cdp.IDContext([]byte(f.CallFrameID)); ok && sc.ByID[id] != nil && sc.ByID[id].Relay {
			return true
		}
	}
	return false
}
