package ext

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/attach"
	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/core"
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
func (x *Conn) learnBeforeReady() {
	in := x.Inst
	ctx, cancel := context.WithTimeout(context.Background(), learnWait)
	defer cancel()
	st := in.Lock()
	var unnamed []*core.Tab
	for _, t := range st.SortedTabs() {
		if t.TargetID == "" {
			unnamed = append(unnamed, t)
		}
	}
	known := st.Info.UserAgent != ""
	in.Unlock()
	for _, t := range unnamed {
		x.learnTargetCtx(ctx, t, true)
	}
	if !known {
		if _, err := x.BrowserInfo(ctx); err != nil {
			in.Log.Info("could not learn the browser's version yet", "err", err)
		}
	}
}

// learnTarget learns the target id of a tab shared after the handshake and
// announces the new target to discovering sessions.
func (x *Conn) learnTarget(t *core.Tab) {
	in := x.Inst
	ctx, cancel := context.WithTimeout(context.Background(), in.Srv.Cfg.CallTimeout)
	defer cancel()
	x.learnTargetCtx(ctx, t, false)
	st := in.Lock()
	defer in.Unlock()
	if st.Client != nil && st.Shared(t) && t.TargetID != "" {
		st.TargetCreated(t)
	}
}

// learnTargetCtx attaches t (which names it: see package attach), asks it for
// the browser's identity if that is still unknown, and detaches again when
// nobody else uses the tab. Before the handshake ends no client command
// runs, so the tab is let go even with a client waiting.
func (x *Conn) learnTargetCtx(ctx context.Context, t *core.Tab, beforeReady bool) {
	in := x.Inst
	if err := attach.Tab(ctx, in, x, t); err != nil {
		in.Log.Info("could not learn a tab's target", "tab", t.Id, "err", err)
		return
	}
	if in.Info().UserAgent == "" {
		x.learning.Lock()
		if in.Info().UserAgent == "" {
			if err := x.learnInfoFrom(ctx, t); err != nil {
				in.Log.Debug("user agent", "tab", t.Id, "err", err)
			}
		}
		x.learning.Unlock()
	}
	attach.ReleaseIfUnused(in, x, t, beforeReady)
}

// BrowserInfo returns the browser's identity, asking a shared tab when the
// extension did not report it (core.Upstream).
func (x *Conn) BrowserInfo(ctx context.Context) (core.BrowserInfo, error) {
	in := x.Inst
	x.learning.Lock()
	defer x.learning.Unlock()
	if info := in.Info(); info.UserAgent != "" {
		return info, nil
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
			attached := t.State == core.TabAttached
			in.Unlock()
			if attachedOnly != attached {
				continue
			}
			if !attached {
				if err := attach.Tab(ctx, in, x, t); err != nil {
					errs = append(errs, err)
					continue
				}
			}
			err := x.learnInfoFrom(ctx, t)
			if !attached {
				attach.ReleaseIfUnused(in, x, t, false)
			}
			if err == nil {
				return in.Info(), nil
			}
			errs = append(errs, err)
		}
	}
	if len(errs) == 0 {
		return core.BrowserInfo{}, errors.New("no tab is shared to ask")
	}
	return core.BrowserInfo{}, errors.Join(errs...)
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
func (x *Conn) learnInfoFrom(ctx context.Context, t *core.Tab) error {
	in := x.Inst
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
	info, ok := cdp.InfoFromUA(r.Result.Value.UserAgent, r.Result.Value.Full)
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
// and format are package cdp's (LoadRemembered, Remember).

// rememberBrowser writes the browser the default instance's extension
// reported, when it changed.
func rememberBrowser(in *core.Instance) {
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
	if err := cdp.Remember(path, info); err != nil {
		in.Log.Warn("could not remember the browser", "err", err)
	}
}
