package methods

import (
	"fmt"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

func TestLookupKnown(t *testing.T) {
	for _, tc := range []struct {
		name                         string
		opens, brake, unique, enable bool
		replay                       replay.Kind
	}{
		{name: "Runtime.evaluate", opens: true, brake: true},
		{name: "Input.dispatchKeyEvent", opens: true, unique: true},
		{name: "Storage.getCookies", unique: true},
		{name: "Page.enable", enable: true},
		{name: "Emulation.setUserAgentOverride", replay: replay.Set},
		{name: "Page.navigate"},
	} {
		m := Lookup([]byte(tc.name))
		if m != Table[tc.name] || m.Unknown {
			t.Errorf("%s: not the table's own entry", tc.name)
		}
		if m.Name != tc.name || string(m.NameBytes) != tc.name {
			t.Errorf("%s: named %q", tc.name, m.Name)
		}
		if m.Opens != tc.opens || m.Brake != tc.brake || m.Unique != tc.unique || m.Enable != tc.enable {
			t.Errorf("%s: opens %v brake %v unique %v enable %v, want %v %v %v %v", tc.name, m.Opens, m.Brake, m.Unique, m.Enable, tc.opens, tc.brake, tc.unique, tc.enable)
		}
		if tc.replay != replay.None && m.Replay != tc.replay {
			t.Errorf("%s: replay %v, want %v", tc.name, m.Replay, tc.replay)
		}
	}
	if Lookup([]byte("Page.navigate")).UrlKey != "url" {
		t.Error("Page.navigate: the fence judges no URL of it")
	}
}

// TestLookupNew: a method a newer Chrome knows gets one entry, marked
// unknown and planned, that later lookups find without an allocation.
func TestLookupNew(t *testing.T) {
	planned := 0
	SetPlanners(func(m *Info) {
		if m.Unknown {
			planned++
		}
	}, func(*Event) {})
	defer SetPlanners(func(*Info) {}, func(*Event) {})
	name := []byte("NewDomain.newMethod")
	m := Lookup(name)
	if !m.Unknown || m.Name != string(name) {
		t.Fatalf("got %+v", m)
	}
	if Lookup(name) != m {
		t.Error("a second lookup made another entry")
	}
	if planned != 1 {
		t.Errorf("planned %d times, want once", planned)
	}
	if n := testing.AllocsPerRun(100, func() { Lookup(name) }); n != 0 {
		t.Errorf("a lookup of a name met before allocates %.0f times", n)
	}
	e := LookupEvent([]byte("NewDomain.happened"))
	if LookupEvent([]byte("NewDomain.happened")) != e || e.Name != "NewDomain.happened" {
		t.Error("an event of a newer Chrome is not kept")
	}
	if n := testing.AllocsPerRun(100, func() { LookupEvent([]byte("NewDomain.happened")) }); n != 0 {
		t.Errorf("a lookup of an event met before allocates %.0f times", n)
	}
}

// TestInternedBound: past maxInterned, a new name still gets an entry,
// planned, but none is kept: a client that sends ever new names does not
// grow the table.
func TestInternedBound(t *testing.T) {
	var n interned[Info]
	for i := range maxInterned + 10 {
		n.put(fmt.Sprint("X.m", i), &Info{})
	}
	if len(n.m) != maxInterned {
		t.Errorf("kept %d, want %d", len(n.m), maxInterned)
	}
	if n.get([]byte(fmt.Sprint("X.m", maxInterned+5))) != nil {
		t.Error("a name past the bound was kept")
	}
}

// TestSetPlanners: the planners plan the table and what was met before
// them.
func TestSetPlanners(t *testing.T) {
	early := Lookup([]byte("Early.method"))
	seen := map[*Info]bool{}
	events := 0
	SetPlanners(func(m *Info) { seen[m] = true }, func(*Event) { events++ })
	defer SetPlanners(func(*Info) {}, func(*Event) {})
	if !seen[early] || !seen[Table["Page.navigate"]] || len(seen) < len(Table) {
		t.Errorf("planned %d of %d methods, the early one: %v", len(seen), len(Table), seen[early])
	}
	if events < len(eventTable) {
		t.Errorf("planned %d of %d events", events, len(eventTable))
	}
}

func TestArgsOfDuplicateKey(t *testing.T) {
	var a cdp.Args
	if err := ArgsOf(Lookup([]byte("Input.dispatchKeyEvent")), []byte(`{"type":"keyDown","type":"char"}`), &a); err == nil {
		t.Error("params that give a key twice were read")
	}
}
