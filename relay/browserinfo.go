package relay

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"time"
)

// What the stock extension does not say.
//
// Our extension sends extension.info (the browser's user agent and version)
// and puts each tab's targetId in its offers. The stock Playwright extension
// does neither, and a relay that made them up would mislead clients:
// Playwright reads the platform and headlessness from the user agent, and
// every client names pages by their real target ids (chromedp and go-rod
// take a page's main frame id to be its target id). So the relay asks
// Chrome: it attaches to a shared tab, reads Target.getTargetInfo and
// navigator.userAgent, and lets go of the tab again unless someone uses it.
// This happens before the extension is declared ready, so the first client
// already sees real values, and again for tabs shared later.

// learnWait bounds what the relay spends learning before the extension is
// declared ready: a tab that does not answer must not hold clients back.
const learnWait = 10 * time.Second

// learnBeforeReady learns the target ids of the tabs offered during the
// handshake and the browser's identity, when the extension did not say.
func (in *Instance) learnBeforeReady(x *extConn) {
	ctx, cancel := context.WithTimeout(context.Background(), learnWait)
	defer cancel()
	st := in.lock()
	var unnamed []*tab
	for _, t := range st.sortedTabs() {
		if t.targetID == "" {
			unnamed = append(unnamed, t)
		}
	}
	known := st.info.UserAgent != ""
	in.unlock()
	for _, t := range unnamed {
		in.learnTargetCtx(ctx, x, t, true)
	}
	if !known {
		if _, err := in.ensureInfo(ctx, x); err != nil {
			in.log.Info("could not learn the browser's version yet", "err", err)
		}
	}
}

// learnTarget learns the target id of a tab shared after the handshake and
// announces the new target to discovering sessions.
func (in *Instance) learnTarget(x *extConn, t *tab) {
	ctx, cancel := context.WithTimeout(context.Background(), in.srv.cfg.CallTimeout)
	defer cancel()
	in.learnTargetCtx(ctx, x, t, false)
	st := in.lock()
	defer in.unlock()
	if st.client != nil && st.shared(t) && t.targetID != "" {
		st.targetCreated(t)
	}
}

// learnTargetCtx attaches t (which names it: see attachCalls), asks it for
// the browser's identity if that is still unknown, and detaches again when
// nobody else uses the tab. Before the handshake ends no client command
// runs, so the tab is let go even with a client waiting.
func (in *Instance) learnTargetCtx(ctx context.Context, x *extConn, t *tab, beforeReady bool) {
	if err := in.attachTab(ctx, x, t); err != nil {
		in.log.Info("could not learn a tab's target", "tab", t.id, "err", err)
		return
	}
	if in.Info().UserAgent == "" {
		in.learning.Lock()
		if in.Info().UserAgent == "" {
			if err := in.learnInfoFrom(ctx, x, t); err != nil {
				in.log.Debug("user agent", "tab", t.id, "err", err)
			}
		}
		in.learning.Unlock()
	}
	in.releaseIfUnused(x, t, beforeReady)
}

