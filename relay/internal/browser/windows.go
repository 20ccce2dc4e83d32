package browser

import "errors"

// Browser windows: what Browser.getWindowForTarget, getWindowBounds and
// setWindowBounds take and give, and what chrome.windows says of a window
// (the relay's windows.go asks the extension).

// WindowBounds is CDP's Browser.Bounds.
type WindowBounds struct {
	Left        *int64 `json:"left,omitempty"`
	Top         *int64 `json:"top,omitempty"`
	Width       *int64 `json:"width,omitempty"`
	Height      *int64 `json:"height,omitempty"`
	WindowState string `json:"windowState,omitempty"`
}

// Window is the subset of chrome.windows.Window the relay reads.
type Window struct {
	ID     int64  `json:"id"`
	Left   int64  `json:"left"`
	Top    int64  `json:"top"`
	Width  int64  `json:"width"`
	Height int64  `json:"height"`
	State  string `json:"state"`
}

// Bounds is the window as Chrome's browser target reports it.
func (w Window) Bounds() WindowBounds {
	state := w.State
	if state == "locked-fullscreen" {
		state = "fullscreen"
	}
	return WindowBounds{Left: &w.Left, Top: &w.Top, Width: &w.Width, Height: &w.Height, WindowState: state}
}

// WindowParams are the params of Browser.getWindowBounds and
// setWindowBounds.
type WindowParams struct {
	WindowID *int64        `json:"windowId"`
	Bounds   *WindowBounds `json:"bounds"`
}

// Chrome's words.
const (
	msgStateAndSize = "The 'minimized', 'maximized' and 'fullscreen' states cannot be combined with 'left', 'top', 'width' or 'height'"
	msgBadState     = "Invalid parameters: Failed to deserialize params.bounds.windowState - BINDINGS: invalid enum value"
)

// WindowUpdate is what chrome.windows.update is given for setWindowBounds'
// bounds b; the error, in Chrome's words, is the params' fault.
func WindowUpdate(b *WindowBounds) (map[string]any, error) {
	sized := b.Left != nil || b.Top != nil || b.Width != nil || b.Height != nil
	switch b.WindowState {
	case "", "normal":
	case "minimized", "maximized", "fullscreen":
		if sized {
			return nil, errors.New(msgStateAndSize)
		}
	default:
		return nil, errors.New(msgBadState)
	}
	update := map[string]any{}
	for key, v := range map[string]*int64{"left": b.Left, "top": b.Top, "width": b.Width, "height": b.Height} {
		if v != nil {
			update[key] = *v
		}
	}
	if b.WindowState != "" {
		update["state"] = b.WindowState
	}
	return update, nil
}
