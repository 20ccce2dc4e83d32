package fakeext

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"
)

// Handler answers a CDP command sent to a tab. It returns the result
// object, or an error whose text is sent as the extension's error string
// (chrome.debugger formats CDP errors as JSON text: use CDPError).
type Handler func(tabID int, sessionID, method string, params json.RawMessage) (any, error)

// productVersion is the version in a product name (Chrome/156.0.8078.108).
func productVersion(product string) string {
	_, v, _ := strings.Cut(product, "/")
	return v
}

// CDPError formats a CDP error the way chrome.debugger reports it.
func CDPError(code int, msg string) error {
	b, _ := json.Marshal(map[string]any{"code": code, "message": msg})
	return errors.New(string(b))
}

// StockID is the stock Playwright extension's Web Store id.
const StockID = "mmlmfjhmonkocbjadbfplnigmagldckm"

// Tab is a fake browser tab.
type Tab struct {
	ID          int    `json:"id"`
	URL         string `json:"url"`
	Title       string `json:"title"`
	OpenerTabID int    `json:"openerTabId,omitempty"`
	TargetID    string `json:"targetId,omitempty"`
	Active      bool   `json:"active"`
	WindowID    int    `json:"windowId"`
}

// Command is one command the extension received.
type Command struct {
	ID     int64
	Method string
	Params json.RawMessage // re-encoded: compact, HTML-escaped
	Raw    []byte          // the frame (or the batch's element) exactly as it arrived
	// Batch is the ordinal, from 1, of the batch frame it came in; 0 for a
	// frame of its own.
	Batch int
}

// Options configure a fake extension.
type Options struct {
	Tabs       []Tab   // initially shared tabs
	Handler    Handler // nil: DefaultHandler
	UserAgent  string
	Product    string
	NoInfo     bool // behave like the stock extension: no extension.info
	NoTargetID bool // like the stock extension: tabs carry no targetId
	// Stock plays the stock Playwright extension: NoInfo, NoTargetID, its
	// origin, and only the commands of protocol v2 (no chrome.tabs.update).
	Stock bool
	// HoldInitialized delays extension.initialized until Initialize.
	HoldInitialized bool
	Origin          string
	// Gate, when set, runs before each command is answered, in that
	// command's own goroutine; blocking in it holds the answer back (a slow
	// attach, say) without holding up other commands.
	Gate func(method string, args []json.RawMessage)
	// Features are listed in extension.info (ours only): "windows" makes
	// the fake answer chrome.tabs.get and chrome.windows.get and update
	// for its one window; "detach-cause" says it explains detaches.
	Features []string
	// DownloadFile answers extension.downloadFile as our extension does:
	// the file Chrome saved for the download of url whose completion said
	// bytes (its path and size). Nil: the command is unknown, as it is to
	// the stock extension. Features should then list "downloads".
	DownloadFile func(url string, bytes int64) (path string, size int64, err error)
	// Batches says in extension.info that this extension takes batch
	// frames, and once the relay answers with extension.acceptBatches it
	// sends them as ours does: what it has to send waits while a command is
	// being answered, for at most BatchHold, and goes in one frame.
	Batches bool
}

