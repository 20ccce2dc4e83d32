package relay

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/api"
	"github.com/cdprelay/cdprelay/relay/internal/browser"
	"github.com/cdprelay/cdprelay/relay/internal/config"

	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// Downloads, against the fake extension: the file the person's Chrome
// saved is copied where the client asked, and only then does the client
// hear that the download completed; what must not be copied is not, and
// the client is told why.

const (
	dlGUID = "7fa6cd34-81f4-4cb0-957f-63057ce505f1"
	dlBody = "name,value\nrelay,42\n"
)

// dlWorld is a relay whose downloads may go into allowed, a person's
// download folder holding what their Chrome saved, and a fake extension
// that says where.
type dlWorld struct {
	h       *harness
	e       *fakeext.Ext
	c       *cdptest.Client
	page    string // the client's session on tab 1
	allowed string // the folder the operator allows
	person  string // the person's download folder
	rec     *auditRecorder

	mu    sync.Mutex
	asked []string // the URLs the extension was asked about
}

type dlOptions struct {
	stock    bool
	maxBytes int64
	// file is what the extension says Chrome saved (default: the
	// person's report.csv); gate runs before it answers.
	file func(w *dlWorld) (string, int64, error)
	gate chan struct{}
	// personAllowed: the operator's folder holds the person's download
	// folder.
	personAllowed bool
}

func newDLWorld(t *testing.T, o dlOptions) *dlWorld {
	t.Helper()
	w := &dlWorld{allowed: t.TempDir(), person: t.TempDir(), rec: &auditRecorder{}}
	dirs := []string{w.allowed}
	if o.personAllowed {
		dirs = []string{filepath.Dir(w.person)}
	}
	w.h = newHarness(t, config.Config{Observer: w.rec, Downloads: config.DownloadsConfig{Dirs: dirs, MaxBytes: o.maxBytes}})
	if err := os.WriteFile(filepath.Join(w.person, "report.csv"), []byte(dlBody), 0o644); err != nil {
		t.Fatal(err)
	}
	opts := fakeext.Options{Tabs: twoTabs, Features: append([]string{browser.FeatureDownloads}, ourFeatures...), Stock: o.stock}
	if o.stock {
		opts.Features = nil
	}
	opts.DownloadFile = func(url string, _ int64) (string, int64, error) {
		w.mu.Lock()
		w.asked = append(w.asked, url)
		w.mu.Unlock()
		if o.gate != nil {
			<-o.gate
		}
		if o.file != nil {
			return o.file(w)
		}
		return filepath.Join(w.person, "report.csv"), int64(len(dlBody)), nil
	}
	w.e = w.h.ext(opts)
	w.c = w.h.client()
	w.page = w.h.autoAttach(w.c)[0]
	w.h.call(w.c, w.page, "Log.enable", nil)
	return w
}

// act is the automation's script on tab 1: a download soon after is its.
func (w *dlWorld) act() {
	w.h.call(w.c, w.page, "Runtime.evaluate", map[string]any{"expression": "document.querySelector('a').click()"})
}

// download plays a download of tab 1 as Chrome reports it.
func (w *dlWorld) download(guid, url, name string, size int) {
	w.e.Event(1, "", "Page.downloadWillBegin", map[string]any{"frameId": tid(1), "guid": guid, "url": url, "suggestedFilename": name})
	w.e.Event(1, "", "Page.downloadProgress", map[string]any{"guid": guid, "totalBytes": size, "receivedBytes": 0, "state": "inProgress"})
	w.e.Event(1, "", "Page.downloadProgress", map[string]any{"guid": guid, "totalBytes": size, "receivedBytes": size, "state": "completed"})
}

// ended waits for the client's Page.downloadProgress that ends guid and
// returns its state.
func (w *dlWorld) ended(from int, guid string) string {
	w.h.t.Helper()
	m, _, err := w.c.WaitMessage(w.h.ctx, from, func(m cdptest.Message) bool {
		return m.Method == "Page.downloadProgress" && strings.Contains(string(m.Params), guid) && !strings.Contains(string(m.Params), "inProgress")
	})
	if err != nil {
		w.h.t.Fatalf("the download did not end: %v (%s)", err, describe(w.c.Messages()))
	}
	var p struct{ State string }
	json.Unmarshal(m.Params, &p)
	return p.State
}

