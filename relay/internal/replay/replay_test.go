package replay

import (
	"slices"
	"strings"
	"testing"
)

// methods lists the kept commands' methods, in order.
func methods(cs []Cmd) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.Method + " " + string(c.Params)
	}
	return out
}

func TestRecordCases(t *testing.T) {
	type step struct {
		method string
		params string
		on     *bool // a domain's switch (method is the domain)
	}
	on, off := true, false
	for _, tc := range []struct {
		name  string
		steps []step
		want  []string
	}{
		{"a later call of a setting replaces it, in its place",
			[]step{{"Emulation.setDeviceMetricsOverride", `{"width":1}`, nil}, {"Page.setBypassCSP", `{"enabled":true}`, nil}, {"Emulation.setDeviceMetricsOverride", `{"width":2}`, nil}},
			[]string{`Page.setBypassCSP {"enabled":true}`, `Emulation.setDeviceMetricsOverride {"width":2}`}},
		{"a clear takes its setting back",
			[]step{{"Emulation.setDeviceMetricsOverride", `{"width":1}`, nil}, {"Emulation.clearDeviceMetricsOverride", `{}`, nil}},
			[]string{}},
		{"a lifted setting's clear takes it back too",
			[]step{{"Page.setDeviceMetricsOverride", `{}`, nil}, {"Page.clearDeviceMetricsOverride", `{}`, nil}},
			[]string{}},
		{"bindings are kept by name, removed by name",
			[]step{{"Runtime.addBinding", `{"name":"a"}`, nil}, {"Runtime.addBinding", `{"name":"b"}`, nil}, {"Runtime.addBinding", `{"name":"a","x":1}`, nil}, {"Runtime.removeBinding", `{"name":"b"}`, nil}},
			[]string{`Runtime.addBinding {"name":"a","x":1}`}},
		{"each script for new documents counts",
			[]step{{"Page.addScriptToEvaluateOnNewDocument", `{"source":"1"}`, nil}, {"Page.addScriptToEvaluateOnNewDocument", `{"source":"1"}`, nil}},
			[]string{`Page.addScriptToEvaluateOnNewDocument {"source":"1"}`, `Page.addScriptToEvaluateOnNewDocument {"source":"1"}`}},
		{"a removal of a script not yet named removes nothing",
			[]step{{"Page.addScriptToEvaluateOnNewDocument", `{"source":"1"}`, nil}, {"Page.removeScriptToEvaluateOnNewDocument", `{"identifier":""}`, nil}},
			[]string{`Page.addScriptToEvaluateOnNewDocument {"source":"1"}`}},
		{"a domain's switch is kept until its disable",
			[]step{{"Network", `{"maxTotalBufferSize":1}`, &on}, {"Page", `{}`, &on}, {"Network", ``, &off}},
			[]string{`Page.enable {}`}},
		{"a command that is not kept",
			[]step{{"Runtime.evaluate", `{"expression":"1"}`, nil}},
			[]string{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r Record
			for _, s := range tc.steps {
				if s.on != nil {
					r.Switch(s.method, *s.on, []byte(s.params))
					continue
				}
				r.Add(KindOf(s.method), s.method, []byte(s.params))
			}
			if got := methods(r.Cmds); !slices.Equal(got, tc.want) {
				t.Errorf("kept %q, want %q", got, tc.want)
			}
			n := 0
			for _, c := range r.Cmds {
				n += len(c.Params)
			}
			if n != r.Bytes {
				t.Errorf("Bytes %d, the params are %d", r.Bytes, n)
			}
		})
	}
}

// TestScriptNamed: a script's identifier, read from Chrome's reply, lets
// the client's removal find it; after a resume the client's identifier is
// rewritten to Chrome's new one.
func TestScriptNamed(t *testing.T) {
	var r Record
	key := r.Add(Script, "Page.addScriptToEvaluateOnNewDocument", []byte(`{"source":"a"}`))
	other := r.Add(Script, "Page.addScriptToEvaluateOnNewDocument", []byte(`{"source":"b"}`))
	if key == "" || key == other {
		t.Fatalf("script keys %q, %q", key, other)
	}
	r.Noted(key, "7")
	if r.Cmds[0].Script() != "7" || r.Cmds[1].Script() != "" {
		t.Fatalf("scripts named %q, %q", r.Cmds[0].Script(), r.Cmds[1].Script())
	}
	if p := r.ScriptRewrite([]byte(`{"identifier":"7"}`)); p != nil {
		t.Errorf("rewritten before a resume: %s", p)
	}
	r.Renamed(map[string]string{"7": "12"})
	if p := string(r.ScriptRewrite([]byte(`{"identifier":"7"}`))); p != `{"identifier":"12"}` {
		t.Errorf("rewritten to %s", p)
	}
	r.Add(Unscript, "Page.removeScriptToEvaluateOnNewDocument", []byte(`{"identifier":"7"}`))
	if got := methods(r.Cmds); !slices.Equal(got, []string{`Page.addScriptToEvaluateOnNewDocument {"source":"b"}`}) {
		t.Errorf("kept %q", got)
	}
	// A tap of the old sessions, read after they ended, names nothing of
	// the next ones'.
	r.Forget()
	next := r.Add(Script, "Page.addScriptToEvaluateOnNewDocument", []byte(`{"source":"c"}`))
	if next == key || next == other {
		t.Fatalf("a key of the ended sessions given again: %q", next)
	}
	r.Noted(key, "99")
	if r.Cmds[0].Script() != "" {
		t.Errorf("a late reply named a script of the new sessions: %q", r.Cmds[0].Script())
	}
}

