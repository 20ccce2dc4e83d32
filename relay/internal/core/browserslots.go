package core

import (
	"sync"

	"github.com/cdprelay/cdprelay/relay/internal/browser"
)

// What the browser concern (browserinfo.go, downloads.go) keeps per
// client, per instance and in the state: its slots, embedded in
// clientConn, Instance and state.

// BrowserState is what the browser concern keeps in the instance's state.
// Guarded by the instance's mutex.
type BrowserState struct {
	Info       BrowserInfo // what the extension reported, or the relay learnt
	Remembered BrowserInfo // the browser last reported, from Config.BrowserFile (browserinfo.go)
	// dl: the downloads under way (downloads.go).
	dl downloads
}

// browserClient is what the browser concern keeps of a client. Guarded by
// the instance's mutex.
type browserClient struct {
	downloadEvents bool // Browser.setDownloadBehavior{eventsEnabled}
	// downloadTo is where the client wants its downloads, and
	// tabDownloadTo where for one tab (Page.setDownloadBehavior): see
	// downloads.go.
	downloadTo    browser.DownloadTo
	tabDownloadTo map[int64]browser.DownloadTo
}

// browserInstance is what the browser concern keeps of an instance.
type browserInstance struct {
	// learning serialises finding out the browser's identity, so that
	// concurrent Browser.getVersion calls ask a tab once.
	learning sync.Mutex
}
