package e2e

import (
	"context"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/viewer"
)

// TestPersonInCharge: a person in the live view, opened in a second
// headless Chromium, stops Playwright in the middle of a loop and resumes
// it, answers a confirm() the automation leaves open, approves one asked
// navigation and denies another, and approves a click on a submit button
// whose label the card shows (person.mjs).
func TestPersonInCharge(t *testing.T) {
	requireEnv(t)
	other, err := url.Parse(env.Pages.Other)
	if err != nil {
		t.Fatal(err)
	}
	setPolicy(t, denylist.Config{AskDomains: []string{other.Hostname()}, AskSubmit: true})
	vs, err := viewer.New(viewer.Config{Source: viewer.FromRelay(env.Relay), Interactive: asThePerson})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(vs)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := vs.Close(ctx); err != nil {
			t.Errorf("live view close: %v", err)
		}
		hs.Close()
	})
	// A failing step must not leave the automation stopped for the tests
	// after this one.
	t.Cleanup(func() {
		if stopped, _ := env.Relay.Default().Stopped(); stopped {
			env.Relay.Default().Resume("the test's cleanup")
		}
	})
	shots := os.Getenv("PERSON_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	out := runNode(t, "person.mjs", hs.URL+"/", env.HTTPEndpoint(), env.Pages.Main, env.Pages.Other, shots)
	for _, name := range []string{"person-stopped", "person-dialog", "person-approval", "person-approval-submit"} {
		if fi, err := os.Stat(filepath.Join(shots, name+".png")); err != nil || fi.Size() < 10000 {
			t.Errorf("screenshot %s: %v", name, err)
		}
	}
	// The stop's latency is measured, not judged here: it is a figure of
	// the benchmarks; a stop that took seconds is a failure all the same.
	if m := regexp.MustCompile(`"stopMs":(\d+)`).FindStringSubmatch(out); m != nil {
		if ms, _ := strconv.Atoi(m[1]); ms > 5000 {
			t.Errorf("the loop failed %d ms after the stop", ms)
		}
	}
	assertTabsKept(t)
}
