package wire

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func TestMembersOf(t *testing.T) {
	keys := []string{"contextId", "uniqueContextId", "objectId"}
	vals, counts := make([][]byte, 3), make([]int, 3)
	for _, tc := range []struct {
		obj    string
		vals   [3]string
		counts [3]int
	}{
		{`{"expression":"1"}`, [3]string{}, [3]int{}},
		{`{"contextId":3,"expression":"\"contextId\":4"}`, [3]string{"3"}, [3]int{1}},
		{`{"context\u0049d":5,"objectId":"a.b.c"}`, [3]string{"5", "", `"a.b.c"`}, [3]int{1, 0, 1}},
		{`{"contextId":1,"uniqueContextId":"u","contextId":2}`, [3]string{"1", `"u"`}, [3]int{2, 1}},
		{`{"nested":{"contextId":9}}`, [3]string{}, [3]int{}},
		{`[1,2]`, [3]string{}, [3]int{}},
	} {
		MembersOf([]byte(tc.obj), keys, vals, counts)
		for i := range keys {
			if string(vals[i]) != tc.vals[i] || counts[i] != tc.counts[i] {
				t.Errorf("%s: %s = %q ×%d, want %q ×%d", tc.obj, keys[i], vals[i], counts[i], tc.vals[i], tc.counts[i])
			}
		}
	}
}

func FuzzMembersOf(f *testing.F) {
	for _, s := range []string{`{"contextId":3}`, `{"a":{"contextId":1},"contextId":"x"}`, `{"c\u006fntextId":[1,2]}`} {
		f.Add(s)
	}
	keys := []string{"contextId", "objectId"}
	f.Fuzz(func(t *testing.T, s string) {
		b := []byte(s)
		if !json.Valid(b) || !utf8.Valid(b) {
			return
		}
		vals, counts := make([][]byte, 2), make([]int, 2)
		MembersOf(b, keys, vals, counts)
		for i, k := range keys {
			v, n := Member(b, k)
			if n != counts[i] || string(v) != string(vals[i]) {
				t.Fatalf("%s: MembersOf %q ×%d, Member %q ×%d", s, vals[i], counts[i], v, n)
			}
		}
	})
}
