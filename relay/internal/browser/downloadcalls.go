package browser

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Downloads land where the client asks.
//
// A client says where its downloads go with Browser.setDownloadBehavior
// (Playwright: allowAndName into a folder of its own under the temp dir,
// the file named by the download's guid; Puppeteer: allow into the folder
// its script names, the file named as the site suggests), or
// Page.setDownloadBehavior for one tab. chrome.debugger cannot pass that
// on: the person's Chrome saves every download into its own folder. So
// the relay copies the file there itself, when the browser shares its
// machine:
//
//  1. setDownloadBehavior: the folder must be one of Config.Downloads.Dirs
//     or below one, after its symlinks are resolved; anything else is
//     refused with the reason (internal/browser: CheckFolder).
//  2. Page.downloadWillBegin on a tab: the download is noted, with whether
//     the automation started it (its input or script on the tab, or its
//     navigation, in the last downloadWindow, or a script of its still
//     running there) and with the folder the client asked for then. A
//     download from a site of the blind tier is withheld whole, as the
//     site is.
//  3. Page.downloadProgress completed: held back from the client, and the
//     extension asked which file Chrome saved (extension.downloadFile:
//     our extension reads chrome.downloads, with the person's consent).
//     The relay checks that the file on its own disk is the download's
//     (internal/browser: OpenSaved), copies it into the client's folder
//     under the name Chrome's events give, and only then sends the
//     completion on (Page.downloadProgress, and Browser.downloadProgress
//     to a client that asked for download events). When it cannot (the
//     person's download, the browser on another machine, the stock
//     extension, a file too large, a folder it may not write), the client
//     gets the download canceled, and the reason in its console and the
//     audit log.
//
// The file is copied, never moved: the person's download folder keeps it,
// and nothing of that folder but the one file's content reaches the
// client (not its path, not its other files).

// FeatureDownloads is extension.info's feature of an extension that tells
// where Chrome saved a download (extension.downloadFile).
const FeatureDownloads = "downloads"

// downloadWindow is how long after the automation's input, script or
// navigation on a tab a download the tab starts counts as the
// automation's: the file comes once the site answers, which can take a
// while. One the person starts in a tab the automation has left alone
// is theirs.
const downloadWindow = 10 * time.Second

// maxDownloads bounds the downloads an instance follows at once.
const maxDownloads = 64

// DownloadEmulations are the download methods the relay answers.
func DownloadEmulations() map[string]core.Emulation {
	return map[string]core.Emulation{
		"Browser.setDownloadBehavior": {Fn: func(c *core.ClientConn, k core.Call) { setDownloadBehavior(c, k) }},
		"Page.setDownloadBehavior":    {Fn: func(c *core.ClientConn, k core.Call) { pageDownloadBehavior(c, k) }, TabLevel: true},
	}
}

// DownloadOutcomes watch the outcome of two methods: a
// Browser.setDownloadBehavior that the policy acknowledged without
// applying still says whether the client wants download events; a
// navigation the client asked for makes a download it starts the
// client's.
func DownloadOutcomes() map[string]core.OutcomeHook {
	return map[string]core.OutcomeHook{
		"Browser.setDownloadBehavior": func(c *core.ClientConn, k *core.Cmd) {
			if k.Out.Kind == core.OutDropped {
				noteDownloadBehavior(c, k.Args.EventsEnabled)
			}
		},
		"Page.navigate": func(c *core.ClientConn, k *core.Cmd) {
			if k.Out.Kind == core.OutForwarded && k.Route.Tab != nil {
				st := c.Inst.Lock()
				noteNavigation(st, k.Route.Tab)
				c.Inst.Unlock()
			}
		},
	}
}

// What downloads keep: of a client (clientSlot) and in an instance's state
// (stateSlot), both guarded by the instance's mutex.
var (
	clientSlot = core.NewClientSlot[downloadsClient]()
	stateSlot  = core.NewStateSlot[downloads]()
)

// downloadsClient is what downloads keep of a client.
type downloadsClient struct {
	downloadEvents bool // Browser.setDownloadBehavior{eventsEnabled}
	// downloadTo is where the client wants its downloads, and
	// tabDownloadTo where for one tab (Page.setDownloadBehavior).
	downloadTo    DownloadTo
	tabDownloadTo map[int64]DownloadTo
}

