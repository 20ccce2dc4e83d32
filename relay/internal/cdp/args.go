package cdp

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
// depends on the method (methods.ArgsOf).
type Args struct {
	Url    string // the URL the fence judges (UrlMethods)
	HasURL bool   // the command carries one

	TargetID               string
	SessionID              string
	Flatten                *bool
	AutoAttach             bool
	WaitForDebuggerOnStart bool
	Background             bool
	NewWindow              bool
	BrowserContextID       string
	Discover               bool
	EventsEnabled          bool
	DownloadBehavior       string // Browser/Page.setDownloadBehavior's behavior
	DownloadPath           string // and downloadPath (package browser)
	Patterns               []FetchPattern
	HandleAuth             bool
	Files                  []string // files a command makes the page read
}

// UrlMethods are the commands whose URL the fence judges, with the name of
// the field that carries it; the policy's table (denylist.URLParam) names
// the same.
var UrlMethods = map[string]string{
	"Page.navigate":               "url",
	"Target.createTarget":         "url",
	"Network.loadNetworkResource": "url",
	"Fetch.continueRequest":       "url",
}

// DecodedMethods are the methods whose params are decoded into args, and
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
		a.Background, a.NewWindow, a.BrowserContextID = v.Background, v.NewWindow, v.BrowserContextID
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
		a.AutoAttach, a.WaitForDebuggerOnStart, a.Flatten = v.AutoAttach, v.WaitForDebuggerOnStart, v.Flatten
		return err
	},
	"Target.setDiscoverTargets": func(p []byte, a *Args) error {
		var v struct {
			Discover bool `json:"discover"`
		}
		err := DecodeStruct(p, &v)
		a.Discover = v.Discover
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
			Patterns           []FetchPattern `json:"patterns"`
			HandleAuthRequests bool           `json:"handleAuthRequests"`
		}
		err := DecodeStruct(p, &v)
		a.Patterns, a.HandleAuth = v.Patterns, v.HandleAuthRequests
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
