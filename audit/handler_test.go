package audit

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// httpGet serves one request in memory and returns the body.
func httpGet(t *testing.T, rg *Ring, target string) string {
	t.Helper()
	w := httptest.NewRecorder()
	rg.Handler().ServeHTTP(w, httptest.NewRequest("GET", target, nil))
	if w.Code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", target, w.Code, w.Body)
	}
	return w.Body.String()
}

func TestQueryEndpoint(t *testing.T) {
	rg := NewRing(8, 0)
	for i := range 12 {
		inst := "a"
		if i%3 == 0 {
			inst = "b"
		}
		rg.Append(Record{Instance: inst, Kind: KindNavigate, Method: "Page.navigate", Detail: fmt.Sprint(i)})
	}
	// Kept: 5..12; instance b at Seqs 7 and 10.
	tests := []struct {
		target      string
		code        int
		wantSeqs    []uint64
		next        uint64
		gap         bool
		errContains string
	}{
		{target: "/v1/audit", code: 200, wantSeqs: span(5, 12), next: 12, gap: true},
		{target: "/v1/audit?since=4", code: 200, wantSeqs: span(5, 12), next: 12},
		{target: "/v1/audit?since=3", code: 200, wantSeqs: span(5, 12), next: 12, gap: true},
		{target: "/v1/audit?since=10", code: 200, wantSeqs: span(11, 12), next: 12},
		{target: "/v1/audit?since=12", code: 200, wantSeqs: []uint64{}, next: 12},
		{target: "/v1/audit?since=4&limit=3", code: 200, wantSeqs: span(5, 7), next: 7},
		{target: "/v1/audit?since=4&instance=b", code: 200, wantSeqs: []uint64{7, 10}, next: 12},
		{target: "/v1/audit?since=4&kind=navigate&limit=1000", code: 200, wantSeqs: span(5, 12), next: 12},
		{target: "/v1/audit?since=4&kind=denied", code: 200, wantSeqs: []uint64{}, next: 12},
		{target: "/v1/audit?limit=0", code: 400, errContains: "limit must be an integer from 1 to 1000"},
		{target: "/v1/audit?limit=1001", code: 400, errContains: "limit must be"},
		{target: "/v1/audit?limit=ten", code: 400, errContains: `not "ten"`},
		{target: "/v1/audit?since=-1", code: 400, errContains: "since must be a sequence number"},
		{target: "/v1/audit?since=1.5", code: 400, errContains: "since must be"},
		{target: "/v1/audit?since=99999999999999999999999", code: 400, errContains: "since must be"},
		{target: "/v1/audit?knd=navigate", code: 400, errContains: `unknown parameter "knd"`},
		{target: "/v1/audit?kind=a&kind=b", code: 400, errContains: `"kind" given 2 times`},
		{target: "/v1/audit/nope", code: 404},
	}
	for _, tt := range tests {
		t.Run(tt.target, func(t *testing.T) {
			w := httptest.NewRecorder()
			rg.Handler().ServeHTTP(w, httptest.NewRequest("GET", tt.target, nil))
			if w.Code != tt.code {
				t.Fatalf("status %d, want %d: %s", w.Code, tt.code, w.Body)
			}
			if tt.code == 404 {
				return
			}
			if ct := w.Header().Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type %q", ct)
			}
			if tt.code != 200 {
				var e struct{ Error string }
				if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || !strings.Contains(e.Error, tt.errContains) {
					t.Errorf("error body %s, want one containing %q", w.Body, tt.errContains)
				}
				return
			}
			var ans struct {
				Records     []Record
				Oldest      *uint64
				Next        *uint64
				Gap         *bool
				Overwritten *uint64
			}
			if err := json.Unmarshal(w.Body.Bytes(), &ans); err != nil {
				t.Fatal(err)
			}
			if ans.Records == nil || ans.Oldest == nil || ans.Next == nil || ans.Gap == nil || ans.Overwritten == nil {
				t.Fatalf("a field is missing: %s", w.Body)
			}
			if !slices.Equal(seqs(ans.Records), tt.wantSeqs) {
				t.Errorf("records %v, want %v", seqs(ans.Records), tt.wantSeqs)
			}
			if *ans.Oldest != 5 || *ans.Overwritten != 4 || *ans.Next != tt.next || *ans.Gap != tt.gap {
				t.Errorf("oldest %d overwritten %d next %d gap %v; want 5 4 %d %v", *ans.Oldest, *ans.Overwritten, *ans.Next, *ans.Gap, tt.next, tt.gap)
			}
		})
	}
}

