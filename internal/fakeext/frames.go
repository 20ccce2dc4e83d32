package fakeext

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// The wire: frames read from the relay and written to it, one by one or
// in batch frames once the relay accepted them.

// Emit sends an event with positional args.
func (e *Ext) Emit(method string, args ...any) error {
	if args == nil {
		args = []any{}
	}
	return e.write(map[string]any{"method": method, "params": args})
}

// WriteRaw sends one text frame as is.
func (e *Ext) WriteRaw(frame []byte) error {
	return e.Write(websocket.TextMessage, frame)
}

// Write sends one frame of type mt as is.
func (e *Ext) Write(mt int, frame []byte) error {
	e.wmu.Lock()
	defer e.wmu.Unlock()
	return e.conn.WriteMessage(mt, frame)
}

func (e *Ext) write(v any) error { return e.writeMsg(v, false) }

// writeMsg sends one message, in a batch once batching: held while a
// command is outstanding (answered marks v as the reply to one).
func (e *Ext) writeMsg(v any, answered bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	e.wmu.Lock()
	defer e.wmu.Unlock()
	if answered {
		e.outstanding--
	}
	if !e.batching {
		return e.conn.WriteMessage(websocket.TextMessage, b)
	}
	e.outbox = append(e.outbox, b)
	if e.outstanding > 0 {
		if e.flushTimer == nil {
			e.flushTimer = time.AfterFunc(BatchHold, func() {
				e.wmu.Lock()
				defer e.wmu.Unlock()
				e.flushTimer = nil
				e.flushLocked()
			})
		}
		return nil
	}
	return e.flushLocked()
}

// flushLocked sends the outbox as one batch frame. wmu is held.
func (e *Ext) flushLocked() error {
	if len(e.outbox) == 0 {
		return nil
	}
	if e.flushTimer != nil {
		e.flushTimer.Stop()
		e.flushTimer = nil
	}
	frame := append([]byte{'['}, bytes.Join(e.outbox, []byte{','})...)
	frame = append(frame, ']')
	e.outbox = e.outbox[:0]
	e.batchesOut++
	return e.conn.WriteMessage(websocket.TextMessage, frame)
}

// BatchFrames reports how many batch frames the extension has received
// from the relay and sent to it.
func (e *Ext) BatchFrames() (in, out int) {
	e.mu.Lock()
	in = e.batchesIn
	e.mu.Unlock()
	e.wmu.Lock()
	out = e.batchesOut
	e.wmu.Unlock()
	return in, out
}

func (e *Ext) readLoop() {
	defer close(e.closed)
	for {
		_, b, err := e.conn.ReadMessage()
		if err != nil {
			e.closeErr = err
			return
		}
		if i := bytes.IndexFunc(b, func(r rune) bool { return !strings.ContainsRune(" \t\r\n", r) }); i >= 0 && b[i] == '[' && e.opts.Batches {
			var els []json.RawMessage
			if json.Unmarshal(b, &els) != nil {
				continue
			}
			e.mu.Lock()
			e.batchesIn++
			n := e.batchesIn
			e.mu.Unlock()
			for _, el := range els {
				e.command(el, n)
			}
			continue
		}
		e.command(b, 0)
	}
}

// command handles one command, of a frame of its own or of batch n. One
// that is no command is answered with an error when it has an id.
func (e *Ext) command(b []byte, batch int) {
	var m struct {
		ID     int64             `json:"id"`
		Method string            `json:"method"`
		Params []json.RawMessage `json:"params"`
	}
	if err := json.Unmarshal(b, &m); err != nil {
		var idOnly struct {
			ID int64 `json:"id"`
		}
		if json.Unmarshal(b, &idOnly) == nil && idOnly.ID != 0 {
			e.wmu.Lock()
			e.outstanding++
			e.wmu.Unlock()
			e.reply(idOnly.ID, nil, fmt.Errorf("malformed command: %v", err))
		}
		return
	}
	e.mu.Lock()
	if m.Method == "extension.keepalive" {
		e.keepalives++
	} else {
		raw, _ := json.Marshal(m.Params)
		e.commands = append(e.commands, Command{ID: m.ID, Method: m.Method, Params: raw, Raw: append([]byte(nil), b...), Batch: batch})
	}
	e.mu.Unlock()
	e.wmu.Lock()
	e.outstanding++
	e.wmu.Unlock()
	if m.Method == "extension.acceptBatches" && e.opts.Batches {
		// Answered before batching starts, as ours does.
		e.reply(m.ID, nil, nil)
		e.wmu.Lock()
		e.batching = true
		e.wmu.Unlock()
		return
	}
	go e.handle(m.ID, m.Method, m.Params)
}

func (e *Ext) reply(id int64, result any, err error) {
	if err != nil {
		e.writeMsg(map[string]any{"id": id, "error": err.Error()}, true)
		return
	}
	if result == nil {
		result = struct{}{}
	}
	e.writeMsg(map[string]any{"id": id, "result": result}, true)
}
