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
	w, err := p.worker()
	if err != nil || w == "" {
		return false, err
	}
	// Closing a worker's target stops the worker; Chrome starts it again
	// for its next event.
	_, err = p.call("Target.closeTarget", map[string]any{"targetId": w})
	return err == nil, err
}

// worker returns the target of the extension's service worker, "" when
// it is not running.
func (p *person) worker() (string, error) {
	ts, err := p.targets()
	if err != nil {
		return "", err
	}
	prefix := "chrome-extension://" + extension.ID + "/"
	for _, t := range ts {
		if t.Type == "service_worker" && strings.HasPrefix(t.URL, prefix) {
			return t.TargetID, nil
		}
	}
	return "", nil
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

// attach gives the person a session of their own on a target.
func (p *person) attach(targetID string) (string, error) {
	res, err := p.call("Target.attachToTarget", map[string]any{"targetId": targetID, "flatten": true})
	if err != nil {
		return "", fmt.Errorf("attach to %s: %w", targetID, err)
	}
	var r struct {
		SessionID string `json:"sessionId"`
	}
	return r.SessionID, json.Unmarshal(res, &r)
}

func (p *person) detach(sessionID string) {
	p.call("Target.detachFromTarget", map[string]any{"sessionId": sessionID})
}

// navigate takes the tab of the person's session to url, as the person
// typing it in the address bar.
func (p *person) navigate(sessionID, url string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := p.c.Call(ctx, sessionID, "Page.navigate", map[string]any{"url": url}); err != nil {
		return fmt.Errorf("the person's navigation to %s: %w", url, err)
	}
	return nil
}

// reloadExtension reloads the extension, as an update or its own page
// does: its worker calls chrome.runtime.reload(). It reports false when
// the worker is not running.
func (p *person) reloadExtension() (bool, error) {
	w, err := p.worker()
	if err != nil || w == "" {
		return false, err
	}
	s, err := p.attach(w)
	if err != nil {
		return false, err
	}
	// The worker goes with the reload: its answer may never come.
	_, err = p.c.Send(s, "Runtime.evaluate", map[string]any{"expression": "setTimeout(() => chrome.runtime.reload(), 20), 1"})
	return err == nil, err
}
