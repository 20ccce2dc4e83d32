package creds

import "github.com/cdprelay/cdprelay/internal/wire"

// What the lock cannot read.
//
// While a secret is locked (a URL's password too, userinfo.go), every
// message to the client has its value replaced wherever it is written, in
// any escape or encoding (secrets.Lock). A few commands give what the lock
// cannot read, and are refused while it holds anything:
//
//   - Page.printToPDF: the text of a PDF is compressed, in the glyphs of
//     subset fonts, and a client takes it out again (a page that mirrors
//     what is typed, a footer with the page's URL);
//   - HeapProfiler.takeHeapSnapshot and stopTrackingHeapObjects: the heap's
//     strings come in chunks cut anywhere, a value across two;
//   - Network.streamResourceContent: a body's pieces in Network.dataReceived,
//     cut anywhere likewise;
//   - Tracing.start with streamCompression gzip: a compressed stream.
//
// (IO.read's pieces are joined by the relay: streams.go.)

// Unscannable returns why what command method (with params) gives is
// beyond the lock, or "" when the lock reads it.
func Unscannable(method string, params []byte) (why string) {
	switch method {
	case "Page.printToPDF":
		return "a PDF's text is compressed, in fonts' glyphs"
	case "HeapProfiler.takeHeapSnapshot", "HeapProfiler.stopTrackingHeapObjects":
		return "a heap snapshot comes in chunks cut anywhere"
	case "Network.streamResourceContent":
		return "a streamed body comes in pieces cut anywhere"
	case "Tracing.start":
		if string(wire.StringField(params, "streamCompression")) == "none" || wire.Field(params, "streamCompression") == nil {
			return ""
		}
		return "a compressed trace cannot be read"
	}
	return ""
}
