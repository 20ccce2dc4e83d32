package audit

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// tenantRing holds records of alice's instance a1, bob's b1 and the
// operator's o1, and a record about no instance.
func tenantRing() *Ring {
	rg := NewRing(64, 0)
	rg.Append(Record{Instance: "a1", Tenant: "alice", Kind: KindConnect})  // 1
	rg.Append(Record{Instance: "b1", Tenant: "bob", Kind: KindConnect})    // 2
	rg.Append(Record{Instance: "o1", Kind: KindConnect})                   // 3
	rg.Append(Record{Kind: KindPolicyReload})                              // 4
	rg.Append(Record{Instance: "a1", Tenant: "alice", Kind: KindNavigate}) // 5
	rg.Append(Record{Instance: "b1", Tenant: "bob", Kind: KindNavigate})   // 6
	rg.Append(Record{Instance: "gone", Tenant: "alice", Kind: KindDetach}) // 7: an instance removed since
	return rg
}

// tenantOptions: the request's X-Tenant stands in for its token's
// tenant; a1, b1 and o1 exist now, each its tenant's.
var tenantOptions = HandlerOptions{
	Tenant: func(r *http.Request) string { return r.Header.Get("X-Tenant") },
	Instance: func(r *http.Request, id string) bool {
		owner, ok := map[string]string{"a1": "alice", "b1": "bob", "o1": ""}[id]
		t := r.Header.Get("X-Tenant")
		return ok && (t == "" || t == owner)
	},
}

func scopedGet(h http.Handler, tenant, target string) *httptest.ResponseRecorder {
	r := httptest.NewRequest("GET", target, nil)
	if tenant != "" {
		r.Header.Set("X-Tenant", tenant)
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, r)
	return w
}

func seqsOf(t *testing.T, body string) []uint64 {
	t.Helper()
	var ans queryAnswer
	if err := json.Unmarshal([]byte(body), &ans); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	out := []uint64{}
	for _, r := range ans.Records {
		out = append(out, r.Seq)
	}
	return out
}

func TestTenantScope(t *testing.T) {
	h := tenantRing().HandlerWith(tenantOptions)
	tests := []struct {
		tenant, query string
		code          int
		seqs          []uint64
		body          string
	}{
		{"", "", 200, []uint64{1, 2, 3, 4, 5, 6, 7}, ""},
		{"", "?tenant=alice", 200, []uint64{1, 5, 7}, ""},
		{"", "?instance=b1", 200, []uint64{2, 6}, ""},
		{"", "?instance=gone", 200, []uint64{7}, ""},
		{"", "?instance=never", 404, nil, "404 page not found\n"},
		{"alice", "", 200, []uint64{1, 5, 7}, ""},
		{"alice", "?tenant=alice&kind=navigate", 200, []uint64{5}, ""},
		{"alice", "?instance=a1", 200, []uint64{1, 5}, ""},
		{"alice", "?instance=gone", 200, []uint64{7}, ""},
		{"alice", "?tenant=bob", 400, nil, "its own tenant's records only"},
		{"alice", "?instance=b1", 404, nil, "404 page not found\n"},
		{"alice", "?instance=o1", 404, nil, "404 page not found\n"},
		{"alice", "?instance=never", 404, nil, "404 page not found\n"},
		{"bob", "?since=2", 200, []uint64{6}, ""},
		{"carol", "", 200, []uint64{}, ""},
	}
	for _, tt := range tests {
		w := scopedGet(h, tt.tenant, "/v1/audit"+tt.query)
		if w.Code != tt.code {
			t.Errorf("%q %s: %d %s, want %d", tt.tenant, tt.query, w.Code, w.Body, tt.code)
			continue
		}
		if tt.code == 200 {
			if got := seqsOf(t, w.Body.String()); !slices.Equal(got, tt.seqs) {
				t.Errorf("%q %s: %v, want %v", tt.tenant, tt.query, got, tt.seqs)
			}
		} else if !strings.Contains(w.Body.String(), tt.body) {
			t.Errorf("%q %s: %q, want %q", tt.tenant, tt.query, w.Body, tt.body)
		}
	}

	// To alice, bob's instance is one that never was: the same answer,
	// byte for byte, on both endpoints.
	for _, path := range []string{"/v1/audit", "/v1/audit/follow"} {
		theirs := scopedGet(h, "alice", path+"?instance=b1")
		none := scopedGet(h, "alice", path+"?instance=never")
		if theirs.Code != 404 || theirs.Body.String() != none.Body.String() || !sameHeaders(theirs.Header(), none.Header()) {
			t.Errorf("%s: bob's instance %d %v %q, an unknown one %d %v %q", path, theirs.Code, theirs.Header(), theirs.Body, none.Code, none.Header(), none.Body)
		}
	}
}

func sameHeaders(a, b http.Header) bool {
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	return string(ja) == string(jb)
}

// TestTenantFollow: a tenant's follow stream carries its records only;
// the others move its Last-Event-ID on without a word of what they were.
func TestTenantFollow(t *testing.T) {
	rg := tenantRing()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r.Header.Set("X-Tenant", "bob")
		rg.HandlerWith(tenantOptions).ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	s := follow(t, srv, "", "")
	got, _, last := s.records(2)
	if !slices.Equal(got, []uint64{2, 6}) {
		t.Fatalf("bob follows %v", got)
	}
	rg.Append(Record{Instance: "a1", Tenant: "alice", Kind: KindInput}) // 8
	rg.Append(Record{Instance: "b1", Tenant: "bob", Kind: KindInput})   // 9
	for {
		ev, ok := s.next()
		if !ok {
			t.Fatal("stream ended")
		}
		if strings.Contains(ev.data, "alice") || strings.Contains(ev.data, `"a1"`) {
			t.Fatalf("alice's record reached bob: %+v", ev)
		}
		if ev.data != "" {
			if ev.id != "9" {
				t.Errorf("bob's next record has id %s (after %s)", ev.id, last)
			}
			break
		}
	}
}

// FuzzTenantScope: whatever a tenant asks for, it gets none of another's
// records, and an instance= it may not see answers as one that never was.
func FuzzTenantScope(f *testing.F) {
	for _, q := range []string{"", "tenant=bob", "instance=b1", "instance=a1&kind=connect", "since=3&limit=2", "tenant=alice&tenant=bob", "instance=o1", "tenant=", "instance=gone&tenant=alice"} {
		f.Add("alice", q)
		f.Add("bob", q)
	}
	rg := tenantRing()
	h := rg.HandlerWith(tenantOptions)
	f.Fuzz(func(t *testing.T, tenant, rawQuery string) {
		if tenant == "" {
			return // the operator reads everything
		}
		q, err := url.ParseQuery(rawQuery)
		if err != nil {
			return
		}
		w := scopedGet(h, tenant, "/v1/audit?"+q.Encode())
		switch w.Code {
		case 200:
			var ans queryAnswer
			if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
				t.Fatalf("%q: %v", w.Body, err)
			}
			for _, r := range ans.Records {
				if r.Tenant != tenant {
					t.Fatalf("%s asked %q and got %+v", tenant, rawQuery, r)
				}
			}
		case 404:
			none := scopedGet(h, tenant, "/v1/audit?instance=never")
			if w.Body.String() != none.Body.String() || !sameHeaders(w.Header(), none.Header()) {
				t.Fatalf("%s %q: a 404 unlike an unknown instance's: %q", tenant, rawQuery, w.Body)
			}
		case 400:
		default:
			t.Fatalf("%s %q: %d %q", tenant, rawQuery, w.Code, w.Body)
		}
	})
}