// downloads is what an instance knows of downloads under way. Guarded by
// the instance's lock.
type downloads struct {
	active map[string]*download // by guid
	// navigated is when the client last navigated each tab.
	navigated map[int64]time.Time
}

// download is one download a tab started while a client was connected.
type download struct {
	guid      string
	tab       *core.Tab
	client    *core.ClientConn
	url       string
	suggested string // the site's name for the file
	began     time.Time
	to        DownloadTo
	// byAutomation: the automation started it (see downloadWindow); final
	// once judged is closed.
	byAutomation bool
	judged       chan struct{}
	// refused is why it is not copied, decided when it began ("" if it
	// may be).
	refused string
	// hidden: a download from a blind site; the client hears nothing of it.
	hidden bool
	// ext: the extension says where Chrome saves downloads.
	ext bool
}

// checkDownloadTo decides a setDownloadBehavior's behavior and folder.
func checkDownloadTo(s *core.Relay, behavior, path string) (DownloadTo, int64, error) {
	switch behavior {
	case "default", "deny":
		return DownloadTo{}, 0, nil
	case "allow", "allowAndName":
	default:
		return DownloadTo{}, core.CodeInvalidParams, fmt.Errorf("unknown download behavior %q", behavior)
	}
	f, err := CheckFolder(s.Cfg.DownloadDirs, path)
	if err != nil {
		return DownloadTo{}, core.CodeServerError, err
	}
	return DownloadTo{Behavior: behavior, Folder: f}, 0, nil
}

// setDownloadBehavior is answered, never forwarded (a tab's debugger has
// no Browser domain): where downloads go is checked and kept, and whether
// the client wants download events, for which the relay turns the tab's
// Page.download* into Browser.download*.
func setDownloadBehavior(c *core.ClientConn, k core.Call) {
	to, code, err := checkDownloadTo(c.Inst.Srv, k.Args.DownloadBehavior, k.Args.DownloadPath)
	if err != nil {
		c.Fail(k, code, "cdprelay: Browser.setDownloadBehavior: "+err.Error())
		return
	}
	c.Inst.Lock()
	clientSlot.Of(c).downloadEvents = k.Args.EventsEnabled
	clientSlot.Of(c).downloadTo = to
	c.Inst.Unlock()
	c.Reply(k, struct{}{})
}

// pageDownloadBehavior is Page.setDownloadBehavior: the same, for the
// downloads of the session's tab.
func pageDownloadBehavior(c *core.ClientConn, k core.Call) {
	to, code, err := checkDownloadTo(c.Inst.Srv, k.Args.DownloadBehavior, k.Args.DownloadPath)
	if err != nil {
		c.Fail(k, code, "cdprelay: Page.setDownloadBehavior: "+err.Error())
		return
	}
	st := c.Inst.Lock()
	if k.Sess != nil && k.Sess.Tab != nil && st.Live(k.Sess) {
		if clientSlot.Of(c).tabDownloadTo == nil {
			clientSlot.Of(c).tabDownloadTo = make(map[int64]DownloadTo)
		}
		clientSlot.Of(c).tabDownloadTo[k.Sess.Tab.Id] = to
	}
	c.Inst.Unlock()
	c.Reply(k, struct{}{})
}

// noteDownloadBehavior records whether the client asked for download
// events with a Browser.setDownloadBehavior that a rule acknowledged
// without applying it.
func noteDownloadBehavior(c *core.ClientConn, on bool) {
	c.Inst.Lock()
	clientSlot.Of(c).downloadEvents = on
	c.Inst.Unlock()
}

// noteNavigation records that the client navigated t now: a download the
// tab starts soon after is the automation's.
func noteNavigation(st *core.State, t *core.Tab) {
	if t == nil {
		return
	}
	if stateSlot.Of(st).navigated == nil {
		stateSlot.Of(st).navigated = make(map[int64]time.Time)
	}
	stateSlot.Of(st).navigated[t.Id] = time.Now()
}