// Window is the fake's one browser window, as chrome.windows reports it.
type Window struct {
	ID     int    `json:"id"`
	Left   int    `json:"left"`
	Top    int    `json:"top"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	State  string `json:"state"`
}

// BatchHold bounds how long a batching extension holds a reply or an event
// while other commands are being answered.
const BatchHold = 2 * time.Millisecond

// Ext is a connected fake extension.
type Ext struct {
	opts Options
	conn *websocket.Conn

	wmu sync.Mutex // serialises writes

	mu         sync.Mutex
	netFence   json.RawMessage // the rules of extension.setNavigationFence in force ("null": none)
	tabs       map[int]*fakeTab
	nextTab    int
	commands   []Command
	keepalives int
	window     Window
	batchesIn  int // batch frames received
	closed     chan struct{}
	closeErr   error

	// Guarded by wmu: batching once the relay accepted it.
	batching    bool
	outstanding int      // commands read and not yet answered
	outbox      [][]byte // messages waiting for the next batch frame
	flushTimer  *time.Timer
	batchesOut  int // batch frames sent
}

type fakeTab struct {
	Tab
	attached bool
	// refuse is the error Chrome gives to attach the tab ("" when it
	// attaches): another extension's frame in it, say.
	refuse string
}

// Dial connects to the relay's extension URL (ws://host/extension/<guid>)
// and runs the handshake.
func Dial(ctx context.Context, url string, opts Options) (*Ext, error) {
	if opts.Stock {
		opts.NoInfo, opts.NoTargetID = true, true
		if opts.Origin == "" {
			opts.Origin = "chrome-extension://" + StockID
		}
	}
	if opts.Origin == "" {
		opts.Origin = "chrome-extension://fakeextensionidfakeextensionid"
	}
	if opts.Handler == nil {
		opts.Handler = DefaultHandler
	}
	if opts.UserAgent == "" {
		opts.UserAgent = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36"
	}
	if opts.Product == "" {
		opts.Product = "Chrome/156.0.8078.108"
	}
	h := http.Header{"Origin": {opts.Origin}}
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, url, h)
	if err != nil {
		if resp != nil {
			return nil, fmt.Errorf("dial %s: %w (HTTP %d)", url, err, resp.StatusCode)
		}
		return nil, fmt.Errorf("dial %s: %w", url, err)
	}
	e := &Ext{opts: opts, conn: conn, tabs: map[int]*fakeTab{}, nextTab: 100, closed: make(chan struct{}),
		window: Window{ID: 1, Left: 10, Top: 10, Width: 780, Height: 580, State: "normal"}}
	for _, t := range opts.Tabs {
		e.addTab(t)
	}
	go e.readLoop()
	if !opts.NoInfo {
		features := append([]string{}, opts.Features...)
		if opts.Batches {
			features = append(features, "batches")
		}
		e.Emit("extension.info", map[string]any{"userAgent": opts.UserAgent, "product": opts.Product, "version": productVersion(opts.Product), "features": features})
	}
	for _, t := range e.Tabs() {
		e.Emit("chrome.tabs.onCreated", e.offer(t))
	}
	if !opts.HoldInitialized {
		e.Initialize()
	}
	return e, nil
}

func (e *Ext) addTab(t Tab) *fakeTab {
	e.mu.Lock()
	defer e.mu.Unlock()
	if t.ID == 0 {
		e.nextTab++
		t.ID = e.nextTab
	}
	if t.TargetID == "" {
		t.TargetID = fmt.Sprintf("%032X", t.ID*7919)
	}
	if t.URL == "" {
		t.URL = "about:blank"
	}
	t.WindowID = 1
	ft := &fakeTab{Tab: t}
	e.tabs[t.ID] = ft
	return ft
}

// offer is the tab object as the extension announces it.
func (e *Ext) offer(t Tab) Tab {
	if e.opts.NoTargetID {
		t.TargetID = ""
	}
	return t
}

// Initialize sends extension.initialized.
func (e *Ext) Initialize() { e.Emit("extension.initialized") }

// Tabs returns the tabs, sorted by id.
func (e *Ext) Tabs() []Tab {
	e.mu.Lock()
	defer e.mu.Unlock()
	out := make([]Tab, 0, len(e.tabs))
	for id := 0; len(out) < len(e.tabs); id++ {
		if t, ok := e.tabs[id]; ok {
			out = append(out, t.Tab)
		}
	}
	return out
}

// Attached reports whether the debugger is attached to tab id.
func (e *Ext) Attached(id int) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	t := e.tabs[id]
	return t != nil && t.attached
}

// Commands returns the commands received so far.
func (e *Ext) Commands() []Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Command(nil), e.commands...)
}

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

// Event sends a chrome.debugger.onEvent for tab id (and child session sid).
func (e *Ext) Event(tabID int, sid, method string, params any) error {
	src := map[string]any{"tabId": tabID}
	if sid != "" {
		src["sessionId"] = sid
	}
	return e.Emit("chrome.debugger.onEvent", src, method, params)
}

// OpenTab adds a tab and offers it (chrome.tabs.onCreated).
func (e *Ext) OpenTab(t Tab) Tab {
	ft := e.addTab(t)
	e.Emit("chrome.tabs.onCreated", e.offer(ft.Tab))
	return ft.Tab
}

// Navigate moves tab id to url with title, as a finished navigation
// would: an attached tab's session gets Page.frameNavigated and
// Page.loadEventFired, and our extension reports chrome.tabs.onUpdated (the
// stock one does not).
func (e *Ext) Navigate(id int, url, title string) {
	e.mu.Lock()
	t := e.tabs[id]
	if t == nil {
		e.mu.Unlock()
		return
	}
	t.URL, t.Title = url, title
	tab, attached := t.Tab, t.attached
	e.mu.Unlock()
	if attached {
		e.Event(id, "", "Page.frameNavigated", map[string]any{"frame": map[string]any{
			"id": tab.TargetID, "loaderId": "L", "url": url, "domainAndRegistry": "", "securityOrigin": url,
			"mimeType": "text/html", "secureContextType": "Secure", "crossOriginIsolatedContextType": "NotIsolated",
			"gatedAPIFeatures": []string{},
		}, "type": "Navigation"})
		e.Event(id, "", "Page.loadEventFired", map[string]any{"timestamp": 1.5})
	}
	if !e.opts.Stock {
		e.Emit("chrome.tabs.onUpdated", id, map[string]any{"url": url, "title": title}, tab)
	}
}

// CloseTab closes tab id as the person would: the debugger detaches with
// target_closed, then the tab is removed. The stock extension forwards the
// detach and filters the removal out: it says nothing more.
func (e *Ext) CloseTab(id int) {
	e.mu.Lock()
	t := e.tabs[id]
	delete(e.tabs, id)
	e.mu.Unlock()
	if t == nil {
		return
	}
	if t.attached {
		if e.explains() {
			e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed", map[string]string{"cause": "tab_closed"})
		} else {
			e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed")
		}
	}
	if !e.opts.Stock {
		e.Emit("chrome.tabs.onRemoved", id, map[string]any{"windowId": 1, "isWindowClosing": false})
	}
}

// explains reports whether the fake plays an extension that says why a
// tab detached.
func (e *Ext) explains() bool { return slices.Contains(e.opts.Features, "detach-cause") }

// DetachByBrowser detaches the debugger from tab id with reason, as Chrome
// does when the person cancels the infobar or a frame navigates to an
// unknown scheme; cause, when given, is what our extension adds to say
// why ({"cause": "extension_frame"}, say).
func (e *Ext) DetachByBrowser(id int, reason string, cause ...any) {
	e.mu.Lock()
	if t := e.tabs[id]; t != nil {
		t.attached = false
	}
	e.mu.Unlock()
	args := append([]any{map[string]int{"tabId": id}, reason}, cause...)
	e.Emit("chrome.debugger.onDetach", args...)
}

// RefuseAttach makes Chrome refuse to attach tab id with msg (as it does
// while another extension's frame is in it: "Cannot access a
// chrome-extension:// URL of different extension"); "" attaches again.
func (e *Ext) RefuseAttach(id int, msg string) {
	e.mu.Lock()
	if t := e.tabs[id]; t != nil {
		t.refuse = msg
	}
	e.mu.Unlock()
}

// DiscardTab discards tab id as Chrome's memory saver does: the tab is
// replaced by a new one with a new id and a new target. Our extension
// reports the old one detached (if it was attached) and removed, and
// offers the new one; the stock extension only forwards the detach.
func (e *Ext) DiscardTab(id int) Tab {
	e.mu.Lock()
	old := e.tabs[id]
	delete(e.tabs, id)
	e.mu.Unlock()
	if old == nil {
		return Tab{}
	}
	nt := e.addTab(Tab{URL: old.URL, Title: old.Title, OpenerTabID: old.OpenerTabID})
	if e.opts.Stock {
		if old.attached {
			e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed")
		}
		return nt.Tab
	}
	if old.attached {
		e.Emit("chrome.debugger.onDetach", map[string]int{"tabId": id}, "target_closed", map[string]any{"cause": "discarded", "replacedBy": nt.ID})
	}
	e.Emit("chrome.tabs.onRemoved", id, map[string]any{"windowId": 1, "isWindowClosing": false, "replacedBy": nt.ID})
	e.Emit("chrome.tabs.onCreated", e.offer(nt.Tab))
	return nt.Tab
}

// Keepalives is how many extension.keepalive commands the relay sent (they
// are not among Commands).
func (e *Ext) Keepalives() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.keepalives
}

// Window returns the fake's window as it is now.
func (e *Ext) Window() Window {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.window
}

// Close closes the connection with a normal close frame.
func (e *Ext) Close() {
	e.wmu.Lock()
	_ = e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, "bye"), time.Now().Add(time.Second))
	e.wmu.Unlock()
	select {
	case <-e.closed:
	case <-time.After(2 * time.Second):
	}
	e.conn.Close()
}

// CloseGoingAway closes the connection as Chrome closes a service worker's
// socket when it stops the worker, reloads, updates or uninstalls the
// extension: 1001 (going away), no reason.
func (e *Ext) CloseGoingAway() {
	e.wmu.Lock()
	_ = e.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseGoingAway, ""), time.Now().Add(time.Second))
	e.wmu.Unlock()
	select {
	case <-e.closed:
	case <-time.After(2 * time.Second):
	}
	e.conn.Close()
}

// Offer offers tab id again, as our extension does once a tab Chrome
// detached can be attached again (back on a web page), at url.
func (e *Ext) Offer(id int, url string) {
	e.mu.Lock()
	t := e.tabs[id]
	if t == nil {
		e.mu.Unlock()
		return
	}
	t.URL = url
	tab := t.Tab
	e.mu.Unlock()
	e.Emit("chrome.tabs.onCreated", e.offer(tab))
}

// Done is closed when the connection ends.
func (e *Ext) Done() <-chan struct{} { return e.closed }

// Err is the error that ended the connection.
func (e *Ext) Err() error {
	<-e.closed
	return e.closeErr
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

type debuggee struct {
	TabID     int    `json:"tabId"`
	SessionID string `json:"sessionId,omitempty"`
}

func (e *Ext) handle(id int64, method string, params []json.RawMessage) {
	if e.opts.Gate != nil {
		e.opts.Gate(method, params)
	}
	arg := func(i int, v any) error {
		if i >= len(params) {
			return fmt.Errorf("missing argument %d", i)
		}
		return json.Unmarshal(params[i], v)
	}
	switch method {
	case "chrome.debugger.attach":
		var d debuggee
		if err := arg(0, &d); err != nil {
			e.reply(id, nil, err)
			return
		}
		e.mu.Lock()
		t := e.tabs[d.TabID]
		var err error
		switch {
		case t == nil:
			err = fmt.Errorf("No tab with given id %d.", d.TabID)
		case t.attached:
			err = fmt.Errorf("Another debugger is already attached to the tab with id: %d.", d.TabID)
		case t.refuse != "":
			err = errors.New(t.refuse)
		case strings.HasPrefix(t.URL, "chrome://"):
			err = errors.New("Cannot access a chrome:// URL")
		default:
			t.attached = true
		}
		e.mu.Unlock()
		e.reply(id, nil, err)
	case "chrome.debugger.detach":
		var d debuggee
		arg(0, &d)
		e.mu.Lock()
		t := e.tabs[d.TabID]
		var err error
		if t == nil || !t.attached {
			err = fmt.Errorf("Debugger is not attached to the tab with id: %d.", d.TabID)
		} else {
			t.attached = false
		}
		e.mu.Unlock()
		e.reply(id, nil, err)
	case "chrome.debugger.sendCommand":
		var d debuggee
		var cdpMethod string
		if err := arg(0, &d); err != nil {
			e.reply(id, nil, err)
			return
		}
		arg(1, &cdpMethod)
		var p json.RawMessage
		if len(params) > 2 {
			p = params[2]
		}
		e.mu.Lock()
		t := e.tabs[d.TabID]
		var tab Tab
		ok := t != nil && t.attached
		if ok {
			tab = t.Tab
		}
		e.mu.Unlock()
		if !ok {
			e.reply(id, nil, fmt.Errorf("Debugger is not attached to the tab with id: %d.", d.TabID))
			return
		}
		if cdpMethod == "Target.getTargetInfo" && d.SessionID == "" {
			e.reply(id, map[string]any{"targetInfo": map[string]any{
				"targetId": tab.TargetID, "type": "page", "title": tab.Title, "url": tab.URL,
				"attached": true, "canAccessOpener": false, "browserContextId": "FAKECONTEXT0000000000000000000000",
			}}, nil)
			return
		}
		if cdpMethod == "Runtime.evaluate" && d.SessionID == "" && strings.Contains(string(p), "navigator.userAgent") {
			// What a page says about its browser: the user agent, and the
			// full version where the page may ask for it.
			e.reply(id, map[string]any{"result": map[string]any{"type": "object", "value": map[string]string{
				"userAgent": e.opts.UserAgent, "full": productVersion(e.opts.Product),
			}}}, nil)
			return
		}
		res, err := e.opts.Handler(d.TabID, d.SessionID, cdpMethod, p)
		e.reply(id, res, err)
	case "chrome.tabs.create":
		var props struct {
			URL    string `json:"url"`
			Active bool   `json:"active"`
		}
		arg(0, &props)
		ft := e.addTab(Tab{URL: props.URL, Active: props.Active})
		e.reply(id, e.offer(ft.Tab), nil)
	case "chrome.tabs.remove":
		var tabID int
		arg(0, &tabID)
		e.mu.Lock()
		_, ok := e.tabs[tabID]
		e.mu.Unlock()
		if !ok {
			e.reply(id, nil, fmt.Errorf("No tab with id: %d.", tabID))
			return
		}
		e.reply(id, nil, nil)
		e.CloseTab(tabID)
	case "extension.downloadFile":
		if e.opts.DownloadFile == nil || e.opts.Stock {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var q struct {
			URL   string `json:"url"`
			Bytes int64  `json:"bytes"`
		}
		arg(0, &q)
		path, size, err := e.opts.DownloadFile(q.URL, q.Bytes)
		if err != nil {
			e.reply(id, nil, err)
			return
		}
		e.reply(id, map[string]any{"path": path, "bytes": size}, nil)
	case "extension.keepalive":
		if e.opts.Stock {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		e.reply(id, nil, nil)
	case "extension.setNavigationFence":
		if !slices.Contains(e.opts.Features, "navigation-fence") {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var rules json.RawMessage
		arg(0, &rules)
		e.mu.Lock()
		e.netFence = rules
		e.mu.Unlock()
		e.reply(id, nil, nil)
	case "extension.closedTabs":
		// Ours, feature "wake": which of the tabs named are closed.
		if !slices.Contains(e.opts.Features, "wake") {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var ids []int
		arg(0, &ids)
		closed := []int{}
		e.mu.Lock()
		for _, tabID := range ids {
			if e.tabs[tabID] == nil {
				closed = append(closed, tabID)
			}
		}
		e.mu.Unlock()
		e.reply(id, closed, nil)
	case "chrome.tabs.get", "chrome.windows.get", "chrome.windows.update":
		if !slices.Contains(e.opts.Features, "windows") {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		e.windows(id, method, params)
	case "chrome.tabs.update":
		if e.opts.Stock {
			e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
			return
		}
		var tabID int
		arg(0, &tabID)
		e.mu.Lock()
		t := e.tabs[tabID]
		var tab Tab
		if t != nil {
			t.Active = true
			tab = t.Tab
		}
		e.mu.Unlock()
		if t == nil {
			e.reply(id, nil, fmt.Errorf("No tab with id: %d.", tabID))
			return
		}
		e.reply(id, tab, nil)
	default:
		e.reply(id, nil, fmt.Errorf("Unknown method: %s", method))
	}
}

// windows answers chrome.tabs.get and chrome.windows.get and update as our
// extension does: only for the window of a shared tab (the fake's one).
func (e *Ext) windows(id int64, method string, params []json.RawMessage) {
	res, err := e.window1(method, params)
	e.reply(id, res, err)
}

func (e *Ext) window1(method string, params []json.RawMessage) (any, error) {
	var n int
	if len(params) == 0 || json.Unmarshal(params[0], &n) != nil {
		return nil, errors.New("missing argument 0")
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if method == "chrome.tabs.get" {
		if t := e.tabs[n]; t != nil {
			return t.Tab, nil
		}
		return nil, fmt.Errorf("Tab %d is not shared", n)
	}
	if n != e.window.ID {
		return nil, errors.New("Browser window not found")
	}
	if method == "chrome.windows.update" && len(params) > 1 {
		var u struct {
			Left, Top, Width, Height *int
			State                    string
		}
		json.Unmarshal(params[1], &u)
		for _, f := range []struct{ v, dst *int }{{u.Left, &e.window.Left}, {u.Top, &e.window.Top}, {u.Width, &e.window.Width}, {u.Height, &e.window.Height}} {
			if f.v != nil {
				*f.dst = *f.v
			}
		}
		if u.State != "" {
			e.window.State = u.State
		}
	}
	return e.window, nil
}

// DefaultHandler answers like a tab would for the few commands tests use
// and echoes everything else: {"method":..., "params":...}. Browser.* is
// not found, as through chrome.debugger.
func DefaultHandler(tabID int, sessionID, method string, params json.RawMessage) (any, error) {
	switch {
	case strings.HasPrefix(method, "Browser."):
		return nil, CDPError(-32601, "'"+method+"' wasn't found")
	case method == "Target.getTargets" || method == "Target.setDiscoverTargets" || method == "Target.attachToTarget":
		return nil, CDPError(-32000, "Not allowed")
	case method == "Runtime.evaluate":
		return map[string]any{"result": map[string]any{"type": "number", "value": 2, "description": "2"}}, nil
	}
	if params == nil {
		params = json.RawMessage("null")
	}
	return map[string]any{"echo": map[string]any{"tabId": tabID, "sessionId": sessionID, "method": method, "params": params}}, nil
}

// NetFence returns the first-request fence's rules the relay last gave
// (extension.setNavigationFence), or nil when it gave none.
func (e *Ext) NetFence() json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.netFence
}
