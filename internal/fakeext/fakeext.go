package fakeext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
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

// Initialize sends extension.initialized.
func (e *Ext) Initialize() { e.Emit("extension.initialized") }

// Commands returns the commands received so far.
func (e *Ext) Commands() []Command {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]Command(nil), e.commands...)
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

// Done is closed when the connection ends.
func (e *Ext) Done() <-chan struct{} { return e.closed }

// Err is the error that ended the connection.
func (e *Ext) Err() error {
	<-e.closed
	return e.closeErr
}

// NetFence returns the first-request fence's rules the relay last gave
// (extension.setNavigationFence), or nil when it gave none.
func (e *Ext) NetFence() json.RawMessage {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.netFence
}