// downloadEvent follows a tab's Page.downloadWillBegin and
// Page.downloadProgress, and sends the client the Browser.* events it asked
// for. It reports whether the event is withheld: a blind site's, or a
// completion whose file is being copied (landDownload sends it on).
func downloadEvent(st *core.State, t *core.Tab, method, params []byte) bool {
	c := st.Client
	if c == nil {
		return false
	}
	guid := string(wire.StringField(params, "guid"))
	switch string(method) {
	case "Page.downloadWillBegin":
		d := beginDownload(st, c, t, guid, params)
		if d != nil && d.hidden {
			return true
		}
		if clientSlot.Of(c).downloadEvents {
			c.EventRaw("Browser.downloadWillBegin", nil, params)
		}
	case "Page.downloadProgress":
		d := stateSlot.Of(st).active[guid]
		if d != nil && d.hidden {
			if state := string(wire.StringField(params, "state")); state != "inProgress" {
				delete(stateSlot.Of(st).active, guid)
			}
			return true
		}
		if d != nil && string(wire.StringField(params, "state")) == "completed" && d.to.Behavior != "" && d.client == c {
			size, _ := wire.Int(wire.Field(params, "receivedBytes"))
			x, in := st.Ext, st.Inst
			completed := append([]byte(nil), params...) // the read buffer is reused
			in.Tasks.Spawn("download", func() { landDownload(in, x, d, size, completed) })
			return true
		}
		if d != nil && string(wire.StringField(params, "state")) != "inProgress" {
			delete(stateSlot.Of(st).active, guid)
		}
		if clientSlot.Of(c).downloadEvents {
			c.EventRaw("Browser.downloadProgress", nil, params)
		}
	}
	return false
}

// beginDownload notes a download t began; nil when it is not followed.
func beginDownload(st *core.State, c *core.ClientConn, t *core.Tab, guid string, params []byte) *download {
	url := string(wire.StringField(params, "url"))
	if st.UrlAccess(url).Level == api.Blind {
		// The site is blind to automation: so is what it sends.
		d := &download{guid: guid, tab: t, hidden: true}
		// Withheld all the same; past 2*maxDownloads at once its progress
		// events (a guid and a byte count) would go on.
		trackDownload(st, d)
		st.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDownload, Target: t.TargetID, Outcome: api.OutcomeDenied,
			Detail: "a download from a site of the blind tier is withheld from the client"})
		return d
	}
	to, ok := clientSlot.Of(c).tabDownloadTo[t.Id]
	if !ok {
		to = clientSlot.Of(c).downloadTo
	}
	if to.Behavior == "" {
		return nil
	}
	now := time.Now()
	d := &download{
		guid: guid, tab: t, client: c, url: url, began: now, to: to, judged: make(chan struct{}),
		suggested: string(wire.StringField(params, "suggestedFilename")),
		ext:       st.Features[FeatureDownloads],
	}
	switch {
	case to.Behavior == "allowAndName" && !ValidGUID(guid):
		d.refused = "Chrome's name for the download is not one the relay writes"
	case len(stateSlot.Of(st).active) >= maxDownloads:
		d.refused = fmt.Sprintf("more than %d downloads are under way", maxDownloads)
	}
	if !trackDownload(st, d) {
		return nil
	}
	last := t.LastCommand.Load()
	d.byAutomation = (last != 0 && now.Sub(time.Unix(0, last)) < downloadWindow) ||
		(!stateSlot.Of(st).navigated[t.Id].IsZero() && now.Sub(stateSlot.Of(st).navigated[t.Id]) < downloadWindow)
	if x := st.Ext; !d.byAutomation && x != nil {
		// A script of the automation's that is still running (and
		// started the download at the end of a long wait) counts too:
		// looked at beside the lock.
		in := st.Inst
		in.Tasks.Spawn("download by whom", func() {
			busy := core.BusyOn(x, t.Id, now)
			in.Lock()
			d.byAutomation = busy
			in.Unlock()
			close(d.judged)
		})
	} else {
		close(d.judged)
	}
	return d
}

// trackDownload follows d until it ends, and reports whether it does:
// past maxDownloads a download is followed only to say it is refused, and
// past twice that not at all.
func trackDownload(st *core.State, d *download) bool {
	if stateSlot.Of(st).active == nil {
		stateSlot.Of(st).active = make(map[string]*download)
	}
	if len(stateSlot.Of(st).active) >= 2*maxDownloads {
		return false
	}
	stateSlot.Of(st).active[d.guid] = d
	return true
}

