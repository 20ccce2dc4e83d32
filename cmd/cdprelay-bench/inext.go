package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/wire"
)

// inExtLoop runs chrome.debugger.sendCommand in a loop inside the
// extension's service worker: what the extension path costs with no
// WebSocket and no JSON of ours. It needs the extension to be attached to
// the tab. Timings come from performance.now(), which a service worker
// only has to about 0.1 ms: the per-call figures are coarse, the totals
// are not.
const inExtLoop = `(async (tabId, warm, n1, n16, conc) => {
  const t = { tabId }, p = { expression: "1" };
  const loop = async (n, lat) => {
    for (let i = 0; i < n; i++) {
      const s = performance.now();
      await chrome.debugger.sendCommand(t, "Runtime.evaluate", p);
      if (lat) lat.push(performance.now() - s);
    }
  };
  await loop(warm);
  const lat = [];
  let s = performance.now();
  await loop(n1, lat);
  const seq = performance.now() - s;
  s = performance.now();
  await Promise.all(Array.from({ length: conc }, () => loop(Math.ceil(n16 / conc))));
  return { lat, seq, par: performance.now() - s, n16: conc * Math.ceil(n16 / conc) };
})`

// inExtSample is one round of the in-extension loop.
type inExtSample struct {
	seq      sample        // one call at a time
	parCalls int           // calls made with conc in flight
	par      time.Duration // how long those took
	cpu      cpuSnapshot   // of every call, the warm-up's included
	calls    int           // every call
}

// measureInExtension attaches to the extension's service worker through
// Chromium's own port and runs inExtLoop there.
func measureInExtension(ctx context.Context, root *conn, tabID int64, warm, n1, n16, conc, pgid int) (inExtSample, error) {
	res, err := root.call(ctx, "", "Target.getTargets", nil)
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
	res, err = root.call(ctx, "", "Target.attachToTarget", jsonParams("targetId", sw, "flatten", true))
	if err != nil {
		return inExtSample{}, err
	}
	sess := string(wire.StringField(res, "sessionId"))
	defer root.call(ctx, "", "Target.detachFromTarget", jsonParams("sessionId", sess))

	expr := fmt.Sprintf("%s(%d, %d, %d, %d, %d)", inExtLoop, tabID, warm, n1, n16, conc)
	before := takeCPU(pgid)
	res, err = root.call(ctx, sess, "Runtime.evaluate", jsonParams("expression", expr, "awaitPromise", true, "returnByValue", true))
	if err != nil {
		return inExtSample{}, err
	}
	cpu := takeCPU(pgid).sub(before)
	var out struct {
		Result struct {
			Value struct {
				Lat []float64 `json:"lat"`
				Seq float64   `json:"seq"`
				Par float64   `json:"par"`
				N16 int       `json:"n16"`
			} `json:"value"`
		} `json:"result"`
		ExceptionDetails json.RawMessage `json:"exceptionDetails"`
	}
	if err := json.Unmarshal(res, &out); err != nil {
		return inExtSample{}, err
	}
	if out.ExceptionDetails != nil {
		return inExtSample{}, fmt.Errorf("the loop in the extension threw: %s", out.ExceptionDetails)
	}
	v := out.Result.Value
	s := inExtSample{cpu: cpu, calls: warm + len(v.Lat) + v.N16, parCalls: v.N16, par: msDuration(v.Par)}
	s.seq.elapsed = msDuration(v.Seq)
	for _, ms := range v.Lat {
		s.seq.lat = append(s.seq.lat, msDuration(ms))
	}
	return s, nil
}

func msDuration(ms float64) time.Duration { return time.Duration(ms * float64(time.Millisecond)) }
