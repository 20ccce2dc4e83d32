package core

import (
	"github.com/go-json-experiment/json/jsontext"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// Params read once, as Chrome reads them.
//
// A value that a stage judges (a URL, a target id, a session id, a file)
// is decoded once, in the route step, and every later stage and the
// emulation act on that decoded value: no stage can judge one value while
// another acts on a different one. Decoding follows Chrome's reading of
// CDP params: keys are compared exactly, after their escapes are decoded
// ("u\u0072l" is "url", "URL" is not), and params that give a key twice
// are refused, since the relay and the browser need not pick the same one
// of two. Only the methods below are decoded at all; every other command's
// params stay the bytes the client sent.

// Args are the decoded params of one command. Which fields are set
// depends on the method (argsOf).
type Args struct {
	Url    string // the URL the fence judges (urlMethods)
	HasURL bool   // the command carries one

	TargetID               string
	SessionID              string
	Flatten                *bool
	AutoAttach             bool
	waitForDebuggerOnStart bool
	background             bool
	newWindow              bool
	browserContextID       string
	discover               bool
	EventsEnabled          bool
	DownloadBehavior       string // Browser/Page.setDownloadBehavior's behavior
	DownloadPath           string // and downloadPath (package browser)
	patterns               []cdp.FetchPattern
	handleAuth             bool
	Files                  []string // files a command makes the page read
}

// urlMethods are the commands whose URL the fence judges, with the name of
// the field that carries it; the policy's table (denylist.URLParam) names
// the same.
var UrlMethods = map[string]string{
	"Page.navigate":               "url",
	"Target.createTarget":         "url",
	"Network.loadNetworkResource": "url",
	"Fetch.continueRequest":       "url",
}

// decodedMethods are the methods whose params are decoded into args, and
// how.
var DecodedMethods = map[string]func(params []byte, a *Args) error{
	"Page.navigate":               decodeNothingMore,
	"Network.loadNetworkResource": decodeNothingMore,
	"Fetch.continueRequest":       decodeNothingMore,
	"Target.createTarget": func(p []byte, a *Args) error {
		var v struct {
			Background       bool   `json:"background"`
			NewWindow        bool   `json:"newWindow"`
			BrowserContextID string `json:"browserContextId"`
		}
		err := DecodeStruct(p, &v)
		a.background, a.newWindow, a.browserContextID = v.Background, v.NewWindow, v.BrowserContextID
		return err
	},
	"Target.closeTarget":         decodeTargetID,
	"Target.activateTarget":      decodeTargetID,
	"Target.getTargetInfo":       decodeTargetID,
	"Target.getDevToolsTarget":   decodeTargetID,
	"Browser.getWindowForTarget": decodeTargetID,
	"Target.attachToTarget": func(p []byte, a *Args) error {
		var v struct {
			TargetID string `json:"targetId"`
			Flatten  *bool  `json:"flatten"`
		}
		err := DecodeStruct(p, &v)
		a.TargetID, a.Flatten = v.TargetID, v.Flatten
		return err
	},
	"Target.detachFromTarget": func(p []byte, a *Args) error {
		var v struct {
			SessionID string `json:"sessionId"`
			TargetID  string `json:"targetId"`
		}
		err := DecodeStruct(p, &v)
		a.SessionID, a.TargetID = v.SessionID, v.TargetID
		return err
	},
	"Target.setAutoAttach": func(p []byte, a *Args) error {
		var v struct {
			AutoAttach             bool  `json:"autoAttach"`
			WaitForDebuggerOnStart bool  `json:"waitForDebuggerOnStart"`
			Flatten                *bool `json:"flatten"`
		}
		err := DecodeStruct(p, &v)
		a.AutoAttach, a.waitForDebuggerOnStart, a.Flatten = v.AutoAttach, v.WaitForDebuggerOnStart, v.Flatten
		return err
	},
	"Target.setDiscoverTargets": func(p []byte, a *Args) error {
		var v struct {
			Discover bool `json:"discover"`
		}
		err := DecodeStruct(p, &v)
		a.discover = v.Discover
		return err
	},
	"Browser.setDownloadBehavior": decodeDownloadBehavior,
	"Page.setDownloadBehavior":    decodeDownloadBehavior,
	"DOM.setFileInputFiles": func(p []byte, a *Args) error {
		var v struct {
			Files []string `json:"files"`
		}
		err := DecodeStruct(p, &v)
		a.Files = v.Files
		return err
	},
	"Input.dispatchDragEvent": func(p []byte, a *Args) error {
		var v struct {
			Data struct {
				Files []string `json:"files"`
			} `json:"data"`
		}
		err := DecodeStruct(p, &v)
		a.Files = v.Data.Files
		return err
	},
	"Fetch.enable": func(p []byte, a *Args) error {
		var v struct {
			Patterns           []cdp.FetchPattern `json:"patterns"`
			HandleAuthRequests bool               `json:"handleAuthRequests"`
		}
		err := DecodeStruct(p, &v)
		a.patterns, a.handleAuth = v.Patterns, v.HandleAuthRequests
		return err
	},
}

// decodeNothingMore reads no field beyond the URL, but checks what every
// decoded method's params must be: an object that gives no key twice.
func decodeNothingMore(p []byte, _ *Args) error { return DecodeStruct(p, &struct{}{}) }

func decodeTargetID(p []byte, a *Args) error {
	var v struct {
		TargetID string `json:"targetId"`
	}
	err := DecodeStruct(p, &v)
	a.TargetID = v.TargetID
	return err
}

// Params are read as Chrome reads them (cdp/params.go), by the short names
// the relay's many callers use. Functions rather than variables, so that
// they inline and the compiler still sees what escapes on the per-message
// path.

func DecodeStruct(params []byte, v any) error { return cdp.DecodeStruct(params, v) }

func ExactString(params []byte, key string) (val string, found bool, err error) {
	return cdp.ExactString(params, key)
}

// ArgsOf decodes the params of m into a. Nothing is read for a method
// whose params the relay does not judge.
func ArgsOf(m *MethodInfo, params []byte, a *Args) error {
	if m.Unique && params != nil && !jsontext.Value(params).IsValid(jsontext.AllowInvalidUTF8(true)) {
		// The frame is valid JSON (the envelope codec checked it): what is
		// left is a name given twice in one object.
		return &cdp.ParamsError{Msg: "Invalid parameters: params carry a key twice"}
	}
	if m.UrlKey != "" {
		u, found, err := ExactString(params, m.UrlKey)
		if err != nil {
			return err
		}
		a.Url, a.HasURL = u, found
	}
	if m.Decode == nil {
		return nil
	}
	if err := m.Decode(params, a); err != nil {
		return cdp.InvalidParams(err)
	}
	return nil
}

// decodeDownloadBehavior reads Browser.setDownloadBehavior's and
// Page.setDownloadBehavior's params.
func decodeDownloadBehavior(p []byte, a *Args) error {
	var v struct {
		Behavior      string `json:"behavior"`
		DownloadPath  string `json:"downloadPath"`
		EventsEnabled bool   `json:"eventsEnabled"`
	}
	err := DecodeStruct(p, &v)
	a.DownloadBehavior, a.DownloadPath, a.EventsEnabled = v.Behavior, v.DownloadPath, v.EventsEnabled
	return err
}