// warning returns the console warnings the client got since from.
func (w *dlWorld) warnings(from int) string {
	var out []string
	for _, m := range w.c.Messages()[from:] {
		if m.Method == "Log.entryAdded" {
			out = append(out, string(m.Params))
		}
	}
	return strings.Join(out, "\n")
}

// personUntouched checks that the person's folder holds what it held, as
// it was.
func (w *dlWorld) personUntouched(t *testing.T) {
	t.Helper()
	ents, _ := os.ReadDir(w.person)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	if b, err := os.ReadFile(filepath.Join(w.person, "report.csv")); err != nil || string(b) != dlBody || !slices.Equal(names, []string{"report.csv"}) {
		t.Errorf("the person's folder: %v, report.csv %q %v", names, b, err)
	}
}

func listDir(t *testing.T, dir string) []string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && p != dir {
			rel, _ := filepath.Rel(dir, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestDownloadLands: Playwright's way (allowAndName into a folder of its
// own: the file named by the guid), Puppeteer's (allow: the site's name,
// numbered when taken) and a tab's own Page.setDownloadBehavior: the file
// is in place, whole, when the client hears the download completed, at
// the browser level and on the page; the person's copy stays.
func TestDownloadLands(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		set      func(w *dlWorld, dir string)
		names    []string // the files in dir after two downloads
		sameName bool     // the two downloads have the same guid-less name
	}{
		{"playwright allowAndName", func(w *dlWorld, dir string) {
			w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
		}, []string{"0b2d-2", dlGUID}, false},
		{"puppeteer allow", func(w *dlWorld, dir string) {
			w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir})
		}, []string{"report (1).csv", "report.csv"}, true},
		{"page allow", func(w *dlWorld, dir string) {
			w.h.call(w.c, w.page, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir})
		}, []string{"report (1).csv", "report.csv"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newDLWorld(t, dlOptions{})
			dir := filepath.Join(w.allowed, "playwright-artifacts-x1")
			tt.set(w, dir)
			for i, guid := range []string{dlGUID, "0b2d-2"} {
				from := len(w.c.Messages())
				w.act()
				w.download(guid, "https://a.example/files/report.csv", "report.csv", len(dlBody))
				if got := w.ended(from, guid); got != "completed" {
					t.Fatalf("download %d: %s; warnings: %s", i, got, w.warnings(from))
				}
				// In place by the time the client hears of it.
				got := listDir(t, dir)
				if len(got) != i+1 {
					t.Fatalf("after download %d the folder holds %v", i, got)
				}
				if tt.name == "playwright allowAndName" {
					if b, err := os.ReadFile(filepath.Join(dir, guid)); err != nil || string(b) != dlBody {
						t.Fatalf("%s: %q %v", guid, b, err)
					}
				}
			}
			if got := listDir(t, dir); !slices.Equal(got, tt.names) {
				t.Errorf("the client's folder holds %v, want %v", got, tt.names)
			}
			for _, n := range tt.names {
				if b, _ := os.ReadFile(filepath.Join(dir, n)); string(b) != dlBody {
					t.Errorf("%s holds %q", n, b)
				}
			}
			w.personUntouched(t)
			if !w.rec.find(api.KindDownload, "copied to "+dir) {
				t.Errorf("no audit record of the copy: %+v", w.rec.ev)
			}
			if tt.name == "playwright allowAndName" {
				if ev := w.c.Events("Browser.downloadProgress"); len(ev) == 0 || !strings.Contains(string(ev[len(ev)-1].Params), `"completed"`) {
					t.Errorf("browser-level events: %v", ev)
				}
			}
		})
	}
}

