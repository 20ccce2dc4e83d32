package viewer

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"unicode/utf8"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/input"
	"github.com/chromedp/cdproto/page"
)

// Input is what a viewer asks to do to the tab it watches. Kind selects
// the allow-listed action; the other fields are read only by the kinds
// that use them.
type Input struct {
	// Kind is mouse, key, bring-to-front, resize, navigate or reload.
	Kind string `json:"kind"`
	// Action: for mouse, move, down, up, click (down then up) or wheel;
	// for key, down, up or text.
	Action string `json:"action,omitempty"`

	// X and Y are a point of the frame as fractions of its width and
	// height, in [0, 1].
	X float64 `json:"x,omitempty"`
	Y float64 `json:"y,omitempty"`
	// Button is none, left, middle, right, back or forward. Default:
	// none for move and wheel, left otherwise.
	Button string `json:"button,omitempty"`
	// Buttons is the DOM bit field of the buttons held (left 1, right 2,
	// middle 4, back 8, forward 16), for drags.
	Buttons int `json:"buttons,omitempty"`
	// ClickCount is 1 for a click, 2 for the second of a double click.
	// Default: 1 for down, up and click.
	ClickCount int `json:"clickCount,omitempty"`
	// DeltaX and DeltaY are the wheel's scroll in CSS pixels.
	DeltaX float64 `json:"deltaX,omitempty"`
	DeltaY float64 `json:"deltaY,omitempty"`
	// Modifiers is CDP's bit field: Alt 1, Ctrl 2, Meta 4, Shift 8.
	Modifiers int `json:"modifiers,omitempty"`

	// Key and Code are the DOM KeyboardEvent's key and code.
	Key  string `json:"key,omitempty"`
	Code string `json:"code,omitempty"`
	// Text is what a key down types ("" for keys that type nothing), or
	// the text to insert for the text action.
	Text string `json:"text,omitempty"`
	// KeyCode is the DOM keyCode, which CDP needs as the Windows virtual
	// key code for keys such as Enter, Backspace and the arrows.
	KeyCode int `json:"keyCode,omitempty"`
	// Location is the DOM location: 0 standard, 1 left, 2 right, 3 keypad.
	Location int `json:"location,omitempty"`

	// Width and Height are the viewport size a resize asks for, in CSS
	// pixels; they are clamped to 320–3840 × 240–2160.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`

	// URL is where navigate goes. The server's URL fence decides first.
	URL string `json:"url,omitempty"`
}

// Geometry is what the last frame a viewer was sent says about the
// viewport: the CSS size its image shows. The zero Geometry means no
// frame yet.
type Geometry struct {
	Width, Height float64
}

// Sequence is params for a method sent several times, in order: a click
// is a press and a release.
type Sequence []any

// Input kinds and the methods they map to. Nothing else is ever sent on
// a viewer's behalf.
const (
	KindMouse        = "mouse"
	KindKey          = "key"
	KindBringToFront = "bring-to-front"
	KindResize       = "resize"
	KindNavigate     = "navigate"
	// KindReload reloads the tab: what script left in its page (timers,
	// listeners) ends with the document.
	KindReload = "reload"
)

// Methods is every CDP method Map can return.
var Methods = []string{
	input.CommandDispatchMouseEvent,
	input.CommandDispatchKeyEvent,
	input.CommandInsertText,
	page.CommandBringToFront,
	emulation.CommandSetDeviceMetricsOverride,
	page.CommandNavigate,
	page.CommandReload,
}

// Resize bounds: a phone in portrait up to 4K.
const (
	MinWidth, MaxWidth   = 320, 3840
	MinHeight, MaxHeight = 240, 2160
)

// Limits on what a viewer may send in one input.
const (
	maxWheelDelta = 10000
	maxKeyField   = 32   // bytes of key or code; the longest DOM key name is 23
	maxKeyText    = 16   // bytes a single key press types
	maxInsertText = 8192 // bytes of one text insertion
	maxURL        = 8192
)

// ErrNoFrame refuses a pointer input before the viewer has seen a frame:
// there is nothing to map its coordinates with.
var ErrNoFrame = errors.New("no frame yet: a pointer position cannot be mapped")

