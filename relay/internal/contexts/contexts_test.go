package contexts

import (
	"fmt"
	"slices"
	"testing"
)

func created(id int, typ, name, frame, unique string) []byte {
	return fmt.Appendf(nil, `{"context":{"id":%d,"origin":"https://%s.example","name":%q,"uniqueId":%q,"auxData":{"isDefault":%t,"type":%q,"frameId":%q}}}`, id, frame, name, unique, typ == "default", typ, frame)
}

var (
	mCreated   = []byte("Runtime.executionContextCreated")
	mDestroyed = []byte("Runtime.executionContextDestroyed")
	mCleared   = []byte("Runtime.executionContextsCleared")
)

func TestEventCases(t *testing.T) {
	var tab Tab
	if relay, iso := tab.Event("", mCreated, created(1, "default", "", "F1", "u1")); relay || iso != 0 {
		t.Fatalf("a page's world: relay %v, isolated %d", relay, iso)
	}
	if relay, iso := tab.Event("", mCreated, created(2, "isolated", "util", "F1", "u2")); relay || iso != 2 {
		t.Fatalf("a client's world: relay %v, isolated %d", relay, iso)
	}
	if relay, iso := tab.Event("", mCreated, created(3, "isolated", RelayWorldPrefix+"-ab", "F1", "u3")); !relay || iso != 0 {
		t.Fatalf("the relay's world: relay %v, isolated %d", relay, iso)
	}
	if relay, _ := tab.Event("", mCreated, created(4, "isolated", RelayWorldPrefix, "F1", "")); !relay {
		t.Fatal("a world named by the prefix alone is the relay's")
	}
	if n := tab.RelayWorlds(); n != 2 {
		t.Fatalf("%d relay worlds, want 2", n)
	}
	if o := tab.FrameOrigin("", "F1"); o != "https://F1.example" {
		t.Fatalf("origin %q", o)
	}
	if got := tab.IsolatedWorlds()[""]; !slices.Equal(got, []int64{2}) {
		t.Fatalf("isolated worlds %v", got)
	}
	// A new renderer reuses an id: the old context is gone with it.
	if relay, _ := tab.Event("", mCreated, created(3, "default", "", "F2", "u3b")); relay {
		t.Fatal("a page's world reusing the relay's id reads as the relay's")
	}
	if n := tab.RelayWorlds(); n != 1 {
		t.Fatalf("%d relay worlds after the id was reused, want 1", n)
	}
	// Destroyed by its unique id.
	if relay, _ := tab.Event("", mDestroyed, []byte(`{"executionContextUniqueId":"u2"}`)); relay {
		t.Fatal("a client's world's end reads as the relay's")
	}
	if tab.Get("").ByID[2] != nil {
		t.Fatal("destroyed by its unique id, still known")
	}
	if relay, _ := tab.Event("", mDestroyed, []byte(`{"executionContextId":4}`)); !relay {
		t.Fatal("the relay's world's end is not withheld")
	}
	if n := tab.RelayWorlds(); n != 0 {
		t.Fatalf("%d relay worlds, want 0", n)
	}
	tab.Event("", mCleared, []byte(`{}`))
	if len(tab.Get("").ByID) != 0 || len(tab.Get("").ByUnique) != 0 {
		t.Fatalf("cleared, still %v %v", tab.Get("").ByID, tab.Get("").ByUnique)
	}
	// A child's worlds go with it.
	tab.Event("C", mCreated, created(1, "isolated", RelayWorldPrefix+"-cd", "F3", ""))
	tab.Drop("C")
	if tab.Get("C") != nil || tab.RelayWorlds() != 0 {
		t.Fatalf("a dropped child's worlds are still known (%d of the relay's)", tab.RelayWorlds())
	}
}

func TestRelayEventCases(t *testing.T) {
	var tab Tab
	tab.Event("", mCreated, created(1, "default", "", "F1", ""))
	tab.Event("", mCreated, created(9, "isolated", RelayWorldPrefix+"-x", "F1", ""))
	for _, tc := range []struct {
		method, params    string
		withhold, unpause bool
	}{
		{"Runtime.consoleAPICalled", `{"executionContextId":9}`, true, false},
		{"Runtime.consoleAPICalled", `{"executionContextId":1}`, false, false},
		{"Runtime.exceptionThrown", `{"exceptionDetails":{"executionContextId":9}}`, true, false},
		{"Debugger.scriptParsed", `{"scriptId":"s9","executionContextId":9}`, true, false},
		{"Debugger.scriptParsed", `{"scriptId":"s1","executionContextId":1}`, false, false},
		{"Debugger.breakpointResolved", `{"location":{"scriptId":"s9"}}`, true, false},
		{"Debugger.breakpointResolved", `{"location":{"scriptId":"s1"}}`, false, false},
		{"Debugger.paused", `{"callFrames":[{"callFrameId":"x","location":{"scriptId":"s1"}}]}`, false, false},
		{"Debugger.resumed", `{}`, false, false},
		{"Debugger.paused", `{"callFrames":[{"callFrameId":"x","location":{"scriptId":"s1"}},{"callFrameId":"y","location":{"scriptId":"s9"}}]}`, true, true},
		{"Debugger.resumed", `{}`, true, false},
		{"Debugger.resumed", `{}`, false, false},
		{"Debugger.paused", `not json`, true, true},
	} {
		w, u := tab.RelayEvent("", []byte(tc.method), []byte(tc.params))
		if w != tc.withhold || u != tc.unpause {
			t.Errorf("%s %s: withhold %v unpause %v, want %v %v", tc.method, tc.params, w, u, tc.withhold, tc.unpause)
		}
	}
	if w, _ := tab.RelayEvent("other", []byte("Runtime.consoleAPICalled"), []byte(`{"executionContextId":9}`)); w {
		t.Error("an event of a session with no contexts withheld")
	}
}

// FuzzEvent: whatever Chrome's context events say, the view stays true to
// itself: every context known by its unique id is known by its id, and
// the count of the relay's worlds is the number of them known.
func FuzzEvent(f *testing.F) {
	f.Add(uint8(0), []byte(`{"context":{"id":1,"uniqueId":"u","name":"cdprelay-1","auxData":{"type":"isolated"}}}`))
	f.Add(uint8(1), []byte(`{"executionContextId":1}`))
	f.Add(uint8(1), []byte(`{"executionContextUniqueId":"u"}`))
	f.Add(uint8(2), []byte(`{}`))
	f.Add(uint8(0), []byte(`{"context":{"id":-5,"uniqueId":"","auxData":null}}`))
	f.Fuzz(func(t *testing.T, n uint8, params []byte) {
		var tab Tab
		methods := [][]byte{mCreated, mDestroyed, mCleared}
		seed := []byte(`{"context":{"id":1,"uniqueId":"u","name":"cdprelay-1","auxData":{"type":"isolated"}}}`)
		tab.Event("", mCreated, seed)
		for i := range 4 {
			tab.Event("", methods[(int(n)+i)%3], params)
			tab.RelayEvent("", []byte("Debugger.paused"), params)
		}
		relay := int32(0)
		if sc := tab.Get(""); sc != nil {
			for u, id := range sc.ByUnique {
				if x := sc.ByID[id]; x == nil || x.unique != u {
					t.Fatalf("unique id %q names context %d, which is not it", u, id)
				}
			}
			for _, x := range sc.ByID {
				if x.Relay {
					relay++
				}
			}
		}
		if relay != tab.RelayWorlds() {
			t.Fatalf("%d relay worlds counted, %d known", tab.RelayWorlds(), relay)
		}
	})
}