// TestDownloadCompletionWaits: the completion reaches the client only once
// the file is in place; the progress before it goes on at once.
func TestDownloadCompletionWaits(t *testing.T) {
	t.Parallel()
	gate := make(chan struct{})
	w := newDLWorld(t, dlOptions{gate: gate})
	dir := filepath.Join(w.allowed, "out")
	w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
	from := len(w.c.Messages())
	w.act()
	w.download(dlGUID, "https://a.example/files/report.csv", "report.csv", len(dlBody))
	w.h.event(w.c, from, "Browser.downloadWillBegin")
	w.h.waitFor("the extension asked", func() bool { w.mu.Lock(); defer w.mu.Unlock(); return len(w.asked) == 1 })
	for _, m := range w.c.Messages()[from:] {
		if strings.Contains(string(m.Params), `"completed"`) {
			t.Fatalf("the completion came before the file: %s", m.Raw)
		}
	}
	close(gate)
	if got := w.ended(from, dlGUID); got != "completed" {
		t.Fatalf("state %s: %s", got, w.warnings(from))
	}
	if _, err := os.Stat(filepath.Join(dir, dlGUID)); err != nil {
		t.Fatal(err)
	}
}

// TestDownloadNotCopied: what the relay does not copy, and what the client
// hears instead: the download canceled, the reason in its console and in
// the audit log. The person's folder stays as it was, and nothing is
// written into the client's.
func TestDownloadNotCopied(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		o     dlOptions
		human bool   // the person starts it: no command of the automation's before
		size  int    // the size Chrome reports (default len(dlBody))
		why   string // in the warning and the audit record
	}{
		{"the person's download", dlOptions{}, true, 0, "the person started this download"},
		{"stock extension", dlOptions{stock: true}, false, 0, "does not say where Chrome saved"},
		{"browser on another machine", dlOptions{file: func(w *dlWorld) (string, int64, error) {
			return filepath.Join(w.person, "elsewhere", "report.csv"), int64(len(dlBody)), nil
		}}, false, 0, "runs on another machine"},
		{"extension has no consent", dlOptions{file: func(*dlWorld) (string, int64, error) {
			return "", 0, errors.New("the person has not allowed cdprelay to read Chrome's downloads")
		}}, false, 0, "has not allowed"},
		{"another file of the machine", dlOptions{file: func(w *dlWorld) (string, int64, error) {
			p := filepath.Join(w.person, "old.txt")
			os.WriteFile(p, []byte(dlBody), 0o600)
			old := time.Now().Add(-time.Hour)
			os.Chtimes(p, old, old)
			return p, int64(len(dlBody)), nil
		}}, false, 0, "written before the download began"},
		{"a symlink to another file", dlOptions{file: func(w *dlWorld) (string, int64, error) {
			p := filepath.Join(w.person, "link.csv")
			os.Symlink(filepath.Join(w.person, "report.csv"), p)
			return p, int64(len(dlBody)), nil
		}}, false, 0, "not a regular file"},
		{"a file of another size", dlOptions{}, false, len(dlBody) + 1, "not this download's"},
		{"a path that is not absolute", dlOptions{file: func(w *dlWorld) (string, int64, error) {
			return filepath.Join("person-folder", "report.csv"), int64(len(dlBody)), nil
		}}, false, 0, "not absolute"},
		{"too large", dlOptions{maxBytes: 4}, false, 0, "more than this relay copies"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			w := newDLWorld(t, tt.o)
			dir := filepath.Join(w.allowed, "out")
			w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir, "eventsEnabled": true})
			from := len(w.c.Messages())
			if !tt.human {
				w.act()
			}
			size := tt.size
			if size == 0 {
				size = len(dlBody)
			}
			w.download(dlGUID, "https://a.example/files/report.csv", "report.csv", size)
			if got := w.ended(from, dlGUID); got != "canceled" {
				t.Fatalf("state %s", got)
			}
			if warn := w.warnings(from); !strings.Contains(warn, tt.why) || strings.Contains(warn, w.person) || strings.Contains(warn, "person-folder") {
				t.Errorf("warning: %s", warn)
			}
			if !w.rec.find(api.KindDownload, tt.why) {
				t.Errorf("audit: %+v", w.rec.ev)
			}
			if ev := w.c.Events("Browser.downloadProgress"); len(ev) == 0 || !strings.Contains(string(ev[len(ev)-1].Params), `"canceled"`) {
				t.Errorf("browser-level events: %v", ev)
			}
			if got := listDir(t, w.allowed); len(got) > 1 {
				t.Errorf("written into the allowed folder: %v", got)
			}
			if b, err := os.ReadFile(filepath.Join(w.person, "report.csv")); err != nil || string(b) != dlBody {
				t.Errorf("the person's file: %q %v", b, err)
			}
			if tt.human {
				w.mu.Lock()
				defer w.mu.Unlock()
				if len(w.asked) != 0 {
					t.Errorf("the extension was asked about the person's download: %v", w.asked)
				}
			}
		})
	}
}