// Map turns one viewer input into the one CDP command it stands for. It is
// a pure function: nothing outside Methods can come out, and anything out
// of range is refused, never clamped (except a resize's size, which is
// clamped to what the live view can show). A Sequence params means the
// method is sent once per element, in order.
func Map(in Input, geom Geometry) (method string, params any, err error) {
	switch in.Kind {
	case KindMouse:
		return mapMouse(in, geom)
	case KindKey:
		return mapKey(in)
	case KindBringToFront:
		return page.CommandBringToFront, nil, nil
	case KindReload:
		return page.CommandReload, nil, nil
	case KindResize:
		if in.Width <= 0 || in.Height <= 0 {
			return "", nil, fmt.Errorf("resize to %d×%d: width and height must be positive", in.Width, in.Height)
		}
		return emulation.CommandSetDeviceMetricsOverride, &emulation.SetDeviceMetricsOverrideParams{
			Width:  int64(min(max(in.Width, MinWidth), MaxWidth)),
			Height: int64(min(max(in.Height, MinHeight), MaxHeight)),
			// 0 keeps the tab's own device scale factor.
			DeviceScaleFactor: 0,
			Mobile:            false,
		}, nil
	case KindNavigate:
		if err := checkNavigateURL(in.URL); err != nil {
			return "", nil, err
		}
		return page.CommandNavigate, &page.NavigateParams{URL: in.URL}, nil
	case "":
		return "", nil, errors.New("input has no kind")
	}
	return "", nil, fmt.Errorf("input kind %.32q is not allowed", in.Kind)
}

func mapMouse(in Input, geom Geometry) (string, any, error) {
	var typ input.DispatchMouseEventType
	switch in.Action {
	case "move":
		typ = input.DispatchMouseEventTypeMouseMoved
	case "down", "click":
		typ = input.DispatchMouseEventTypeMousePressed
	case "up":
		typ = input.DispatchMouseEventTypeMouseReleased
	case "wheel":
		typ = input.DispatchMouseEventTypeMouseWheel
	default:
		return "", nil, fmt.Errorf("mouse action %.32q is not allowed", in.Action)
	}
	if !(geom.Width > 0 && geom.Height > 0) || math.IsInf(geom.Width, 0) || math.IsInf(geom.Height, 0) {
		return "", nil, ErrNoFrame
	}
	if err := unit("x", in.X); err != nil {
		return "", nil, err
	}
	if err := unit("y", in.Y); err != nil {
		return "", nil, err
	}
	if err := modifiers(in.Modifiers); err != nil {
		return "", nil, err
	}
	if in.Buttons < 0 || in.Buttons > 31 {
		return "", nil, fmt.Errorf("buttons %d is not a set of the five mouse buttons", in.Buttons)
	}
	p := &input.DispatchMouseEventParams{
		Type:      typ,
		X:         in.X * geom.Width,
		Y:         in.Y * geom.Height,
		Modifiers: int64(in.Modifiers),
		Buttons:   int64(in.Buttons),
	}
	if in.Action == "wheel" {
		if !finite(in.DeltaX) || !finite(in.DeltaY) || math.Abs(in.DeltaX) > maxWheelDelta || math.Abs(in.DeltaY) > maxWheelDelta {
			return "", nil, fmt.Errorf("wheel delta (%v, %v) is outside ±%d", in.DeltaX, in.DeltaY, maxWheelDelta)
		}
		p.DeltaX, p.DeltaY = in.DeltaX, in.DeltaY
		return input.CommandDispatchMouseEvent, p, nil
	}
	button := in.Button
	if button == "" {
		button = "left"
		if in.Action == "move" {
			button = "none"
		}
	}
	switch input.MouseButton(button) {
	case input.MouseButtonNone, input.MouseButtonLeft, input.MouseButtonMiddle, input.MouseButtonRight, input.MouseButtonBack, input.MouseButtonForward:
		p.Button = input.MouseButton(button)
	default:
		return "", nil, fmt.Errorf("mouse button %.16q is not a button", button)
	}
	if in.Action != "move" {
		clicks := in.ClickCount
		if clicks == 0 {
			clicks = 1
		}
		if clicks < 1 || clicks > 3 {
			return "", nil, fmt.Errorf("click count %d is outside 1–3", in.ClickCount)
		}
		p.ClickCount = int64(clicks)
	}
	if in.Action == "click" {
		up := *p
		up.Type = input.DispatchMouseEventTypeMouseReleased
		return input.CommandDispatchMouseEvent, Sequence{p, &up}, nil
	}
	return input.CommandDispatchMouseEvent, p, nil
}

