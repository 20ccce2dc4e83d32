package relay_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// A policy, a tier ruler, an asker and an observer written against the
// api types alone are what package relay takes: the names relay exports
// are the api's, not copies of them.
var (
	_ relay.Policy          = apiPolicy{}
	_ relay.Asker           = apiPolicy{}
	_ relay.NavigationAsker = apiPolicy{}
	_ relay.NetworkRuler    = apiPolicy{}
	_ relay.TierRuler       = apiPolicy{}
	_ relay.Observer        = apiObserver{}
	_ api.Policy            = relay.Policy(nil)
	_ api.Observer          = relay.Observer(nil)
)

// apiPolicy implements every policy interface with api types only.
type apiPolicy struct{}

func (apiPolicy) Command(string, string, []byte) api.Decision {
	return api.Decision{Verdict: api.Deny, Rule: "method:x"}
}
func (apiPolicy) MethodURL(string, string, string, bool) api.Decision { return api.Decision{} }
func (apiPolicy) URL(string, string) api.Decision                     { return api.Decision{} }
func (apiPolicy) FencesNavigation(string) bool                        { return false }
func (apiPolicy) UploadDirs(string) []string                          { return nil }
func (apiPolicy) AsksSubmit(string) bool                              { return false }
func (apiPolicy) AsksNavigation(string) bool                          { return false }
func (apiPolicy) AskNavigation(string, string) api.Decision           { return api.Decision{} }
func (apiPolicy) NetworkRules(string) []byte                          { return nil }
func (apiPolicy) Tier(string, string) (string, string, string)        { return "full", "", "" }
func (apiPolicy) HasTiers(string) bool                                { return false }

type apiObserver struct{}

func (apiObserver) Observe(api.Event) {}

// TestErrorsAreTheAPIs: every error package relay exports is the very
// value of package api, so that errors.Is holds for an error a stage
// returns from api and a caller tests against relay's name.
func TestErrorsAreTheAPIs(t *testing.T) {
	for _, tc := range []struct {
		name       string
		relay, api error
	}{
		{"ErrWedged", relay.ErrWedged, api.ErrWedged},
		{"ErrNoTab", relay.ErrNoTab, api.ErrNoTab},
		{"ErrStopped", relay.ErrStopped, api.ErrStopped},
		{"ErrNotStopped", relay.ErrNotStopped, api.ErrNotStopped},
		{"ErrNoApproval", relay.ErrNoApproval, api.ErrNoApproval},
		{"ErrNoDialog", relay.ErrNoDialog, api.ErrNoDialog},
		{"ErrDialogAnswered", relay.ErrDialogAnswered, api.ErrDialogAnswered},
		{"ErrControlled", relay.ErrControlled, api.ErrControlled},
		{"ErrHidden", relay.ErrHidden, api.ErrHidden},
	} {
		if tc.relay == nil || tc.relay != tc.api {
			t.Errorf("relay.%s (%v) is not api.%s (%v)", tc.name, tc.relay, tc.name, tc.api)
		}
		if !errors.Is(fmt.Errorf("op: %w", tc.api), tc.relay) {
			t.Errorf("errors.Is(wrapped api.%s, relay.%s) is false", tc.name, tc.name)
		}
	}
}

// TestConstantsAreTheAPIs: the constants package relay re-declares keep
// the api's values (and, for the verdicts, its type).
func TestConstantsAreTheAPIs(t *testing.T) {
	verdicts := []struct {
		name       string
		relay, api api.Verdict
	}{
		{"Allow", relay.Allow, api.Allow},
		{"Deny", relay.Deny, api.Deny},
		{"AckAndDrop", relay.AckAndDrop, api.AckAndDrop},
		{"Ask", relay.Ask, api.Ask},
	}
	for _, tc := range verdicts {
		if tc.relay != tc.api {
			t.Errorf("relay.%s = %d, api.%s = %d", tc.name, tc.relay, tc.name, tc.api)
		}
	}
	names := []struct{ relay, api string }{
		{relay.ActorClient, api.ActorClient}, {relay.ActorExtension, api.ActorExtension},
		{relay.ActorViewer, api.ActorViewer}, {relay.ActorRelay, api.ActorRelay},
		{relay.ActorOperator, api.ActorOperator},
		{relay.KindConnect, api.KindConnect}, {relay.KindDisconnect, api.KindDisconnect},
		{relay.KindAttach, api.KindAttach}, {relay.KindDetach, api.KindDetach},
		{relay.KindNavigate, api.KindNavigate}, {relay.KindInput, api.KindInput},
		{relay.KindDenied, api.KindDenied}, {relay.KindDropped, api.KindDropped},
		{relay.KindTakeOver, api.KindTakeOver}, {relay.KindHandBack, api.KindHandBack},
		{relay.KindAccess, api.KindAccess}, {relay.KindSecret, api.KindSecret},
		{relay.KindPolicy, api.KindPolicy}, {relay.KindError, api.KindError},
		{relay.KindStop, api.KindStop}, {relay.KindResume, api.KindResume},
		{relay.KindDialog, api.KindDialog}, {relay.KindAsk, api.KindAsk},
		{relay.KindApproval, api.KindApproval}, {relay.KindRemove, api.KindRemove},
		{relay.OutcomeOK, api.OutcomeOK}, {relay.OutcomeDenied, api.OutcomeDenied},
		{relay.OutcomeDropped, api.OutcomeDropped}, {relay.OutcomeError, api.OutcomeError},
		{relay.EventAttached, api.EventAttached}, {relay.EventDetached, api.EventDetached},
		{relay.EventClientScreencast, api.EventClientScreencast}, {relay.EventHidden, api.EventHidden},
	}
	for _, n := range names {
		if n.relay != n.api {
			t.Errorf("relay's %q is api's %q", n.relay, n.api)
		}
	}
}

// TestPolicyFromAPITypes: a relay given a policy written against the api
// types holds it as its relay.Policy, and its decisions are relay's.
func TestPolicyFromAPITypes(t *testing.T) {
	srv, err := relay.New(relay.Config{Policy: apiPolicy{}, Observer: apiObserver{}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := srv.Close(ctx); err != nil {
			t.Errorf("relay close: %v", err)
		}
	})
	d := srv.Policy().Command("", "Runtime.evaluate", nil)
	if d.Verdict != relay.Deny || d.Rule != "method:x" {
		t.Errorf("the policy in force decided %+v, want a denial by method:x", d)
	}
	if _, ok := srv.Policy().(relay.TierRuler); !ok {
		t.Error("the policy in force lost its tiers")
	}
}
