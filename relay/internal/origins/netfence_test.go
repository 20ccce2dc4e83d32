package origins

import (
	"encoding/json"
	"testing"

	"github.com/cdprelay/cdprelay/denylist"
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// rulerPolicy gives rules for the profile "work" only.
type rulerPolicy struct {
	api.AllowAll
	rules string
}

func (p rulerPolicy) NetworkRules(profile string) []byte {
	if profile != "work" {
		return nil
	}
	return []byte(p.rules)
}

// TestNetFenceRules: the extension gets the policy's rules and those of
// the relay's own origins after them, null when there are none, and the
// policy's alone when its rules are no list the own ones can join.
func TestNetFenceRules(t *testing.T) {
	own := testOwn(t)
	none, err := NewOrigins("", "")
	if err != nil {
		t.Fatal(err)
	}
	policyRule := `{"id":3,"priority":1,"action":{"type":"block"},"condition":{"urlFilter":"||example.com","resourceTypes":["main_frame"]}}`
	ruler := rulerPolicy{rules: "[" + policyRule + "]"}
	count := func(raw json.RawMessage) (policy, relay int) {
		last := 0
		t.Helper()
		var rs []denylist.DNRRule
		if err := json.Unmarshal(raw, &rs); err != nil {
			t.Fatalf("%s: %v", raw, err)
		}
		for _, r := range rs {
			if r.Priority == ownRulePriority {
				relay++
				if r.ID <= last {
					t.Errorf("an own rule is numbered %d, not after the policy's", r.ID)
				}
			} else {
				policy++
				last = max(last, r.ID)
			}
		}
		return policy, relay
	}

	got, err := NetFenceRules(ruler, "work", own)
	if p, r := count(got); err != nil || p != 1 || r == 0 {
		t.Errorf("a ruler and own origins: %d of the policy's, %d own, %v", p, r, err)
	}
	got, err = NetFenceRules(ruler, "home", own)
	if p, r := count(got); err != nil || p != 0 || r == 0 {
		t.Errorf("no rules for the profile: %d of the policy's, %d own, %v", p, r, err)
	}
	got, err = NetFenceRules(api.AllowAll{}, "", own)
	if p, r := count(got); err != nil || p != 0 || r == 0 {
		t.Errorf("a policy that is no ruler: %d of the policy's, %d own, %v", p, r, err)
	}
	got, err = NetFenceRules(ruler, "work", none)
	if p, r := count(got); err != nil || p != 1 || r != 0 {
		t.Errorf("no own origins: %d of the policy's, %d own, %v", p, r, err)
	}
	if got, err := NetFenceRules(api.AllowAll{}, "", none); err != nil || string(got) != "null" {
		t.Errorf("nothing to fence: %s, %v", got, err)
	}
	bad := rulerPolicy{rules: `{"not":"a list"}`}
	if got, err := NetFenceRules(bad, "work", own); err == nil || string(got) != bad.rules {
		t.Errorf("rules that are no list: %s, %v", got, err)
	}
}
