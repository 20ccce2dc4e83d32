package fakeext

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/extension"
)

// QuickTargetID is the target id of a Quick extension's one tab.
const QuickTargetID = "5CALE0000000000000000000000000007"

// QuickOptions configure DialQuick.
type QuickOptions struct {
	// Dialer dials the relay. Default: websocket.DefaultDialer.
	Dialer *websocket.Dialer
	// Origin is sent with the upgrade. Default: our extension's, which
	// the ingress guard lets pair by default.
	Origin string
}

// The handshake our extension sends: who the browser is, one shared tab,
// then initialized.
var (
	quickInfo        = []byte(`{"method":"extension.info","params":[{"userAgent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36","product":"Chrome/156.0.8078.108","version":"156.0.8078.108"}]}`)
	quickTab         = []byte(`{"method":"chrome.tabs.onCreated","params":[{"id":7,"url":"about:blank","title":"","targetId":"` + QuickTargetID + `","active":true,"windowId":1}]}`)
	quickInitialized = []byte(`{"method":"extension.initialized","params":[]}`)
)

// Quick is an extension that costs its host as little as it can: one
// goroutine, which reads, answers every command at once from canned bytes
// and is the only writer. Pings are answered by the connection's default
// handler while it reads.
type Quick struct {
	conn *websocket.Conn
	done chan struct{}
}

// DialQuick connects a Quick extension to the relay's extension URL and
// sends its handshake; it answers until the connection ends.
func DialQuick(ctx context.Context, url string, opts QuickOptions) (*Quick, error) {
	d := opts.Dialer
	if d == nil {
		d = websocket.DefaultDialer
	}
	origin := opts.Origin
	if origin == "" {
		origin = "chrome-extension://" + extension.ID
	}
	c, resp, err := d.DialContext(ctx, url, http.Header{"Origin": {origin}})
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (HTTP %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	for _, m := range [][]byte{quickInfo, quickTab, quickInitialized} {
		if err := c.WriteMessage(websocket.TextMessage, m); err != nil {
			c.Close()
			return nil, err
		}
	}
	q := &Quick{conn: c, done: make(chan struct{})}
	go q.answer()
	return q, nil
}

func (q *Quick) answer() {
	defer close(q.done)
	var reply []byte
	for {
		_, m, err := q.conn.ReadMessage()
		if err != nil {
			return
		}
		id, ok := LeadingID(m)
		if !ok {
			continue
		}
		reply = append(reply[:0], `{"id":`...)
		reply = strconv.AppendInt(reply, id, 10)
		switch {
		case bytes.Contains(m, []byte(`"Target.getTargetInfo"`)):
			reply = append(reply, `,"result":{"targetInfo":{"targetId":"`+QuickTargetID+`","type":"page","title":"","url":"about:blank","attached":true,"canAccessOpener":false,"browserContextId":"5CALECONTEXT"}}}`...)
		case bytes.Contains(m, []byte(`"Page.getFrameTree"`)):
			reply = append(reply, `,"result":{"frameTree":{"frame":{"id":"`+QuickTargetID+`","loaderId":"L","url":"about:blank","securityOrigin":"://","mimeType":"text/html"}}}}`...)
		case bytes.Contains(m, []byte(`"chrome.debugger.sendCommand"`)):
			reply = append(reply, `,"result":{"result":{"type":"number","value":1,"description":"1"}}}`...)
		default:
			reply = append(reply, `,"result":{}}`...)
		}
		if q.conn.WriteMessage(websocket.TextMessage, reply) != nil {
			return
		}
	}
}

// Done is closed when the connection has ended.
func (q *Quick) Done() <-chan struct{} { return q.done }

// Close ends the connection.
func (q *Quick) Close() {
	q.conn.Close()
	<-q.done
}

// LeadingID reads the id of a frame that starts with {"id":N, which is
// how both the relay's commands to an extension and its replies to a
// client begin.
func LeadingID(m []byte) (int64, bool) {
	rest, ok := bytes.CutPrefix(m, []byte(`{"id":`))
	if !ok {
		return 0, false
	}
	end := bytes.IndexAny(rest, ",}")
	if end < 0 {
		return 0, false
	}
	id, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return id, err == nil
}