// TestDownloadNotIntoPersonFolder: a client's download folder that is the
// browser's own download folder, or below it, gets nothing, even where the
// operator's folders hold it: the person's folder keeps only what their
// Chrome saved.
func TestDownloadNotIntoPersonFolder(t *testing.T) {
	t.Parallel()
	for _, below := range []string{"", "sub"} {
		t.Run("below="+below, func(t *testing.T) {
			t.Parallel()
			w := newDLWorld(t, dlOptions{personAllowed: true})
			dir := filepath.Join(w.person, below)
			w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir, "eventsEnabled": true})
			from := len(w.c.Messages())
			w.act()
			w.download(dlGUID, "https://a.example/files/report.csv", "report.csv", len(dlBody))
			if got := w.ended(from, dlGUID); got != "canceled" {
				t.Fatalf("state %s", got)
			}
			if warn := w.warnings(from); !strings.Contains(warn, "the browser's own download folder") {
				t.Errorf("warning: %s", warn)
			}
			w.personUntouched(t)
		})
	}
}

// TestDownloadFolderRefused: a client's download folder outside the ones
// the operator allows is refused with the reason, whichever way it tries
// to get there; nothing is forwarded.
func TestDownloadFolderRefused(t *testing.T) {
	t.Parallel()
	w := newDLWorld(t, dlOptions{})
	outside := t.TempDir()
	link := filepath.Join(w.allowed, "link")
	if err := os.Symlink(outside, link); err != nil {
		t.Fatal(err)
	}
	home, _ := os.UserHomeDir()
	tests := []struct {
		behavior, path, why string
		code                int64
	}{
		{"allow", "/etc", "outside the folders", -32000},
		{"allowAndName", filepath.Join(home, ".ssh"), "outside the folders", -32000},
		{"allow", "~/.ssh", "not an absolute path", -32000},
		{"allow", "downloads", "not an absolute path", -32000},
		{"allow", w.allowed + "/../x", "outside the folders", -32000},
		{"allow", link, "outside the folders", -32000},
		{"allow", link + "/sub", "outside the folders", -32000},
		{"allow", "", "downloadPath is required", -32000},
		{"allow", w.allowed + "/a\x00b", "not a valid path", -32000},
		{"sideways", w.allowed, "unknown download behavior", -32602},
	}
	before := len(w.e.Commands())
	for _, tt := range tests {
		for _, sess := range []string{"", w.page} {
			method := "Browser.setDownloadBehavior"
			if sess != "" {
				method = "Page.setDownloadBehavior"
			}
			m := w.h.callMsg(w.c, sess, method, map[string]any{"behavior": tt.behavior, "downloadPath": tt.path})
			if m.Error == nil || m.Error.Code != tt.code || !strings.Contains(m.Error.Message, tt.why) || !strings.HasPrefix(m.Error.Message, "cdprelay: "+method) {
				t.Errorf("%s %q: %s", method, tt.path, m.Raw)
			}
		}
	}
	// Page.setDownloadBehavior is a tab's: at the browser level it is
	// refused as Chrome refuses it there, and carried to no tab, even for
	// a folder the operator allows.
	m := w.h.callMsg(w.c, "", "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": w.allowed})
	if m.Error == nil || m.Error.Code != -32601 || m.Error.Message != "'Page.setDownloadBehavior' wasn't found" {
		t.Errorf("Page.setDownloadBehavior at the browser level: %s", m.Raw)
	}
	if got := commandsSince(w.e, before); len(got) != 0 {
		t.Errorf("reached the extension: %v", got)
	}
	// Allowed: the folder itself, a folder below it that does not exist
	// yet, default and deny (no folder needed).
	for _, p := range []map[string]any{
		{"behavior": "allow", "downloadPath": w.allowed},
		{"behavior": "allowAndName", "downloadPath": filepath.Join(w.allowed, "new", "deeper")},
		{"behavior": "default"},
		{"behavior": "deny"},
	} {
		w.h.call(w.c, "", "Browser.setDownloadBehavior", p)
	}
}

