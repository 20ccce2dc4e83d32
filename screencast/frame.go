package screencast

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Frame is one decoded screencast frame. It is shared by every subscriber
// and must not be modified.
type Frame struct {
	// Seq numbers the frames of one tap from 1, so that a subscriber can
	// tell how many it missed.
	Seq uint64
	// JPEG is the image as Chrome encoded it.
	JPEG []byte
	// Width and Height are the image's size in pixels, read from the JPEG
	// header; 0 when the header could not be read. Chrome scales the
	// viewport down to the configured maximum, so they may be smaller
	// than the viewport.
	Width, Height int
	// Metadata is Chrome's description of the viewport the frame shows.
	Metadata Metadata
	// Received is when the tap got the frame.
	Received time.Time
	// ClientOwned marks a frame of the CDP client's own screencast.
	ClientOwned bool

	memoOnce sync.Once
	memo     any
}

// Memo returns fn's result for f, computing it once. A consumer that
// sends the same frame to many peers keeps its encoded form here so that
// all of them share one copy.
func (f *Frame) Memo(fn func(*Frame) any) any {
	f.memoOnce.Do(func() { f.memo = fn(f) })
	return f.memo
}

// Metadata is Page.ScreencastFrameMetadata: the geometry that maps a point
// of the image back to the page. Lengths are CSS pixels.
type Metadata struct {
	OffsetTop       float64 `json:"offsetTop"`
	PageScaleFactor float64 `json:"pageScaleFactor"`
	// DeviceWidth and DeviceHeight are the size of the viewport the image
	// shows: a point at a fraction (fx, fy) of the image is the CSS
	// viewport point (fx·DeviceWidth, fy·DeviceHeight).
	DeviceWidth   float64 `json:"deviceWidth"`
	DeviceHeight  float64 `json:"deviceHeight"`
	ScrollOffsetX float64 `json:"scrollOffsetX"`
	ScrollOffsetY float64 `json:"scrollOffsetY"`
	// Timestamp is the frame's swap time in seconds since the epoch; 0
	// when Chrome did not say.
	Timestamp float64 `json:"timestamp,omitempty"`
}

var errMalformed = errors.New("malformed Page.screencastFrame")

// decodeFrame reads the params of a Page.screencastFrame event. ackID is
// the number Page.screencastFrameAck must echo; hasID says whether the
// event carried one, even when the rest could not be read.
//
// The image is nearly all of the event, so the event is scanned as few
// times as possible: once to validate it, once to find the image; the
// other members are read from a copy with the image left out.
func decodeFrame(params []byte) (f *Frame, ackID int64, hasID bool, err error) {
	if wire.Valid(params) != nil {
		return nil, 0, false, errMalformed
	}
	var rest struct {
		SessionID *int64    `json:"sessionId"`
		Metadata  *Metadata `json:"metadata"`
	}
	tok := wire.Field(params, "data")
	small := params
	if at, ok := offsetIn(params, tok); ok {
		small = make([]byte, 0, len(params)-len(tok)+2)
		small = append(small, params[:at]...)
		small = append(small, `""`...)
		small = append(small, params[at+len(tok):]...)
	}
	if json.Unmarshal(small, &rest) != nil || rest.SessionID == nil {
		return nil, 0, false, errMalformed
	}
	id := *rest.SessionID
	data, ok := imageData(tok)
	if !ok || len(data) == 0 {
		return nil, id, true, errMalformed
	}
	img := make([]byte, base64.StdEncoding.DecodedLen(len(data)))
	n, err := base64.StdEncoding.Decode(img, data)
	if err != nil {
		return nil, id, true, errMalformed
	}
	f = &Frame{JPEG: img[:n:n]}
	if rest.Metadata != nil {
		f.Metadata = *rest.Metadata
	}
	f.Width, f.Height, _ = jpegSize(f.JPEG)
	return f, id, true, nil
}

// imageData returns the content of the string token tok. Base64 needs no
// escapes, so the token is decoded only when some encoder escaped anyway.
func imageData(tok []byte) ([]byte, bool) {
	if len(tok) < 2 || tok[0] != '"' || tok[len(tok)-1] != '"' {
		return nil, false
	}
	if inner := tok[1 : len(tok)-1]; bytes.IndexByte(inner, '\\') < 0 {
		return inner, true
	}
	return wire.Unquote(tok)
}

// offsetIn returns where sub starts inside b, when sub is a part of b.
func offsetIn(b, sub []byte) (int, bool) {
	if len(sub) == 0 {
		return 0, false
	}
	at := cap(b) - cap(sub)
	if at < 0 || at+len(sub) > len(b) || &b[at] != &sub[0] {
		return 0, false
	}
	return at, true
}

// jpegSize reads the image size from a JPEG's start-of-frame segment,
// without decoding the image.
func jpegSize(b []byte) (w, h int, ok bool) {
	if len(b) < 4 || b[0] != 0xFF || b[1] != 0xD8 {
		return 0, 0, false
	}
	i := 2
	for i+4 <= len(b) {
		if b[i] != 0xFF {
			return 0, 0, false
		}
		m := b[i+1]
		switch {
		case m == 0xFF: // fill byte before a marker
			i++
			continue
		case m == 0x01 || (m >= 0xD0 && m <= 0xD7): // no length, no payload
			i += 2
			continue
		case m == 0xD9 || m == 0xDA: // end of image, start of scan: no SOF came
			return 0, 0, false
		}
		n := int(b[i+2])<<8 | int(b[i+3])
		if n < 2 {
			return 0, 0, false
		}
		// SOF0–SOF15 except DHT (C4), JPG (C8) and DAC (CC).
		if m >= 0xC0 && m <= 0xCF && m != 0xC4 && m != 0xC8 && m != 0xCC {
			if n < 7 || i+9 > len(b) {
				return 0, 0, false
			}
			h = int(b[i+5])<<8 | int(b[i+6])
			w = int(b[i+7])<<8 | int(b[i+8])
			return w, h, w > 0 && h > 0
		}
		i += 2 + n
	}
	return 0, 0, false
}