func TestQueryEndpointDefaultLimit(t *testing.T) {
	rg := NewRing(300, 0)
	for range 250 {
		rg.Append(Record{})
	}
	var ans struct {
		Records []Record
		Next    uint64
	}
	if err := json.Unmarshal([]byte(httpGet(t, rg, "/v1/audit")), &ans); err != nil {
		t.Fatal(err)
	}
	if len(ans.Records) != defaultLimit || ans.Next != defaultLimit {
		t.Errorf("%d records, next %d; want %d", len(ans.Records), ans.Next, defaultLimit)
	}
}

// event is one Server-Sent Event as a browser would dispatch it, or an
// id-only block, which moves Last-Event-ID without firing.
type event struct {
	id, typ, data string
	hasID         bool
}

// sse reads events from a follow stream.
type sse struct {
	t        *testing.T
	resp     *http.Response
	sc       *bufio.Scanner
	comments int
}

func follow(t *testing.T, srv *httptest.Server, query, lastEventID string) *sse {
	t.Helper()
	// A stream that stops short fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	t.Cleanup(cancel)
	req, err := http.NewRequestWithContext(ctx, "GET", srv.URL+"/v1/audit/follow"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastEventID != "" {
		req.Header.Set("Last-Event-ID", lastEventID)
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { resp.Body.Close() })
	if resp.StatusCode != 200 {
		body, _ := io.ReadAll(resp.Body)
		t.Fatalf("follow: %d %s", resp.StatusCode, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("Content-Type %q", ct)
	}
	return &sse{t: t, resp: resp, sc: bufio.NewScanner(resp.Body)}
}

// next returns the next event, or ok false at the end of the stream.
func (s *sse) next() (ev event, ok bool) {
	s.t.Helper()
	var data []string
	for s.sc.Scan() {
		line := s.sc.Text()
		switch {
		case line == "":
			if len(data) > 0 || ev.hasID {
				ev.data = strings.Join(data, "\n")
				return ev, true
			}
		case strings.HasPrefix(line, ":"):
			s.comments++
		default:
			field, value, _ := strings.Cut(line, ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "id":
				ev.id, ev.hasID = value, true
			case "event":
				ev.typ = value
			case "data":
				data = append(data, value)
			default:
				s.t.Errorf("unexpected field %q", line)
			}
		}
	}
	return ev, false
}

// records reads events until n records have come, returning their Seqs
// and the gaps announced on the way, and the last id seen.
func (s *sse) records(n int) (got []uint64, gaps []Gap, lastID string) {
	s.t.Helper()
	for len(got) < n {
		ev, ok := s.next()
		if !ok {
			s.t.Fatalf("stream ended after %v", got)
		}
		if ev.hasID {
			lastID = ev.id
		}
		switch ev.typ {
		case "gap":
			var g Gap
			if err := json.Unmarshal([]byte(ev.data), &g); err != nil {
				s.t.Fatalf("gap data %q: %v", ev.data, err)
			}
			gaps = append(gaps, g)
		case "":
			if ev.data == "" {
				continue // id only
			}
			var r Record
			if err := json.Unmarshal([]byte(ev.data), &r); err != nil {
				s.t.Fatalf("record data %q: %v", ev.data, err)
			}
			if ev.id != strconv.FormatUint(r.Seq, 10) {
				s.t.Errorf("event id %q for record %d", ev.id, r.Seq)
			}
			got = append(got, r.Seq)
		default:
			s.t.Fatalf("unexpected event type %q", ev.typ)
		}
	}
	return got, gaps, lastID
}

func newServer(t *testing.T, rg *Ring) *httptest.Server {
	srv := httptest.NewServer(rg.Handler())
	t.Cleanup(srv.Close)
	return srv
}

func appendN(rg *Ring, n int) {
	for range n {
		rg.Append(Record{Instance: "a", Kind: KindInput, Method: "Input.insertText", Detail: TextLength("x")})
	}
}

func TestFollowResume(t *testing.T) {
	rg := NewRing(8, 0)
	srv := newServer(t, rg)
	appendN(rg, 3)

	// From the start: backlog, then live.
	s := follow(t, srv, "", "")
	got, gaps, _ := s.records(3)
	if !slices.Equal(got, span(1, 3)) || len(gaps) > 0 {
		t.Errorf("backlog %v gaps %v", got, gaps)
	}
	appendN(rg, 2)
	got, _, lastID := s.records(2)
	if !slices.Equal(got, span(4, 5)) || lastID != "5" {
		t.Errorf("live %v, last id %q", got, lastID)
	}
	s.resp.Body.Close()

	// Resume by since.
	appendN(rg, 2)
	s = follow(t, srv, "?since=5", "")
	if got, gaps, _ := s.records(2); !slices.Equal(got, span(6, 7)) || len(gaps) > 0 {
		t.Errorf("since=5: %v gaps %v", got, gaps)
	}
	s.resp.Body.Close()

	// Resume by Last-Event-ID, which wins over since (EventSource keeps
	// the URL it was opened with).
	s = follow(t, srv, "?since=1", "6")
	if got, _, _ := s.records(1); !slices.Equal(got, []uint64{7}) {
		t.Errorf("Last-Event-ID 6: %v", got)
	}
	s.resp.Body.Close()

	// Behind the ring: a gap event first, whose id moves past the loss.
	appendN(rg, 10) // kept: 10..17
	s = follow(t, srv, "", "3")
	ev, ok := s.next()
	if !ok || ev.typ != "gap" || ev.id != "9" {
		t.Fatalf("first event %+v, want a gap with id 9", ev)
	}
	var g Gap
	if err := json.Unmarshal([]byte(ev.data), &g); err != nil || g != (Gap{Missed: 6, Next: 10}) {
		t.Errorf("gap %s, want {missed 6, next 10}", ev.data)
	}
	if got, _, _ := s.records(8); !slices.Equal(got, span(10, 17)) {
		t.Errorf("after the gap: %v", got)
	}
	s.resp.Body.Close()

	// From an earlier run: reset.
	s = follow(t, srv, "?since=5000", "")
	ev, _ = s.next()
	if ev.typ != "gap" || !strings.Contains(ev.data, `"reset":true`) {
		t.Errorf("first event %+v, want a reset gap", ev)
	}
}

// TestFollowGapWhileStreaming: a follower whose socket stalls while the
// ring laps it is told what it missed, then carries on.
func TestFollowGapWhileStreaming(t *testing.T) {
	rg := NewRing(4, 0)
	rg.Append(Record{})
	w := &flushRecorder{header: http.Header{}, entered: make(chan struct{}), release: make(chan struct{})}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		rg.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/v1/audit/follow", nil).WithContext(ctx))
	}()
	<-w.entered // the handler is writing record 1
	appendN(rg, 10)
	close(w.release)
	waitFor(t, func() bool { return strings.Contains(w.String(), "id: 11\n") })
	cancel()
	<-done
	want := "id: 1\ndata: {\"seq\":1,"
	body := w.String()
	if !strings.HasPrefix(body, want) {
		t.Errorf("stream starts %q, want %q", body[:min(len(body), 40)], want)
	}
	if !strings.Contains(body, "id: 7\nevent: gap\ndata: {\"missed\":6,\"next\":8}\n\nid: 8\n") {
		t.Errorf("no gap before record 8:\n%s", body)
	}
}

func TestFollowFilter(t *testing.T) {
	rg := NewRing(16, 0)
	srv := newServer(t, rg)
	rg.Append(Record{Instance: "a", Kind: KindConnect})  // 1
	rg.Append(Record{Instance: "b", Kind: KindConnect})  // 2
	rg.Append(Record{Instance: "a", Kind: KindNavigate}) // 3
	rg.Append(Record{Instance: "b", Kind: KindNavigate}) // 4
	s := follow(t, srv, "?instance=a&kind=navigate", "")
	ev, _ := s.next()
	if ev.id != "3" || !strings.Contains(ev.data, `"seq":3`) {
		t.Errorf("first event %+v, want record 3", ev)
	}
	// Record 4 does not match; an id-only block moves Last-Event-ID past
	// it, so that a reconnect does not scan it again.
	ev, _ = s.next()
	if ev.id != "4" || ev.data != "" || ev.typ != "" {
		t.Errorf("second event %+v, want id 4 alone", ev)
	}
}

func TestFollowBadRequests(t *testing.T) {
	rg := NewRing(4, 0)
	tests := []struct{ target, lastID, want string }{
		{"/v1/audit/follow?since=x", "", "since must be a sequence number"},
		{"/v1/audit/follow?limit=5", "", "limit does not apply"},
		{"/v1/audit/follow?foo=1", "", `unknown parameter \"foo\"`},
		{"/v1/audit/follow", "abc", "Last-Event-ID must be a sequence number"},
	}
	for _, tt := range tests {
		w := httptest.NewRecorder()
		req := httptest.NewRequest("GET", tt.target, nil)
		if tt.lastID != "" {
			req.Header.Set("Last-Event-ID", tt.lastID)
		}
		rg.Handler().ServeHTTP(w, req)
		if w.Code != 400 || !strings.Contains(w.Body.String(), tt.want) {
			t.Errorf("%s: %d %s, want 400 with %q", tt.target, w.Code, w.Body, tt.want)
		}
	}
	w := httptest.NewRecorder()
	rg.Handler().ServeHTTP(w, httptest.NewRequest("POST", "/v1/audit", nil))
	if w.Code != http.StatusMethodNotAllowed {
		t.Errorf("POST: %d", w.Code)
	}
}

func TestFollowTooMany(t *testing.T) {
	rg := NewRing(4, 0)
	for range maxFollowers {
		defer rg.Subscribe(0).Close()
	}
	w := httptest.NewRecorder()
	rg.Handler().ServeHTTP(w, httptest.NewRequest("GET", "/v1/audit/follow", nil))
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") == "" {
		t.Errorf("%d %v", w.Code, w.Header())
	}
}