// TestDownloadsOff: with no folder allowed, a client's folder is refused,
// naming the setting.
func TestDownloadsOff(t *testing.T) {
	t.Parallel()
	h := newHarness(t, config.Config{Downloads: config.DownloadsConfig{Dirs: []string{}}})
	h.ext(fakeext.Options{Tabs: twoTabs})
	c := h.client()
	m := h.callMsg(c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": os.TempDir(), "eventsEnabled": true})
	if m.Error == nil || !strings.Contains(m.Error.Message, "downloads.dirs") {
		t.Fatalf("reply: %s", m.Raw)
	}
}

// TestDownloadFolderSwapped: the client's folder was inside when it was
// set and is a symlink to elsewhere when the file comes: nothing is
// written outside, and the client is told.
func TestDownloadFolderSwapped(t *testing.T) {
	t.Parallel()
	w := newDLWorld(t, dlOptions{})
	outside := t.TempDir()
	dir := filepath.Join(w.allowed, "artifacts")
	os.Mkdir(dir, 0o700)
	w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": dir})
	os.Remove(dir)
	if err := os.Symlink(outside, dir); err != nil {
		t.Fatal(err)
	}
	from := len(w.c.Messages())
	w.act()
	w.download(dlGUID, "https://a.example/files/report.csv", "report.csv", len(dlBody))
	if got := w.ended(from, dlGUID); got != "canceled" {
		t.Fatalf("state %s", got)
	}
	if got := listDir(t, outside); len(got) != 0 {
		t.Fatalf("written outside the allowed folder: %v", got)
	}
}

// TestDownloadHostileName: a site's name for the file with "..", folder
// separators, a device name or controls lands as one plain file in the
// client's folder.
func TestDownloadHostileName(t *testing.T) {
	t.Parallel()
	w := newDLWorld(t, dlOptions{})
	dir := filepath.Join(w.allowed, "out")
	w.h.call(w.c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir})
	names := []string{"../../../../etc/cron.d/x", `..\..\evil.bat`, "..", "CON.txt", "a\x00b\nc", ".bashrc"}
	for i, n := range names {
		from := len(w.c.Messages())
		guid := fmt.Sprintf("g-%d", i)
		w.act()
		w.download(guid, "https://a.example/f", n, len(dlBody))
		if got := w.ended(from, guid); got != "completed" {
			t.Fatalf("%q: %s %s", n, got, w.warnings(from))
		}
	}
	got := listDir(t, w.allowed)
	if len(got) != len(names)+1 { // the folder and one file each
		t.Fatalf("files: %v", got)
	}
	for _, g := range got {
		if g != "out" && (!strings.HasPrefix(g, "out/") || strings.Count(g, "/") != 1) {
			t.Errorf("a file outside the client's folder: %q", g)
		}
	}
	t.Logf("written: %q", got)
}

