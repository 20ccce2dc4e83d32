package routes

import (
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"testing"

	"github.com/cdprelay/cdprelay/web"
)

func TestClassify(t *testing.T) {
	pages, err := NewTable([]string{"/", "/app.js"})
	if err != nil {
		t.Fatal(err)
	}
	const g = "0123"
	tests := []struct {
		method, path string
		want         Route
	}{
		{"GET", "/json/version", Route{Kind: KindDiscovery, Area: AreaDiscovery, Doc: DocVersion}},
		{"GET", "/json/version/", Route{Kind: KindDiscovery, Area: AreaDiscovery, Doc: DocVersion}},
		{"GET", "/json", Route{Kind: KindDiscovery, Area: AreaDiscovery, Doc: DocList}},
		{"GET", "/json/", Route{Kind: KindDiscovery, Area: AreaDiscovery, Doc: DocList}},
		{"GET", "/json/list", Route{Kind: KindDiscovery, Area: AreaDiscovery, Doc: DocList}},
		{"GET", "/json/protocol", Route{Kind: KindDiscovery, Area: AreaDiscovery, Doc: DocProtocol}},
		{"PUT", "/json/new", Route{Area: AreaDiscovery}},
		{"GET", "/cdp/" + g, Route{Kind: KindCDP, Area: AreaCDP, GUID: g}},
		{"GET", "/cdp/" + g + "/", Route{Kind: KindCDP, Area: AreaCDP, GUID: g}},
		{"GET", "/cdp/" + g + "/json/version", Route{Kind: KindDiscovery, Area: AreaCDP, GUID: g, Doc: DocVersion}},
		{"GET", "/cdp/" + g + "/json/list/", Route{Kind: KindDiscovery, Area: AreaCDP, GUID: g, Doc: DocList}},
		{"GET", "/cdp/" + g + "/devtools/page/T1", Route{Kind: KindPage, Area: AreaCDP, GUID: g, TargetID: "T1"}},
		{"GET", "/cdp/" + g + "/devtools/page/", Route{Area: AreaCDP}},
		{"GET", "/cdp/" + g + "/other", Route{Area: AreaCDP}},
		{"GET", "/cdp/", Route{Area: AreaCDP}},
		{"GET", "/devtools/browser/" + g, Route{Kind: KindCDP, Area: AreaCDP, GUID: g}},
		{"GET", "/devtools/browser/", Route{Area: AreaCDP}},
		{"POST", "/v1/instances/ab12/stop", Route{Kind: KindPerson, Area: AreaPerson, InstanceID: "ab12", Action: "stop"}},
		{"POST", "/v1/instances/ab12/resume/", Route{Kind: KindPerson, Area: AreaPerson, InstanceID: "ab12", Action: "resume"}},
		{"GET", "/v1/instances/ab12/stop", Route{Area: AreaPerson, InstanceID: "ab12", Action: "stop"}},
		{"POST", "/v1/instances/ab12/pause", Route{Area: AreaAdmin}},
		{"POST", "/v1/instances//stop", Route{Area: AreaBadPath}},
		{"POST", "/v1/instances/ab12/stop/x", Route{Area: AreaAdmin}},
		{"GET", "/devtools/page/ABCDEF", Route{Kind: KindPage, Area: AreaDevtools, TargetID: "ABCDEF"}},
		{"GET", "/devtools/page/", Route{Area: AreaDevtools}},
		{"GET", "/devtools/", Route{Area: AreaDevtools}},
		{"GET", "/extension/" + g, Route{Kind: KindExtension, Area: AreaExtension, GUID: g}},
		{"GET", "/extension/", Route{Area: AreaExtension}},
		{"GET", "/viewer", Route{Kind: KindViewer, Area: AreaViewer}},
		{"GET", "/viewer/", Route{Area: AreaViewer}},
		{"GET", "/v1/instances", Route{Kind: KindInstances, Area: AreaAdmin}},
		{"HEAD", "/v1/instances", Route{Kind: KindInstances, Area: AreaAdmin}},
		{"POST", "/v1/instances", Route{Kind: KindMint, Area: AreaAdmin}},
		{"DELETE", "/v1/instances", Route{Kind: KindMint, Area: AreaAdmin}},
		{"GET", "/v1/instances/4f1c0a2b9e7d", Route{Kind: KindInstance, Area: AreaAdmin, InstanceID: "4f1c0a2b9e7d"}},
		{"DELETE", "/v1/instances/4f1c0a2b9e7d", Route{Kind: KindRemove, Area: AreaPerson, InstanceID: "4f1c0a2b9e7d", Action: "remove"}},
		{"DELETE", "/v1/instances/4f1c0a2b9e7d/", Route{Area: AreaAdmin}},
		{"PUT", "/v1/instances/4f1c0a2b9e7d", Route{Kind: KindInstance, Area: AreaAdmin, InstanceID: "4f1c0a2b9e7d"}},
		{"POST", "/v1/instances/4f1c0a2b9e7d/pause", Route{Area: AreaAdmin}},
		{"GET", "/v1/instances/", Route{Area: AreaAdmin}},
		{"GET", "/v1/audit", Route{Kind: KindAudit, Area: AreaAdmin}},
		{"GET", "/v1/audit/follow", Route{Kind: KindAudit, Area: AreaAdmin}},
		{"POST", "/v1/audit", Route{Area: AreaAdmin}},
		{"GET", "/v1/other", Route{Area: AreaAdmin}},
		{"GET", "/metrics", Route{Kind: KindMetrics, Area: AreaAdmin}},
		{"POST", "/metrics", Route{Area: AreaAdmin}},
		{"GET", "/metrics/", Route{Area: AreaAdmin}},
		{"GET", "/debug/pprof/", Route{Area: AreaAdmin}},
		{"GET", "/", Route{Kind: KindPageShell, Area: AreaPageShell}},
		{"HEAD", "/app.js", Route{Kind: KindPageShell, Area: AreaPageShell}},
		{"POST", "/", Route{Area: AreaOther}},
		{"GET", "/style.css", Route{Area: AreaOther}},
		{"GET", "/cdp", Route{Area: AreaOther}},
		{"GET", "/extension", Route{Area: AreaOther}},
		{"GET", "/jsonx", Route{Area: AreaOther}},
		{"GET", "/viewerx", Route{Area: AreaOther}},
		{"GET", "/metricsx", Route{Area: AreaOther}},
		{"GET", "", Route{Area: AreaBadPath}},
		{"GET", "*", Route{Area: AreaBadPath}},
		{"GET", "/cdp/x/../../v1/audit", Route{Area: AreaBadPath}},
		{"GET", "/./json/version", Route{Area: AreaBadPath}},
		{"GET", "//v1/audit", Route{Area: AreaBadPath}},
		{"GET", "/v1//audit", Route{Area: AreaBadPath}},
		{"GET", "/json/version//", Route{Area: AreaBadPath}},
	}
	for _, tt := range tests {
		if got := pages.Classify(tt.method, tt.path); got != tt.want {
			t.Errorf("Classify(%s %q) = %+v, want %+v", tt.method, tt.path, got, tt.want)
		}
	}
	if got := Classify("GET", "/style.css"); got.Kind != KindPageShell {
		t.Errorf("the default page shell lacks /style.css: %+v", got)
	}
}