func mapKey(in Input) (string, any, error) {
	if err := modifiers(in.Modifiers); err != nil {
		return "", nil, err
	}
	if in.Action == "text" {
		if in.Text == "" || len(in.Text) > maxInsertText || !utf8.ValidString(in.Text) {
			return "", nil, fmt.Errorf("text to insert must be 1–%d bytes of UTF-8", maxInsertText)
		}
		return input.CommandInsertText, &input.InsertTextParams{Text: in.Text}, nil
	}
	var typ input.DispatchKeyEventType
	switch in.Action {
	case "down":
		typ = input.DispatchKeyEventTypeRawKeyDown
		if in.Text != "" {
			typ = input.DispatchKeyEventTypeKeyDown
		}
	case "up":
		typ = input.DispatchKeyEventTypeKeyUp
		if in.Text != "" {
			return "", nil, errors.New("a key up types no text")
		}
	default:
		return "", nil, fmt.Errorf("key action %.32q is not allowed", in.Action)
	}
	if in.Key == "" || len(in.Key) > maxKeyField || len(in.Code) > maxKeyField || !utf8.ValidString(in.Key) || !utf8.ValidString(in.Code) {
		return "", nil, fmt.Errorf("key and code must be 1–%d bytes of UTF-8", maxKeyField)
	}
	if len(in.Text) > maxKeyText || !utf8.ValidString(in.Text) {
		return "", nil, fmt.Errorf("a key press types at most %d bytes of UTF-8", maxKeyText)
	}
	if in.KeyCode < 0 || in.KeyCode > 255 {
		return "", nil, fmt.Errorf("key code %d is outside 0–255", in.KeyCode)
	}
	if in.Location < 0 || in.Location > 3 {
		return "", nil, fmt.Errorf("key location %d is outside 0–3", in.Location)
	}
	p := &input.DispatchKeyEventParams{
		Type:                  typ,
		Modifiers:             int64(in.Modifiers),
		Key:                   in.Key,
		Code:                  in.Code,
		Text:                  in.Text,
		UnmodifiedText:        in.Text,
		WindowsVirtualKeyCode: int64(in.KeyCode),
	}
	switch in.Location {
	case 1, 2:
		p.Location = int64(in.Location)
	case 3:
		keypad := true
		p.IsKeypad = &keypad
	}
	return input.CommandDispatchKeyEvent, p, nil
}

// checkNavigateURL refuses what no fence should let through: a URL that
// does not parse, or one that runs script in the page (which is what
// keeping viewers away from Runtime.* is about).
func checkNavigateURL(raw string) error {
	if raw == "" || len(raw) > maxURL || !utf8.ValidString(raw) {
		return fmt.Errorf("navigate needs a URL of 1–%d bytes", maxURL)
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme == "" {
		return errors.New("navigate needs an absolute URL")
	}
	if strings.EqualFold(u.Scheme, "javascript") {
		return errors.New("javascript: URLs are not navigations")
	}
	return nil
}

// DefaultURLFence lets viewers navigate to http, https and about:blank.
func DefaultURLFence(raw string) (ok bool, reason string) {
	u, err := url.Parse(raw)
	if err != nil {
		return false, "the URL does not parse"
	}
	switch strings.ToLower(u.Scheme) {
	case "http", "https":
		if u.Host == "" {
			return false, "the URL has no host"
		}
		return true, ""
	case "about":
		if strings.EqualFold(raw, "about:blank") {
			return true, ""
		}
	}
	return false, "viewers may navigate to http, https and about:blank only"
}

func unit(name string, v float64) error {
	if !(v >= 0 && v <= 1) { // false for NaN too
		return fmt.Errorf("%s %v is outside [0, 1]", name, v)
	}
	return nil
}

func modifiers(m int) error {
	if m < 0 || m > 15 {
		return fmt.Errorf("modifiers %d is not a set of Alt, Ctrl, Meta and Shift", m)
	}
	return nil
}

func finite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// input checks that this viewer may act on its tab, maps the input and
// sends the command.
func (c *conn) input(req *request) error {
	switch {
	case !c.interactive:
		return errors.New("this viewer may only watch")
	case c.cur == nil:
		return errors.New("not subscribed to a tab")
	case !c.holding:
		return errors.New("take control of the tab before sending input")
	case req.Input == nil:
		return errors.New("input message without input")
	}
	s := c.cur
	if by := s.w.inst.Controller(s.key.tab); by != c.holder {
		// The relay forgot the take-over (the tab was re-shared, say).
		c.holding = false
		c.srv.broadcast(s.w.inst, mustJSON(controlMsg{Type: msgControl, Instance: s.key.instance, Tab: s.key.tab, Holder: by}))
		return errors.New("this viewer no longer controls the tab")
	}
	in := *req.Input
	if in.Kind == KindNavigate {
		if err := checkNavigateURL(in.URL); err != nil {
			return err
		}
		if ok, why := c.srv.cfg.URLFence(s.key.instance, in.URL); !ok {
			return fmt.Errorf("navigation refused: %s", why)
		}
	}
	var geom Geometry
	if g := c.lastGeom.Load(); g != nil && g.key == s.key {
		geom = g.geom
	}
	method, params, err := Map(in, geom)
	if err != nil {
		return err
	}
	if in.Kind == KindResize {
		s.w.mu.Lock()
		s.w.resized = true
		s.w.mu.Unlock()
	}
	calls := Sequence{params}
	if seq, ok := params.(Sequence); ok {
		calls = seq
	}
	for _, p := range calls {
		ctx, cancel := context.WithTimeout(c.ctx, callTimeout)
		_, err := s.w.tab.Call(ctx, method, p)
		cancel()
		if err != nil {
			return fmt.Errorf("%s: %w", in.Kind, err)
		}
	}
	return nil
}