func TestFollowEnds(t *testing.T) {
	t.Run("ring closed", func(t *testing.T) {
		rg := NewRing(8, 0)
		srv := newServer(t, rg)
		appendN(rg, 2)
		s := follow(t, srv, "", "")
		s.records(2)
		appendN(rg, 1)
		rg.Close()
		if got, _, _ := s.records(1); !slices.Equal(got, []uint64{3}) {
			t.Errorf("before the end: %v", got)
		}
		if ev, ok := s.next(); ok {
			t.Errorf("stream goes on after Close: %+v", ev)
		}
	})
	t.Run("client gone", func(t *testing.T) {
		rg := NewRing(8, 0)
		srv := newServer(t, rg)
		s := follow(t, srv, "", "")
		waitFor(t, func() bool { return rg.Followers() == 1 })
		s.resp.Body.Close()
		waitFor(t, func() bool { return rg.Followers() == 0 })
	})
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("condition not met in 5s")
		}
	}
}

// TestFollowFrozenClient: a follower that stops reading its socket does
// not slow Append, and does not stop another follower.
func TestFollowFrozenClient(t *testing.T) {
	rg := NewRing(1024, 0)
	srv := newServer(t, rg)
	follow(t, srv, "", "") // never read
	live := follow(t, srv, "", "")
	waitFor(t, func() bool { return rg.Followers() == 2 })

	const n = 20_000 // several MiB of events: far beyond socket buffers
	liveDone := make(chan []uint64, 1)
	go func() {
		var seen []uint64
		for len(seen) == 0 || seen[len(seen)-1] < n {
			ev, ok := live.next()
			if !ok {
				break
			}
			if ev.typ == "" && ev.data != "" {
				seq, _ := strconv.ParseUint(ev.id, 10, 64)
				seen = append(seen, seq)
			}
		}
		liveDone <- seen
	}()
	start := time.Now()
	for i := range n {
		rg.Append(Record{Instance: "a", Kind: KindInput, Detail: strings.Repeat("d", 200)})
		if i%1000 == 0 {
			time.Sleep(time.Millisecond) // let the live reader keep up
		}
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("appending took %v with a frozen follower", d)
	}
	// poll moves a cursor under the ring's lock, so it can be read here.
	rg.mu.Lock()
	frozenAt := rg.subs[0].cursor
	rg.mu.Unlock()
	if frozenAt >= n {
		t.Errorf("the frozen follower read everything (cursor %d): the test did not freeze it", frozenAt)
	}
	select {
	case seen := <-liveDone:
		if len(seen) == 0 || seen[len(seen)-1] != n {
			t.Errorf("live follower got %d records, last %v", len(seen), seen[len(seen)-1:])
		}
	case <-time.After(10 * time.Second):
		t.Fatal("live follower stalled behind the frozen one")
	}
}

