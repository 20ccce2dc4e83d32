package core

import (
	"context"
	"errors"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// BrowserInfo is what the extension reports about its browser
// (cdp.BrowserInfo); the relay remembers it across restarts
// (cdp.LoadRemembered, cdp.Remember).
type BrowserInfo = cdp.BrowserInfo

// The browser's identity: what Browser.getVersion and /json/version
// report. The extension says it (extension.info); where it does not, its
// upstream learns it from a shared tab (package ext).

// EnsureInfo returns the browser's identity, asking the upstream x when
// it is not known yet.
func (in *Instance) EnsureInfo(ctx context.Context, x Upstream) (BrowserInfo, error) {
	if info := in.Info(); info.UserAgent != "" {
		return info, nil
	}
	if x == nil {
		return BrowserInfo{}, errors.New("extension not connected")
	}
	return x.BrowserInfo(ctx)
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
