package cdp

import (
	"errors"
	"strconv"
	"testing"
)

func TestIDContext(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"1.2.3", 2, true},
		{"-6125474237584431290.1.3", 1, true},
		{"8891239801291.42.17", 42, true},
		{"1.2", 0, false},
		{"1.2.3.4", 0, false},
		{"", 0, false},
		{"..", 0, false},
		{"1..3", 0, false},
		{"1.a.3", 0, false},
		{"1.-2.3", 0, false},
		{"-1.2.-3", 0, false},
		{"1.2.3 ", 0, false},
		{"1.9223372036854775807.1", 0, false}, // 19 digits: could overflow
		{"1.922337203685477580.1", 922337203685477580, true},
		{"12345678901234567890.1.1", 0, false},
	} {
		got, ok := IDContext([]byte(tc.in))
		if ok != tc.ok || (ok && got != tc.want) {
			t.Errorf("IDContext(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

func FuzzIDContext(f *testing.F) {
	for _, s := range []string{"1.2.3", "-1.2.3", "1.2", "1.2.3.4", "", "1.9223372036854775807.1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		id, ok := IDContext([]byte(s))
		if !ok {
			return
		}
		if id < 0 {
			t.Fatalf("IDContext(%q) = %d: a context id is never negative", s, id)
		}
		// What it read is the middle part, as a number.
		var parts []string
		start := 0
		for i := 0; i <= len(s); i++ {
			if i == len(s) || s[i] == '.' {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
		if len(parts) != 3 {
			t.Fatalf("IDContext(%q) took an id of %d parts", s, len(parts))
		}
		if n, err := strconv.ParseInt(parts[1], 10, 64); err != nil || n != id {
			t.Fatalf("IDContext(%q) = %d, the middle part reads %d (%v)", s, id, n, err)
		}
	})
}

func TestValuesAt(t *testing.T) {
	arg := CtxSpecs["Runtime.callFunctionOn"]
	var argKey CtxKey
	for _, k := range arg.Keys {
		if k.Outer == "arguments" {
			argKey = k
		}
	}
	if argKey.Inner != "objectId" || !argKey.Array {
		t.Fatalf("Runtime.callFunctionOn's arguments key: %+v", argKey)
	}
	for _, tc := range []struct {
		name string
		v    string
		want []string
		dup  bool
	}{
		{"each element's member", `[{"objectId":"1.2.3"},{"value":1},{"objectId":"1.4.5"}]`, []string{`"1.2.3"`, `"1.4.5"`}, false},
		{"not an array: Chrome refuses it", `{"objectId":"1.2.3"}`, nil, false},
		{"elements that are not objects", `[1,"x",null,[]]`, nil, false},
		{"a member twice", `[{"objectId":"1.2.3","objectId":"1.4.5"}]`, nil, true},
		{"many elements", `[{"objectId":"a"},{"objectId":"b"},{"objectId":"c"},{"objectId":"d"},{"objectId":"e"},{"objectId":"f"},{"objectId":"g"},{"objectId":"h"},{"objectId":"i"}]`, []string{`"a"`, `"b"`, `"c"`, `"d"`, `"e"`, `"f"`, `"g"`, `"h"`, `"i"`}, false},
	} {
		got, err := ValuesAt(nil, []byte(tc.v), argKey)
		var pe *ParamsError
		if tc.dup != errors.As(err, &pe) {
			t.Errorf("%s: error %v", tc.name, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if string(got[i]) != tc.want[i] {
				t.Errorf("%s: %q, want %q", tc.name, got, tc.want)
			}
		}
	}
	top := CtxKey{Outer: "contextId"}
	if got, _ := ValuesAt(nil, []byte(`7`), top); len(got) != 1 || string(got[0]) != "7" {
		t.Errorf("a top-level key's value: %q", got)
	}
}

// TestCtxSpecs: every spec reads its keys in one pass (each top-level key
// once, within the bound), and a key's index names its top-level key.
func TestCtxSpecs(t *testing.T) {
	if len(CtxSpecs) == 0 {
		t.Fatal("no specs")
	}
	for m, spec := range CtxSpecs {
		if len(spec.Outer) > MaxCtxOuter {
			t.Errorf("%s: %d top-level keys", m, len(spec.Outer))
		}
		worlds := false
		for _, k := range spec.Keys {
			if k.At < 0 || k.At >= len(spec.Outer) || spec.Outer[k.At] != k.Outer {
				t.Errorf("%s: key %+v indexes %v", m, k, spec.Outer)
			}
			worlds = worlds || k.Kind == RefWorld
		}
		if worlds != spec.Worlds {
			t.Errorf("%s: Worlds %v, keys say %v", m, spec.Worlds, worlds)
		}
	}
}