// Why a download's file is not copied, besides the checks of the file
// and the folder.
const (
	whyPersonDownload = "the person started this download (not the automation's input, script or navigation on the tab in the last 10 s), so its file stays theirs"
	whyStockDownloads = "the Playwright extension does not say where Chrome saved a download (the cdprelay extension does), so the file is only in the browser's download folder"
)

// landDownload copies the file of d, whose completion (params, size bytes)
// Chrome reported, where the client asked, and then sends the completion
// on; or, when it cannot, the download canceled and why.
func landDownload(in *core.Instance, x core.Upstream, d *download, size int64, params []byte) {
	params = append([]byte(nil), params...)
	<-d.judged
	in.Lock()
	why, auto := d.refused, d.byAutomation
	in.Unlock()
	var path string
	var err error
	switch {
	case why != "":
		err = errors.New(why)
	case !auto:
		err = errors.New(whyPersonDownload)
	case !d.ext:
		err = errors.New(whyStockDownloads)
	default:
		path, err = copyDownload(in, x, d, size)
	}
	st := in.Lock()
	defer in.Unlock()
	if stateSlot.Of(st).active[d.guid] == d {
		delete(stateSlot.Of(st).active, d.guid)
	}
	c := st.Client
	if c == nil || c != d.client {
		return
	}
	t := d.tab
	if err != nil {
		params = CanceledDownload(d.guid, size)
		st.WarnSessions(t, fmt.Sprintf("the download %q was not copied to %s: %v", d.suggested, d.to.Folder.Asked(), err))
		in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDownload, Target: t.TargetID, Outcome: api.OutcomeDenied,
			Detail: fmt.Sprintf("a download's file not copied to %s: %v", d.to.Folder.Asked(), err)})
	} else {
		in.Observe(core.Event{Actor: api.ActorRelay, Kind: api.KindDownload, Target: t.TargetID, Outcome: api.OutcomeOK,
			Detail: fmt.Sprintf("a download's file copied to %s (%d bytes)", path, size)})
	}
	if clientSlot.Of(c).downloadEvents {
		c.EventRaw("Browser.downloadProgress", nil, params)
	}
	if st.Live(t.Session) {
		c.EventRaw("Page.downloadProgress", t.Session, params)
	}
	for _, e := range st.LiveExtra(t) {
		if core.WantsEvent(e, []byte("Page.downloadProgress")) {
			c.EventRaw("Page.downloadProgress", e, params)
		}
	}
}

// copyDownload asks the extension which file Chrome saved for d and copies
// it into the client's folder. It returns the path written.
func copyDownload(in *core.Instance, x core.Upstream, d *download, size int64) (string, error) {
	max := in.Srv.Cfg.Downloads.MaxBytes
	if max == 0 {
		max = config.DefaultMaxBytes
	}
	if size > max {
		return "", fmt.Errorf("the file is %d bytes, more than this relay copies (%d, downloads.max_bytes)", size, max)
	}
	if x == nil {
		return "", core.ErrExtGone
	}
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	defer cancel()
	res, err := x.Call(ctx, "extension.downloadFile", map[string]any{
		"url": d.url, "bytes": size, "ageMs": time.Since(d.began).Milliseconds(),
	})
	if err != nil {
		return "", fmt.Errorf("the browser's extension could not say where Chrome saved it: %w", err)
	}
	var src SavedFile
	if err := json.Unmarshal(res, &src); err != nil {
		return "", errors.New("the browser's extension gave no file")
	}
	if d.to.Folder.HoldsPersonFolder(src.Path) {
		return "", fmt.Errorf("downloadPath %q is the browser's own download folder, or inside it: the relay writes nothing there", d.to.Folder.Asked())
	}
	f, err := OpenSaved(src, size, d.began, max)
	if err != nil {
		return "", err
	}
	defer f.Close()
	name := d.guid
	if d.to.Behavior == "allow" {
		name = SafeFileName(d.suggested)
	}
	return WriteDownload(d.to.Folder, name, d.to.Behavior == "allow", f, size)
}

// Downloads (browser.Downloads), a row of the events table: the tab's
// download events, as the browser's (downloadEvent).
func Downloads(in *core.Instance, e *core.EventMsg) bool {
	// A blind site's, or held until its file is in place.
	return e.Sid != nil || !downloadEvent(e.State, e.Tab, e.Method, e.Params)
}