// flushRecorder is a streaming ResponseWriter in memory, for a handler
// running in a synctest bubble (where sockets cannot be used) or one whose
// first write must stall.
type flushRecorder struct {
	header  http.Header
	entered chan struct{} // if set, closed by the first Write
	release chan struct{} // if set, the first Write waits for it

	mu   sync.Mutex
	body strings.Builder
	once sync.Once
}

func (w *flushRecorder) Header() http.Header { return w.header }
func (w *flushRecorder) WriteHeader(int)     {}
func (w *flushRecorder) Flush()              {}
func (w *flushRecorder) Write(b []byte) (int, error) {
	w.once.Do(func() {
		if w.entered != nil {
			close(w.entered)
			<-w.release
		}
	})
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.Write(b)
}
func (w *flushRecorder) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.body.String()
}

func TestFollowHeartbeat(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		rg := NewRing(8, 0)
		ctx, cancel := context.WithCancel(context.Background())
		w := &flushRecorder{header: http.Header{}}
		req := httptest.NewRequest("GET", "/v1/audit/follow", nil).WithContext(ctx)
		done := make(chan struct{})
		go func() {
			defer close(done)
			rg.Handler().ServeHTTP(w, req)
		}()
		beats := func() int { return strings.Count(w.String(), ": heartbeat\n\n") }

		time.Sleep(heartbeat - time.Second)
		synctest.Wait()
		if n := beats(); n != 0 {
			t.Errorf("%d heartbeats before %v", n, heartbeat)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if n := beats(); n != 1 {
			t.Errorf("%d heartbeats after %v, want 1", n, heartbeat)
		}
		rg.Append(Record{})
		time.Sleep(2 * heartbeat)
		synctest.Wait()
		if n := beats(); n != 3 {
			t.Errorf("%d heartbeats after %v, want 3", n, 3*heartbeat)
		}
		if !strings.Contains(w.String(), "id: 1\n") {
			t.Errorf("record not sent: %q", w.String())
		}
		cancel()
		synctest.Wait()
		select {
		case <-done:
		default:
			t.Fatal("handler still running after the client left")
		}
		if rg.Followers() != 0 {
			t.Error("subscription left open")
		}
	})
}