func TestRelayRoutes(t *testing.T) {
	for path, want := range map[string]bool{
		"/json/version": true, "/json/new": true, "/cdp/x": true, "/cdp/x/other": true, "/devtools/page/T": true,
		"/devtools/x": true, "/extension/x": true, "/viewer": false, "/v1/audit": false, "/": false, "/metrics": false,
	} {
		if got := Classify("GET", path).Relay(); got != want {
			t.Errorf("%s: Relay() = %v", path, got)
		}
	}
	if !Classify("POST", "/v1/instances").Relay() || Classify("GET", "/v1/instances").Relay() {
		t.Error("minting is the relay's, the status listing is not")
	}
}

func TestNewTableRefusesUncleanPaths(t *testing.T) {
	if _, err := NewTable([]string{"app.js"}); err == nil {
		t.Error("a relative page path was accepted")
	}
}

// TestPageShellCoversThePage: every file of the live-view page is in the
// public page shell (a browser cannot put a token on the requests for a
// page's script, style and icon), and nothing else is.
func TestPageShellCoversThePage(t *testing.T) {
	const dir = "../../web/static"
	var files []string
	err := fs.WalkDir(os.DirFS(dir), ".", func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, "/"+p)
		}
		return err
	})
	if err != nil || len(files) == 0 {
		t.Fatalf("%s: %v", dir, err)
	}
	for _, p := range files {
		if !slices.Contains(DefaultPageShell, p) {
			t.Errorf("the page has %s, which is not in DefaultPageShell", p)
		}
	}
	for _, p := range DefaultPageShell {
		if p != "/" && !slices.Contains(files, p) {
			t.Errorf("DefaultPageShell has %s, which is not a file of the page", p)
		}
		w := httptest.NewRecorder()
		web.Handler().ServeHTTP(w, httptest.NewRequest("GET", p, nil))
		if w.Code != 200 && w.Code != http.StatusMovedPermanently {
			t.Errorf("DefaultPageShell has %s, which the page does not serve (%d)", p, w.Code)
		}
	}
}

func FuzzClassify(f *testing.F) {
	for _, p := range []string{"/json/version", "/cdp/x/json/list", "/cdp/x/devtools/page/T", "/devtools/browser/x", "/extension/x", "/viewer", "/v1/audit", "/v1/instances", "/", "/a/../b", "//x"} {
		f.Add("GET", p)
		f.Add("POST", p)
	}
	f.Fuzz(func(t *testing.T, method, p string) {
		r := Classify(method, p)
		if r.Kind >= numKinds || r.Area >= NumAreas {
			t.Fatalf("Classify(%q) = %+v", p, r)
		}
		// Only a clean path is routed.
		if r.Area != AreaBadPath && !CleanPath(p) {
			t.Fatalf("unclean %q classified %+v", p, r)
		}
		if r.Area == AreaBadPath && r.Kind != KindNotFound {
			t.Fatalf("unclean %q served by %v", p, r.Kind)
		}
		// A guid is read from the path only where the path is a
		// capability, and a named endpoint always has one.
		switch r.Kind {
		case KindCDP, KindExtension:
			if r.GUID == "" {
				t.Fatalf("%q: %v without a guid", p, r.Kind)
			}
		case KindDiscovery, KindPage:
		default:
			if r.GUID != "" {
				t.Fatalf("%q: guid %q on %v", p, r.GUID, r.Kind)
			}
		}
		if r.GUID != "" && r.Area != AreaCDP && r.Area != AreaExtension {
			t.Fatalf("%q: guid %q in area %v", p, r.GUID, r.Area)
		}
		if r.Kind == KindPage && r.TargetID == "" {
			t.Fatalf("%q: a page without a target", p)
		}
	})
}