// TestRecordBounded: what is kept per tab is bounded in number and bytes.
func TestRecordBounded(t *testing.T) {
	var r Record
	for range MaxCmds + 10 {
		r.Add(Script, "Page.addScriptToEvaluateOnNewDocument", []byte(`{}`))
	}
	if len(r.Cmds) != MaxCmds {
		t.Errorf("%d kept, want %d", len(r.Cmds), MaxCmds)
	}
	r.Forget()
	big := []byte(`{"source":"` + strings.Repeat("x", MaxBytes/2) + `"}`)
	for range 3 {
		r.Add(Script, "Page.addScriptToEvaluateOnNewDocument", big)
	}
	if r.Bytes > MaxBytes || len(r.Cmds) != 1 {
		t.Errorf("%d kept, %d bytes", len(r.Cmds), r.Bytes)
	}
}

func TestKeepChild(t *testing.T) {
	var kept []Cmd
	kept = Keep(kept, Set, "Emulation.setEmulatedMedia", []byte(`{"media":"print"}`), 2)
	kept = Keep(kept, Keyed, "Runtime.addBinding", []byte(`{"name":"a"}`), 2)
	kept = Keep(kept, Keyed, "Runtime.addBinding", []byte(`{"name":"b"}`), 2) // over the bound
	kept = Keep(kept, Script, "Page.addScriptToEvaluateOnNewDocument", []byte(`{}`), 2)
	if got := methods(kept); !slices.Equal(got, []string{`Emulation.setEmulatedMedia {"media":"print"}`, `Runtime.addBinding {"name":"a"}`}) {
		t.Errorf("kept %q", got)
	}
	kept = Keep(kept, Unkey, "Runtime.removeBinding", []byte(`{"name":"a"}`), 2)
	kept = Keep(kept, Clear, "Emulation.clearDeviceMetricsOverride", nil, 2) // clears nothing kept
	if got := methods(kept); !slices.Equal(got, []string{`Emulation.setEmulatedMedia {"media":"print"}`}) {
		t.Errorf("kept %q", got)
	}
}

// TestTablesAgree: every clear names a setting that is kept, and every
// keyed setting has its key field.
func TestTablesAgree(t *testing.T) {
	for _, tbl := range []map[string]Kind{Methods, liftKept} {
		for m, k := range tbl {
			switch k {
			case Clear:
				if set := ClearedBy(m); KindOf(set) != Set {
					t.Errorf("%s clears %q, which is not a kept setting", m, set)
				}
			case Keyed:
				if keyField[m] == "" {
					t.Errorf("%s is kept by a key it has no field for", m)
				}
			}
		}
	}
	for m := range liftKept {
		if _, ok := Methods[m]; ok {
			t.Errorf("%s is in both tables", m)
		}
	}
}

// FuzzRecord: whatever a client's state commands say, what is kept for a
// resume stays bounded, its byte count true, and nothing panics.
func FuzzRecord(f *testing.F) {
	names := make([]string, 0, len(Methods))
	for name := range Methods {
		names = append(names, name)
	}
	slices.Sort(names)
	f.Add(uint8(0), []byte(`{"source":"","worldName":"util"}`))
	f.Add(uint8(1), []byte(`{"name":"binding"}`))
	f.Add(uint8(2), []byte(`{"identifier":"1"}`))
	f.Add(uint8(3), []byte(`not json`))
	f.Fuzz(func(t *testing.T, n uint8, params []byte) {
		var r Record
		for i := range 3 {
			m := names[(int(n)+i)%len(names)]
			if key := r.Add(KindOf(m), m, params); key != "" {
				r.Noted(key, string(params))
			}
			r.Switch("Runtime", i%2 == 0, params)
		}
		r.Renamed(map[string]string{string(params): "1"})
		r.ScriptRewrite(params)
		if len(r.Cmds) > MaxCmds || r.Bytes > MaxBytes {
			t.Fatalf("%d kept, %d bytes", len(r.Cmds), r.Bytes)
		}
		sum := 0
		for _, c := range r.Cmds {
			sum += len(c.Params)
		}
		if sum != r.Bytes {
			t.Fatalf("Bytes %d, the params are %d", r.Bytes, sum)
		}
	})
}