// ensureInfo returns the browser's identity, asking a shared tab when the
// extension did not report it.
func (in *Instance) ensureInfo(ctx context.Context, x *extConn) (BrowserInfo, error) {
	in.learning.Lock()
	defer in.learning.Unlock()
	if info := in.Info(); info.UserAgent != "" {
		return info, nil
	}
	if x == nil {
		return BrowserInfo{}, errors.New("extension not connected")
	}
	ctx, cancel := context.WithTimeout(ctx, in.srv.cfg.CallTimeout)
	defer cancel()
	// An attached tab first: asking it costs no attach.
	st := in.lock()
	tabs := st.sortedTabs()
	in.unlock()
	var errs []error
	for _, attachedOnly := range []bool{true, false} {
		for _, t := range tabs {
			in.lock()
			attached := t.state == tabAttached
			in.unlock()
			if attachedOnly != attached {
				continue
			}
			if !attached {
				if err := in.attachTab(ctx, x, t); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			err := in.learnInfoFrom(ctx, x, t)
			if !attached {
				in.releaseIfUnused(x, t, false)
			}
			if err == nil {
				return in.Info(), nil
			}
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return BrowserInfo{}, errors.New("no tab is shared to ask")
	}
	return BrowserInfo{}, errors.Join(errs...)
}

// uaProbe reads the user agent and, where the page may (a secure context),
// the browser's full version, which the reduced user agent string hides.
const uaProbe = `(async () => {
  let full = "";
  try {
    const d = await navigator.userAgentData.getHighEntropyValues(["fullVersionList"]);
    const b = d.fullVersionList.find((b) => b.brand === "Google Chrome") || d.fullVersionList.find((b) => b.brand === "Chromium");
    if (b) full = b.version;
  } catch {}
  return { userAgent: navigator.userAgent, full };
})()`

// learnInfoFrom asks attached tab t for the browser's identity and records
// it.
func (in *Instance) learnInfoFrom(ctx context.Context, x *extConn, t *tab) error {
	res, err := x.sendCommand(ctx, t.id, "", "Runtime.evaluate",
		map[string]any{"expression": uaProbe, "awaitPromise": true, "returnByValue": true, "silent": true})
	if err != nil {
		return fmt.Errorf("ask tab %d: %w", t.id, err)
	}
	var r struct {
		Result struct {
			Value struct {
				UserAgent string `json:"userAgent"`
				Full      string `json:"full"`
			} `json:"value"`
		} `json:"result"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("ask tab %d: %w", t.id, err)
	}
	info, ok := infoFromUA(r.Result.Value.UserAgent, r.Result.Value.Full)
	if !ok {
		return fmt.Errorf("tab %d: no Chrome version in its user agent", t.id)
	}
	st := in.lock()
	if st.info.UserAgent == "" {
		st.info = info
	}
	in.unlock()
	in.log.Info("learnt the browser's version from a tab", "product", info.Product)
	return nil
}

var chromeVersion = regexp.MustCompile(`(HeadlessChrome|Chrome|Chromium)/(\d+(?:\.\d+){3})`)

// infoFromUA derives what Browser.getVersion reports from a user agent and,
// when known, the full version.
func infoFromUA(ua, full string) (BrowserInfo, bool) {
	m := chromeVersion.FindStringSubmatch(ua)
	if m == nil {
		return BrowserInfo{}, false
	}
	version := m[2]
	if full != "" {
		version = full
	}
	// Chrome's own product, headless or not: the user agent says which.
	return BrowserInfo{Product: "Chrome/" + version, UserAgent: ua, Version: version}, true
}

// The browser remembered across restarts (Config.BrowserFile): a Chrome's
// /json/version names its browser whether or not a client has connected,
// and so does the relay's once its extension has connected once, even
// while it has not connected again.

// maxBrowserFile bounds what is read of the remembered browser.
const maxBrowserFile = 16 << 10

// loadBrowser reads the remembered browser; a missing or unreadable file
// is no browser.
func loadBrowser(path string) (BrowserInfo, error) {
	var bi BrowserInfo
	if path == "" {
		return bi, nil
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return bi, nil
	}
	if err != nil {
		return bi, fmt.Errorf("remembered browser: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxBrowserFile))
	if err != nil {
		return bi, fmt.Errorf("remembered browser: %w", err)
	}
	if err := json.Unmarshal(b, &bi); err != nil {
		return BrowserInfo{}, fmt.Errorf("remembered browser %s: %w", path, err)
	}
	if !chromeVersion.MatchString(bi.Product) || bi.UserAgent == "" {
		return BrowserInfo{}, fmt.Errorf("remembered browser %s: not a Chrome's", path)
	}
	return bi, nil
}

// rememberBrowser writes the browser the default instance's extension
// reported, when it changed.
func (in *Instance) rememberBrowser() {
	path := in.srv.cfg.BrowserFile
	if !in.isDefault || path == "" {
		return
	}
	st := in.lock()
	info, known := st.info, st.remembered
	if info.UserAgent == "" || info == known {
		in.unlock()
		return
	}
	st.remembered = info
	in.unlock()
	b, err := json.MarshalIndent(info, "", "  ")
	if err == nil {
		err = writeFileAtomic(path, append(b, '\n'))
	}
	if err != nil {
		in.log.Warn("could not remember the browser", "err", err)
	}
}

// versionInfo is what /json/version reports: the browser the extension
// reported, or the one remembered while it is not connected.
func (in *Instance) versionInfo() BrowserInfo {
	st := in.lock()
	defer in.unlock()
	if st.info.UserAgent == "" && (st.ext == nil || !st.ext.isReady()) {
		return st.remembered
	}
	return st.info
}

// writeFileAtomic replaces path with b, readable by its owner only.
func writeFileAtomic(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), ".browser-*")
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		os.Remove(f.Name())
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(f.Name())
		return err
	}
	if err := os.Rename(f.Name(), path); err != nil {
		os.Remove(f.Name())
		return err
	}
	return nil
}
