package access

import (
	"reflect"
	"testing"
)

// TestEffectEnablesLifted: a domain's switch that does more than start
// events is lifted (the rest of the settings' classification, against the
// protocol the relay was built with, is the relay's TestSettingsClassified).
func TestEffectEnablesLifted(t *testing.T) {
	for name := range effectEnables {
		if _, ok := liftRules[name]; !ok {
			t.Errorf("%s has an effect but is not lifted", name)
		}
	}
}

// TestUndoKeyed: a keyed setting is taken back by the key it was made
// with; params that do not name it once, as a string, name none.
func TestUndoKeyed(t *testing.T) {
	for _, tc := range []struct {
		method, params string
		want           map[string]any
	}{
		{"Runtime.addBinding", `{"name":"b1"}`, map[string]any{"name": "b1"}},
		{"Runtime.addBinding", `{"name":"b\u00e9"}`, map[string]any{"name": "bé"}},
		{"Runtime.addBinding", `{"name":"b1","name":"b2"}`, map[string]any{"name": ""}},
		{"Runtime.addBinding", `{"name":7}`, map[string]any{"name": ""}},
		{"Runtime.addBinding", ``, map[string]any{"name": ""}},
		{"Emulation.setSensorOverrideEnabled", `{"enabled":true,"type":"gyroscope"}`, map[string]any{"enabled": false, "type": "gyroscope"}},
	} {
		rule, ok := Lift(tc.method)
		if !ok {
			t.Fatalf("%s is not lifted", tc.method)
		}
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		_, p := rule.Undo(params)
		if !reflect.DeepEqual(p, tc.want) {
			t.Errorf("%s %s: undone with %v, want %v", tc.method, tc.params, p, tc.want)
		}
	}
}
