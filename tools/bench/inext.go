package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
	"github.com/cdprelay/cdprelay/internal/wire"
)

// inExtLoop runs chrome.debugger.sendCommand in a loop inside the
// extension's service worker: what the extension path costs with no
// WebSocket and no JSON of ours. It needs the extension to be attached to
// the tab. With conc 1 it times each call; timings come from
// performance.now(), which a service worker has only to about 0.1 ms: the
// per-call figures are coarse, the totals are not.
const inExtLoop = `(async (tabId, warm, n, conc) => {
  const t = { tabId }, p = { expression: "1" };
  const loop = async (n, lat) => {
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      await chrome.debugger.sendCommand(t, "Runtime.evaluate", p);
      if (lat) lat.push(performance.now() - s);
    }
  };
  await loop(warm);
  const lat = conc === 1 ? [] : null, each = Math.ceil(n / conc);
  const s = performance.now();
  await Promise.all(Array.from({ length: conc }, () => loop(each, lat)));
  return { lat: lat || [], total: performance.now() - s, calls: conc * each };
})`

// inExtSample is one round of the in-extension loop.
type inExtSample struct {
	seq      sample        // one call at a time
	parCalls int           // calls made with conc in flight
	par      time.Duration // how long those took
	parCPU   cpuSnapshot
}

// measureInExtension attaches to the extension's service worker through
// Chromium's own port and runs inExtLoop there, one call at a time and
// then conc at a time.
func measureInExtension(ctx context.Context, root *cdptest.Conn, tabID int64, warm, n1, n16, conc, pgid int) (inExtSample, error) {
	res, err := root.Call(ctx, "", "Target.getTargets", nil)
	if err != nil {
		return inExtSample{}, err
	}
	var targets struct {
		TargetInfos []struct {
			TargetID string `json:"targetId"`
			Type     string `json:"type"`
			URL      string `json:"url"`
		} `json:"targetInfos"`
	}
	if err := json.Unmarshal(res, &targets); err != nil {
		return inExtSample{}, err
	}
	sw := ""
	for _, t := range targets.TargetInfos {
		if t.Type == "service_worker" && strings.HasPrefix(t.URL, "chrome-extension://"+extension.ID+"/") {
			sw = t.TargetID
		}
	}
	if sw == "" {
		return inExtSample{}, errors.New("the extension's service worker is not among the targets")
	}
	res, err = root.Call(ctx, "", "Target.attachToTarget", jsonParams("targetId", sw, "flatten", true))
	if err != nil {
		return inExtSample{}, err
	}
	sess := string(wire.StringField(res, "sessionId"))
	// Detached again so that the extension path is measured without a
	// debugger on the extension itself.
	defer root.Call(ctx, "", "Target.detachFromTarget", jsonParams("sessionId", sess))

	var s inExtSample
	if _, err := inExtRun(ctx, root, sess, tabID, warm, 0, 1); err != nil {
		return s, err
	}
	before := takeCPU(pgid)
	v, err := inExtRun(ctx, root, sess, tabID, 0, n1, 1)
	if err != nil {
		return s, err
	}
	s.seq.cpu = takeCPU(pgid).sub(before)
	s.seq.elapsed = msDuration(v.Total)
	for _, ms := range v.Lat {
		s.seq.lat = append(s.seq.lat, msDuration(ms))
	}
	before = takeCPU(pgid)
	if v, err = inExtRun(ctx, root, sess, tabID, 0, n16, conc); err != nil {
		return s, err
	}
	s.parCPU = takeCPU(pgid).sub(before)
	s.parCalls, s.par = v.Calls, msDuration(v.Total)
	return s, nil
}

type inExtResult struct {
	Lat   []float64 `json:"lat"`
	Total float64   `json:"total"`
	Calls int       `json:"calls"`
}

func inExtRun(ctx context.Context, root *cdptest.Conn, sess string, tabID int64, warm, n, conc int) (inExtResult, error) {
	expr := fmt.Sprintf("%s(%d, %d, %d, %d)", inExtLoop, tabID, warm, n, conc)
	res, err := root.Call(ctx, sess, "Runtime.evaluate", jsonParams("expression", expr, "awaitPromise", true, "returnByValue", true))
	if err != nil {
		return inExtResult{}, err
	}
	var out struct {
		Result struct {
			Value inExtResult `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return inExtResult{}, err
	}
	if out.ExceptionDetails != nil {
		return inExtResult{}, fmt.Errorf("the loop in the extension threw: %s", out.ExceptionDetails)
	}
	return out.Result.Value, nil
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
