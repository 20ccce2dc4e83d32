package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/browser"
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

// DownloadsConfig says where the relay may write the files of a client's
// downloads (Browser.setDownloadBehavior's downloadPath).
type DownloadsConfig = browser.DownloadsConfig

// featureDownloads is extension.info's feature of an extension that tells
// where Chrome saved a download (extension.downloadFile).
const FeatureDownloads = "downloads"

// KindDownload is the audit records' kind of a download's file copied for
// the client, or not.
const KindDownload = "download"

// downloadWindow is how long after the automation's input, script or
// navigation on a tab a download the tab starts counts as the
// automation's: the file comes once the site answers, which can take a
// while. One the person starts in a tab the automation has left alone
// is theirs.
const downloadWindow = 10 * time.Second

// maxDownloads bounds the downloads an instance follows at once.
const maxDownloads = 64

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
	tab       *Tab
	client    *ClientConn
	url       string
	suggested string // the site's name for the file
	began     time.Time
	to        browser.DownloadTo
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

// decodeDownloadBehavior reads Browser.setDownloadBehavior's and
// Page.setDownloadBehavior's params.
func decodeDownloadBehavior(p []byte, a *Args) error {
	var v struct {
		Behavior      string `json:"behavior"`
		DownloadPath  string `json:"downloadPath"`
		EventsEnabled bool   `json:"eventsEnabled"`
	}
	err := decodeStruct(p, &v)
	a.downloadBehavior, a.downloadPath, a.eventsEnabled = v.Behavior, v.DownloadPath, v.EventsEnabled
	return err
}

// checkDownloadTo decides a setDownloadBehavior's behavior and folder.
func (s *Relay) checkDownloadTo(behavior, path string) (browser.DownloadTo, int64, error) {
	switch behavior {
	case "default", "deny":
		return browser.DownloadTo{}, 0, nil
	case "allow", "allowAndName":
	default:
		return browser.DownloadTo{}, CodeInvalidParams, fmt.Errorf("unknown download behavior %q", behavior)
	}
	f, err := browser.CheckFolder(s.Cfg.downloadDirs, path)
	if err != nil {
		return browser.DownloadTo{}, codeServerError, err
	}
	return browser.DownloadTo{Behavior: behavior, Folder: f}, 0, nil
}

// setDownloadBehavior is answered, never forwarded (a tab's debugger has
// no Browser domain): where downloads go is checked and kept, and whether
// the client wants download events, for which the relay turns the tab's
// Page.download* into Browser.download*.
func (c *ClientConn) setDownloadBehavior(k call) {
	to, code, err := c.Inst.Srv.checkDownloadTo(k.a.downloadBehavior, k.a.downloadPath)
	if err != nil {
		c.fail(k, code, "cdprelay: Browser.setDownloadBehavior: "+err.Error())
		return
	}
	c.Inst.Lock()
	c.downloadEvents = k.a.eventsEnabled
	c.downloadTo = to
	c.Inst.Unlock()
	c.reply(k, struct{}{})
}

// pageDownloadBehavior is Page.setDownloadBehavior: the same, for the
// downloads of the session's tab.
func (c *ClientConn) pageDownloadBehavior(k call) {
	to, code, err := c.Inst.Srv.checkDownloadTo(k.a.downloadBehavior, k.a.downloadPath)
	if err != nil {
		c.fail(k, code, "cdprelay: Page.setDownloadBehavior: "+err.Error())
		return
	}
	st := c.Inst.Lock()
	if k.sess != nil && k.sess.Tab != nil && st.live(k.sess) {
		if c.tabDownloadTo == nil {
			c.tabDownloadTo = make(map[int64]browser.DownloadTo)
		}
		c.tabDownloadTo[k.sess.Tab.Id] = to
	}
	c.Inst.Unlock()
	c.reply(k, struct{}{})
}

// noteDownloadBehavior records whether the client asked for download
// events with a Browser.setDownloadBehavior that a rule acknowledged
// without applying it.
func (c *ClientConn) noteDownloadBehavior(on bool) {
	c.Inst.Lock()
	c.downloadEvents = on
	c.Inst.Unlock()
}

// noteNavigation records that the client navigated t now: a download the
// tab starts soon after is the automation's.
func (st *State) noteNavigation(t *Tab) {
	if t == nil {
		return
	}
	if st.dl.navigated == nil {
		st.dl.navigated = make(map[int64]time.Time)
	}
	st.dl.navigated[t.Id] = time.Now()
}

// downloadEvent follows a tab's Page.downloadWillBegin and
// Page.downloadProgress, and sends the client the Browser.* events it asked
// for. It reports whether the event is withheld: a blind site's, or a
// completion whose file is being copied (landDownload sends it on).
func (st *State) downloadEvent(t *Tab, method, params []byte) bool {
	c := st.Client
	if c == nil {
		return false
	}
	guid := string(wire.StringField(params, "guid"))
	switch string(method) {
	case "Page.downloadWillBegin":
		d := st.beginDownload(c, t, guid, params)
		if d != nil && d.hidden {
			return true
		}
		if c.downloadEvents {
			c.eventRaw("Browser.downloadWillBegin", nil, params)
		}
	case "Page.downloadProgress":
		d := st.dl.active[guid]
		if d != nil && d.hidden {
			if state := string(wire.StringField(params, "state")); state != "inProgress" {
				delete(st.dl.active, guid)
			}
			return true
		}
		if d != nil && string(wire.StringField(params, "state")) == "completed" && d.to.Behavior != "" && d.client == c {
			size, _ := wire.Int(wire.Field(params, "receivedBytes"))
			x, in := st.Ext, st.in
			completed := append([]byte(nil), params...) // the read buffer is reused
			in.Tasks.Spawn("download", func() { in.landDownload(x, d, size, completed) })
			return true
		}
		if d != nil && string(wire.StringField(params, "state")) != "inProgress" {
			delete(st.dl.active, guid)
		}
		if c.downloadEvents {
			c.eventRaw("Browser.downloadProgress", nil, params)
		}
	}
	return false
}

