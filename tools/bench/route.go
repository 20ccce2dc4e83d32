package main

import (
	"context"
	"fmt"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/wire"
)

// route is how one path addresses the benchmark tab: a CDP session on a CDP
// connection, or chrome.debugger.sendCommand on the extension's socket.
type route struct {
	c     *cdptest.Conn
	sess  string // CDP session id; "" on the extension path
	tabID int64  // the extension's tab id, on the extension path
	tap   *tap   // when set, told of every command's send and reply times
}

func (r route) frame(b []byte, id int64, method string, params []byte) []byte {
	if r.sess != "" {
		return cdptest.AppendCommand(b, id, r.sess, method, params)
	}
	b = append(b, `{"id":`...)
	b = wire.AppendInt(b, id)
	b = append(b, `,"method":"chrome.debugger.sendCommand","params":[{"tabId":`...)
	b = wire.AppendInt(b, r.tabID)
	b = append(b, "},"...)
	b = wire.AppendString(b, method)
	if params != nil {
		b = append(b, ',')
		b = append(b, params...)
	}
	return append(b, "]}"...)
}

// call sends one command to the tab and waits for its result.
func (r route) call(ctx context.Context, method string, params []byte) ([]byte, error) {
	ch := make(chan cdptest.Reply, 1)
	if err := r.c.Send(ch, func(b []byte, id int64) []byte { return r.frame(b, id, method, params) }); err != nil {
		return nil, fmt.Errorf("%s: %w", method, err)
	}
	select {
	case res := <-ch:
		if res.Err != nil {
			return nil, fmt.Errorf("%s: %w", method, res.Err)
		}
		return res.Result, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: %w", method, ctx.Err())
	}
}
