package main

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/cdptest"
)

// person acts on the browser as its owner would, through the browser's own
// debugging port: the relay never sees this connection.
type person struct {
	c *cdptest.Client
}

func newPerson(ctx context.Context, browserWS string) (*person, error) {
	c, err := cdptest.Dial(ctx, browserWS, nil)
	if err != nil {
		return nil, fmt.Errorf("the browser's debugging port: %w", err)
	}
	return &person{c: c}, nil
}

func (p *person) call(method string, params any) (json.RawMessage, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	return p.c.Call(ctx, "", method, params)
}

type targetInfo struct {
	TargetID string `json:"targetId"`
	Type     string `json:"type"`
	URL      string `json:"url"`
}

func (p *person) targets() ([]targetInfo, error) {
	res, err := p.call("Target.getTargets", map[string]any{})
	if err != nil {
		return nil, err
	}
	var r struct {
		TargetInfos []targetInfo `json:"targetInfos"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	return r.TargetInfos, nil
}

// pages returns the page targets whose URL contains sub.
func (p *person) pages(sub string) ([]targetInfo, error) {
	ts, err := p.targets()
	if err != nil {
		return nil, err
	}
	var out []targetInfo
	for _, t := range ts {
		if t.Type == "page" && strings.Contains(t.URL, sub) {
			out = append(out, t)
		}
	}
	return out, nil
}

// stopServiceWorker stops the extension's service worker, as Chrome does to
// an idle one or when it crashes. It reports false when none is running.
func (p *person) stopServiceWorker() (bool, error) {
	ts, err := p.targets()
	if err != nil {
		return false, err
	}
	prefix := "chrome-extension://" + extension.ID + "/"
	for _, t := range ts {
		if t.Type == "service_worker" && strings.HasPrefix(t.URL, prefix) {
			// Closing a worker's target stops the worker; Chrome starts it
			// again for its next event.
			_, err := p.call("Target.closeTarget", map[string]any{"targetId": t.TargetID})
			return err == nil, err
		}
	}
	return false, nil
}

func (p *person) openTab(url string) (string, error) {
	res, err := p.call("Target.createTarget", map[string]any{"url": url})
	if err != nil {
		return "", err
	}
	var r struct {
		TargetID string `json:"targetId"`
	}
	return r.TargetID, json.Unmarshal(res, &r)
}

func (p *person) closeTab(targetID string) error {
	_, err := p.call("Target.closeTarget", map[string]any{"targetId": targetID})
	return err
}