// TestDownloadFromBlindSite: a download from a site of the blind tier is
// withheld whole (its address, its name, its progress), and nothing is
// copied.
func TestDownloadFromBlindSite(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	h := newHarness(t, config.Config{Policy: tierPolicy{"secret.example": "blind"}, Downloads: config.DownloadsConfig{Dirs: []string{allowed}}})
	asked := false
	e := h.ext(fakeext.Options{Tabs: twoTabs, Features: []string{browser.FeatureDownloads}, DownloadFile: func(string, int64) (string, int64, error) {
		asked = true
		return "", 0, errors.New("never")
	}})
	c := h.client()
	page := h.autoAttach(c)[0]
	h.call(c, "", "Browser.setDownloadBehavior", map[string]any{"behavior": "allowAndName", "downloadPath": allowed, "eventsEnabled": true})
	from := len(c.Messages())
	h.call(c, page, "Runtime.evaluate", map[string]any{"expression": "1"})
	e.Event(1, "", "Page.downloadWillBegin", map[string]any{"frameId": tid(1), "guid": dlGUID, "url": "https://secret.example/statement.pdf", "suggestedFilename": "statement.pdf"})
	e.Event(1, "", "Page.downloadProgress", map[string]any{"guid": dlGUID, "totalBytes": 9, "receivedBytes": 9, "state": "completed"})
	// Something after it, to know the relay is past them.
	e.Event(1, "", "Page.loadEventFired", map[string]any{"timestamp": 1})
	h.event(c, from, "Page.loadEventFired")
	for _, m := range c.Messages()[from:] {
		if strings.Contains(string(m.Raw), dlGUID) || strings.Contains(string(m.Raw), "secret.example") {
			t.Errorf("the client heard of it: %s", m.Raw)
		}
	}
	if asked || len(listDir(t, allowed)) != 0 {
		t.Errorf("copied: asked %v, files %v", asked, listDir(t, allowed))
	}
}

// TestDownloadFolderOnBlindTab: a blind tab's stand-ins do not take a
// download folder for a setting of the page kept for later, to be sent to
// Chrome unchecked once the tab is on a full site: on a blind tab it is
// refused, as everything that is neither a stand-in nor leaving is, and
// nothing of it reaches the extension, then or after.
func TestDownloadFolderOnBlindTab(t *testing.T) {
	t.Parallel()
	allowed := t.TempDir()
	h := newHarness(t, config.Config{Policy: tiers, Downloads: config.DownloadsConfig{Dirs: []string{allowed}}})
	e := h.ext(fakeext.Options{Tabs: []fakeext.Tab{{ID: 1, URL: "https://blind.example/", Title: "B"}}, Features: append([]string{browser.FeatureDownloads}, ourFeatures...)})
	c := h.client()
	page := h.autoAttach(c)[0]
	before := len(e.Commands())
	for _, dir := range []string{"/etc", allowed} {
		m := h.callMsg(c, page, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": dir})
		if m.Error == nil || !strings.Contains(m.Error.Message, "blind") {
			t.Errorf("the folder %s, on a blind tab: %s", dir, m.Raw)
		}
	}
	e.Navigate(1, "https://a.example/", "A")
	h.waitFor("the tab on a full site", func() bool {
		s := h.srv.Default().Status()
		return len(s.Tabs) == 1 && s.Tabs[0].Access == "full"
	})
	h.call(c, page, "DOM.getDocument", nil) // after what the tab's return sets again
	if forwarded(e, before, "Page.setDownloadBehavior") {
		t.Error("Page.setDownloadBehavior reached the extension")
	}
	// On the full site it is the relay's, with its folder check.
	if m := h.callMsg(c, page, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": "/etc"}); m.Error == nil || !strings.Contains(m.Error.Message, "outside the folders") {
		t.Errorf("a folder outside, on a full site: %s", m.Raw)
	}
	if m := h.callMsg(c, page, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": allowed}); m.Error != nil {
		t.Errorf("an allowed folder, on a full site: %s", m.Raw)
	}
	if forwarded(e, before, "Page.setDownloadBehavior") {
		t.Error("Page.setDownloadBehavior reached the extension")
	}
}