// beginDownload notes a download t began; nil when it is not followed.
func (st *State) beginDownload(c *ClientConn, t *Tab, guid string, params []byte) *download {
	url := string(wire.StringField(params, "url"))
	if st.urlAccess(url).Level == AccessBlind {
		// The site is blind to automation: so is what it sends.
		d := &download{guid: guid, tab: t, hidden: true}
		// Withheld all the same; past 2*maxDownloads at once its progress
		// events (a guid and a byte count) would go on.
		st.trackDownload(d)
		st.observe(Event{Actor: ActorRelay, Kind: KindDownload, Target: t.TargetID, Outcome: OutcomeDenied,
			Detail: "a download from a site of the blind tier is withheld from the client"})
		return d
	}
	to, ok := c.tabDownloadTo[t.Id]
	if !ok {
		to = c.downloadTo
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
	case to.Behavior == "allowAndName" && !browser.ValidGUID(guid):
		d.refused = "Chrome's name for the download is not one the relay writes"
	case len(st.dl.active) >= maxDownloads:
		d.refused = fmt.Sprintf("more than %d downloads are under way", maxDownloads)
	}
	if !st.trackDownload(d) {
		return nil
	}
	last := t.lastCommand.Load()
	d.byAutomation = (last != 0 && now.Sub(time.Unix(0, last)) < downloadWindow) ||
		(!st.dl.navigated[t.Id].IsZero() && now.Sub(st.dl.navigated[t.Id]) < downloadWindow)
	if x := st.Ext; !d.byAutomation && x != nil {
		// A script of the automation's that is still running (and
		// started the download at the end of a long wait) counts too:
		// looked at beside the lock.
		in := st.in
		in.Tasks.Spawn("download by whom", func() {
			busy := x.busyOn(t.Id, now)
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
func (st *State) trackDownload(d *download) bool {
	if st.dl.active == nil {
		st.dl.active = make(map[string]*download)
	}
	if len(st.dl.active) >= 2*maxDownloads {
		return false
	}
	st.dl.active[d.guid] = d
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
func (in *Instance) landDownload(x *ExtConn, d *download, size int64, params []byte) {
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
		path, err = in.copyDownload(x, d, size)
	}
	st := in.Lock()
	defer in.Unlock()
	if st.dl.active[d.guid] == d {
		delete(st.dl.active, d.guid)
	}
	c := st.Client
	if c == nil || c != d.client {
		return
	}
	t := d.tab
	if err != nil {
		params = browser.CanceledDownload(d.guid, size)
		st.warnSessions(t, fmt.Sprintf("the download %q was not copied to %s: %v", d.suggested, d.to.Folder.Asked(), err))
		in.Observe(Event{Actor: ActorRelay, Kind: KindDownload, Target: t.TargetID, Outcome: OutcomeDenied,
			Detail: fmt.Sprintf("a download's file not copied to %s: %v", d.to.Folder.Asked(), err)})
	} else {
		in.Observe(Event{Actor: ActorRelay, Kind: KindDownload, Target: t.TargetID, Outcome: OutcomeOK,
			Detail: fmt.Sprintf("a download's file copied to %s (%d bytes)", path, size)})
	}
	if c.downloadEvents {
		c.eventRaw("Browser.downloadProgress", nil, params)
	}
	if st.live(t.Session) {
		c.eventRaw("Page.downloadProgress", t.Session, params)
	}
	for _, e := range st.liveExtra(t) {
		if wantsEvent(e, []byte("Page.downloadProgress")) {
			c.eventRaw("Page.downloadProgress", e, params)
		}
	}
}

// copyDownload asks the extension which file Chrome saved for d and copies
// it into the client's folder. It returns the path written.
func (in *Instance) copyDownload(x *ExtConn, d *download, size int64) (string, error) {
	max := in.Srv.Cfg.Downloads.MaxBytes
	if max == 0 {
		max = browser.DefaultMaxBytes
	}
	if size > max {
		return "", fmt.Errorf("the file is %d bytes, more than this relay copies (%d, downloads.max_bytes)", size, max)
	}
	if x == nil {
		return "", errExtGone
	}
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	defer cancel()
	res, err := x.call(ctx, "extension.downloadFile", map[string]any{
		"url": d.url, "bytes": size, "ageMs": time.Since(d.began).Milliseconds(),
	})
	if err != nil {
		return "", fmt.Errorf("the browser's extension could not say where Chrome saved it: %w", err)
	}
	var src browser.SavedFile
	if err := json.Unmarshal(res, &src); err != nil {
		return "", errors.New("the browser's extension gave no file")
	}
	if d.to.Folder.HoldsPersonFolder(src.Path) {
		return "", fmt.Errorf("downloadPath %q is the browser's own download folder, or inside it: the relay writes nothing there", d.to.Folder.Asked())
	}
	f, err := browser.OpenSaved(src, size, d.began, max)
	if err != nil {
		return "", err
	}
	defer f.Close()
	name := d.guid
	if d.to.Behavior == "allow" {
		name = browser.SafeFileName(d.suggested)
	}
	return browser.WriteDownload(d.to.Folder, name, d.to.Behavior == "allow", f, size)
}
