package core

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
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
func (in *Instance) learnBeforeReady(x Upstream) {
	ctx, cancel := context.WithTimeout(context.Background(), learnWait)
	defer cancel()
	st := in.Lock()
	var unnamed []*Tab
	for _, t := range st.SortedTabs() {
		if t.TargetID == "" {
			unnamed = append(unnamed, t)
		}
	}
	known := st.Info.UserAgent != ""
	in.Unlock()
	for _, t := range unnamed {
		in.learnTargetCtx(ctx, x, t, true)
	}
	if !known {
		if _, err := in.EnsureInfo(ctx, x); err != nil {
			in.Log.Info("could not learn the browser's version yet", "err", err)
		}
	}
}

// learnTarget learns the target id of a tab shared after the handshake and
// announces the new target to discovering sessions.
func (in *Instance) learnTarget(x Upstream, t *Tab) {
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	defer cancel()
	in.learnTargetCtx(ctx, x, t, false)
	st := in.Lock()
	defer in.Unlock()
	if st.Client != nil && st.Shared(t) && t.TargetID != "" {
		st.TargetCreated(t)
	}
}

// learnTargetCtx attaches t (which names it: see attachCalls), asks it for
// the browser's identity if that is still unknown, and detaches again when
// nobody else uses the tab. Before the handshake ends no client command
// runs, so the tab is let go even with a client waiting.
func (in *Instance) learnTargetCtx(ctx context.Context, x Upstream, t *Tab, beforeReady bool) {
	if err := in.AttachTab(ctx, x, t); err != nil {
		in.Log.Info("could not learn a tab's target", "tab", t.Id, "err", err)
		return
	}
	if in.Info().UserAgent == "" {
		in.learning.Lock()
		if in.Info().UserAgent == "" {
			if err := in.learnInfoFrom(ctx, x, t); err != nil {
				in.Log.Debug("user agent", "tab", t.Id, "err", err)
			}
		}
		in.learning.Unlock()
	}
	in.releaseIfUnused(x, t, beforeReady)
}

// EnsureInfo returns the browser's identity, asking a shared tab when the
// extension did not report it.
func (in *Instance) EnsureInfo(ctx context.Context, x Upstream) (BrowserInfo, error) {
	in.learning.Lock()
	defer in.learning.Unlock()
	if info := in.Info(); info.UserAgent != "" {
		return info, nil
	}
	if x == nil {
		return BrowserInfo{}, errors.New("extension not connected")
	}
	ctx, cancel := context.WithTimeout(ctx, in.Srv.Cfg.CallTimeout)
	defer cancel()
	// An attached tab first: asking it costs no attach.
	st := in.Lock()
	tabs := st.SortedTabs()
	in.Unlock()
	var errs []error
	for _, attachedOnly := range []bool{true, false} {
		for _, t := range tabs {
			in.Lock()
			attached := t.State == TabAttached
			in.Unlock()
			if attachedOnly != attached {
				continue
			}
			if !attached {
				if err := in.AttachTab(ctx, x, t); err != nil {
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
func (in *Instance) learnInfoFrom(ctx context.Context, x Upstream, t *Tab) error {
	res, err := x.SendCommand(ctx, t.Id, "", "Runtime.evaluate",
		map[string]any{"expression": uaProbe, "awaitPromise": true, "returnByValue": true, "silent": true})
	if err != nil {
		return fmt.Errorf("ask tab %d: %w", t.Id, err)
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
		return fmt.Errorf("ask tab %d: %w", t.Id, err)
	}
	info, ok := InfoFromUA(r.Result.Value.UserAgent, r.Result.Value.Full)
	if !ok {
		return fmt.Errorf("tab %d: no Chrome version in its user agent", t.Id)
	}
	st := in.Lock()
	if st.Info.UserAgent == "" {
		st.Info = info
	}
	in.Unlock()
	in.Log.Info("learnt the browser's version from a tab", "product", info.Product)
	return nil
}

// The browser remembered across restarts (Config.BrowserFile): its file
// and format are internal/browser's (LoadRemembered, Remember).

// rememberBrowser writes the browser the default instance's extension
// reported, when it changed.
func (in *Instance) rememberBrowser() {
	path := in.Srv.Cfg.BrowserFile
	if !in.IsDefault || path == "" {
		return
	}
	st := in.Lock()
	info, known := st.Info, st.Remembered
	if info.UserAgent == "" || info == known {
		in.Unlock()
		return
	}
	st.Remembered = info
	in.Unlock()
	if err := Remember(path, info); err != nil {
		in.Log.Warn("could not remember the browser", "err", err)
	}
}

// VersionInfo is what /json/version reports: the browser the extension
// reported, or the one remembered while it is not connected.
func (in *Instance) VersionInfo() BrowserInfo {
	st := in.Lock()
	defer in.Unlock()
	if st.Info.UserAgent == "" && (st.Ext == nil || !st.Ext.IsReady()) {
		return st.Remembered
	}
	return st.Info
}
