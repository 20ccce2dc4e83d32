package audit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

func closeSink(t *testing.T, s *Sink) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := s.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// readLines returns the file's lines and the Seqs of those that are
// records; a line that is not is reported by its index in bad.
func readLines(t *testing.T, path string) (lines []string, recs []uint64, bad []int) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 0 && data[len(data)-1] != '\n' {
		t.Errorf("file does not end with a newline: %q", data[max(0, len(data)-40):])
	}
	for _, line := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if line == "" && len(data) == 0 {
			break
		}
		var r Record
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&r); err != nil || r.Seq == 0 {
			bad = append(bad, len(lines))
		} else {
			recs = append(recs, r.Seq)
		}
		lines = append(lines, line)
	}
	return lines, recs, bad
}

// run appends n records through a Log with a sink at path, as one run of
// the relay would, and returns the Seqs it handed out.
func run(t *testing.T, path string, n int) []uint64 {
	t.Helper()
	sink, err := OpenSink(path)
	if err != nil {
		t.Fatal(err)
	}
	log := NewLog(NewRing(16, sink.LastSeq()), sink, nil)
	var got []uint64
	for i := range n {
		got = append(got, log.Append(Record{Kind: KindNavigate, Detail: fmt.Sprint("run record ", i)}).Seq)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := log.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if sink.Errors() != 0 || sink.Dropped() != 0 {
		t.Errorf("errors %d, dropped %d: %v", sink.Errors(), sink.Dropped(), sink.LastError())
	}
	return got
}

func TestSinkRestartContinuesSequence(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	first := run(t, path, 5)
	second := run(t, path, 30) // more than the ring holds
	third := run(t, path, 0)
	fourth := run(t, path, 2)
	if !slices.Equal(first, span(1, 5)) || !slices.Equal(second, span(6, 35)) || len(third) != 0 || !slices.Equal(fourth, span(36, 37)) {
		t.Errorf("runs got %v, %v, %v, %v", first, second, third, fourth)
	}
	_, recs, bad := readLines(t, path)
	if len(bad) != 0 {
		t.Errorf("lines %v are not records", bad)
	}
	if !slices.Equal(recs, span(1, 37)) {
		t.Errorf("file holds %v, want 1..37", recs)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if perm := fi.Mode().Perm(); perm != 0o600 {
		t.Errorf("file mode %v, want 0600", perm)
	}
}

func TestSinkReopenDamagedFile(t *testing.T) {
	good := func(seq int) string {
		return fmt.Sprintf(`{"seq":%d,"time":"2026-05-01T12:00:00Z","kind":"connect"}`+"\n", seq)
	}
	longGarbage := strings.Repeat("x", 3*tailWindow)
	tests := []struct {
		name     string
		content  string
		wantLast uint64
	}{
		{"empty file", "", 0},
		{"clean end", good(1) + good(2) + good(3), 3},
		{"crash mid-line", good(1) + good(2) + `{"seq":3,"time":"2026-05-01T1`, 2},
		{"crash mid-line after newline", good(1) + good(2) + `{"seq":3,"ti` + "\n", 2},
		{"crash before closing brace", good(7) + `{"seq":8}` + "\n" + `{"seq":9`, 8},
		{"last line not a record", good(4) + "hello\n", 4},
		{"blank lines at the end", good(4) + "\n\n", 4},
		{"garbage longer than the first window", good(11) + good(12) + longGarbage, 12},
		{"garbage lines longer than the first window", good(11) + longGarbage + "\n" + longGarbage, 11},
		{"no record at all", "not json\nstill not\n", 0},
		{"seq zero is not a record", good(5) + `{"seq":0}` + "\n", 5},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "audit.jsonl")
			if err := os.WriteFile(path, []byte(tt.content), 0o600); err != nil {
				t.Fatal(err)
			}
			got := run(t, path, 2)
			if want := span(tt.wantLast+1, tt.wantLast+2); !slices.Equal(got, want) {
				t.Errorf("continued with %v, want %v", got, want)
			}
			lines, _, _ := readLines(t, path)
			// The new records are whole lines of their own, whatever came
			// before them.
			for i, seq := range got {
				line := lines[len(lines)-len(got)+i]
				var r Record
				if err := json.Unmarshal([]byte(line), &r); err != nil || r.Seq != seq {
					t.Errorf("line for Seq %d is %q", seq, line)
				}
			}
			data, _ := os.ReadFile(path)
			if !bytes.HasPrefix(data, []byte(tt.content)) {
				t.Error("the old content was changed")
			}
		})
	}
}

func TestOpenSinkFails(t *testing.T) {
	dir := t.TempDir()
	notDir := filepath.Join(dir, "file")
	if err := os.WriteFile(notDir, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	paths := map[string]string{
		"parent is a file":  filepath.Join(notDir, "audit.jsonl"),
		"missing directory": filepath.Join(dir, "nope", "audit.jsonl"),
		"a directory":       dir,
	}
	if os.Geteuid() != 0 { // root writes anywhere
		ro := filepath.Join(dir, "ro")
		if err := os.Mkdir(ro, 0o500); err != nil {
			t.Fatal(err)
		}
		paths["read-only directory"] = filepath.Join(ro, "audit.jsonl")
	}
	for name, path := range paths {
		t.Run(name, func(t *testing.T) {
			s, err := OpenSink(path)
			if err == nil {
				closeSink(t, s)
				t.Fatalf("OpenSink(%s) succeeded", path)
			}
			if !strings.Contains(err.Error(), "open audit file") {
				t.Errorf("error %q does not say what failed", err)
			}
		})
	}
}

// TestSinkFullDisk writes to /dev/full, which fails every write with
// ENOSPC: the failures are counted and nothing panics or blocks.
func TestSinkFullDisk(t *testing.T) {
	sink, err := OpenSink("/dev/full")
	if err != nil {
		t.Skipf("no /dev/full: %v", err)
	}
	log := NewLog(NewRing(16, sink.LastSeq()), sink, nil)
	for range 10 {
		log.Record(Record{Kind: KindInput})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := sink.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if sink.Errors() == 0 {
		t.Error("no error counted")
	}
	if got := sink.Dropped(); got != 10 {
		t.Errorf("Dropped() = %d, want 10", got)
	}
	if err := sink.LastError(); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("LastError() = %v, want ENOSPC", err)
	}
	if recs, _, _ := log.Ring().Query(Filter{}); len(recs) != 10 {
		t.Errorf("the ring kept %d records, want 10", len(recs))
	}
	if err := log.Close(ctx); err != nil {
		t.Errorf("Close: %v", err)
	}
}

// fakeFile is a sinkFile whose writes fail, cut short or block on demand.
type fakeFile struct {
	mu      sync.Mutex
	data    bytes.Buffer
	plan    []func(b []byte) (int, error) // one per Write, then plain writes
	entered chan struct{}                 // if set, receives on every Write
	release chan struct{}                 // if set, every Write waits for it
}

func (f *fakeFile) Write(b []byte) (int, error) {
	if f.entered != nil {
		f.entered <- struct{}{}
	}
	if f.release != nil {
		<-f.release
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.plan) > 0 {
		step := f.plan[0]
		f.plan = f.plan[1:]
		n, err := step(b)
		f.data.Write(b[:n])
		return n, err
	}
	return f.data.Write(b)
}

func (f *fakeFile) Sync() error  { return nil }
func (f *fakeFile) Close() error { return nil }

func (f *fakeFile) String() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.data.String()
}

var errDisk = errors.New("disk on fire")

func failing(b []byte) (int, error) { return 0, errDisk }

// half writes half of b, as a disk that fills up mid-write does.
func half(b []byte) (int, error) { return len(b) / 2, errDisk }

func TestSinkWriteFailures(t *testing.T) {
	tests := []struct {
		name        string
		plan        []func([]byte) (int, error)
		wantErrors  uint64
		wantDropped uint64
		wantSeqs    []uint64 // records in the file, each on a whole line
	}{
		{"healthy", nil, 0, 0, span(1, 4)},
		{"first write fails, then recovers", []func([]byte) (int, error){failing}, 1, 1, span(2, 4)},
		{"every write fails", []func([]byte) (int, error){failing, failing, failing, failing}, 4, 4, nil},
		{"short write, then recovers", []func([]byte) (int, error){half}, 1, 1, span(2, 4)},
		{"short writes in a row", []func([]byte) (int, error){half, half}, 2, 2, span(3, 4)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &fakeFile{plan: tt.plan}
			sink := newSink(f, false, 0, false)
			log := NewLog(NewRing(16, 0), sink, nil)
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			for range 4 {
				log.Record(Record{Kind: KindInput, Detail: "one record per write"})
				if err := sink.Flush(ctx); err != nil { // one record per batch
					t.Fatal(err)
				}
			}
			if err := sink.Close(ctx); err != nil {
				t.Fatal(err)
			}
			if sink.Errors() != tt.wantErrors || sink.Dropped() != tt.wantDropped {
				t.Errorf("errors %d dropped %d, want %d %d", sink.Errors(), sink.Dropped(), tt.wantErrors, tt.wantDropped)
			}
			if tt.wantErrors > 0 && !errors.Is(sink.LastError(), errDisk) {
				t.Errorf("LastError() = %v", sink.LastError())
			}
			var got []uint64
			for line := range strings.SplitSeq(strings.TrimSuffix(f.String(), "\n"), "\n") {
				var r Record
				if json.Unmarshal([]byte(line), &r) == nil {
					got = append(got, r.Seq)
				}
			}
			if !slices.Equal(got, tt.wantSeqs) {
				t.Errorf("file holds %v, want %v:\n%s", got, tt.wantSeqs, f.String())
			}
		})
	}
}

// TestSinkQueueFull: a disk that hangs fills the queue; later records are
// dropped from the file (and counted), and recording never waits.
func TestSinkQueueFull(t *testing.T) {
	f := &fakeFile{entered: make(chan struct{}, 1), release: make(chan struct{})}
	sink := newSink(f, false, 0, false)
	log := NewLog(NewRing(16, 0), sink, nil)
	log.Record(Record{})
	<-f.entered // the writer holds record 1 and waits on the disk

	done := make(chan struct{})
	go func() {
		defer close(done)
		for range sinkQueue + 10 {
			log.Record(Record{})
		}
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("recording waited for the disk")
	}
	if got := sink.Dropped(); got != 10 {
		t.Errorf("Dropped() = %d, want 10", got)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	if err := sink.Flush(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Flush on a hung disk returned %v", err)
	}
	cancel()

	close(f.release)
	go func() {
		for range f.entered {
		}
	}()
	closeSink(t, sink)
	close(f.entered)
	if n := strings.Count(f.String(), "\n"); n != sinkQueue+1 {
		t.Errorf("file has %d lines, want %d", n, sinkQueue+1)
	}
	log.Record(Record{})
	if got := sink.Dropped(); got != 11 {
		t.Errorf("a record after Close: Dropped() = %d, want 11", got)
	}
}

// TestSinkOrder: concurrent writers through one Log leave the file in Seq
// order, which is what lets a restart trust its last line.
func TestSinkOrder(t *testing.T) {
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := OpenSink(path)
	if err != nil {
		t.Fatal(err)
	}
	log := NewLog(NewRing(64, 0), sink, nil)
	const writers, each = 8, 300 // within the queue: nothing is dropped
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				log.Record(Record{Kind: KindInput})
			}
		})
	}
	wg.Wait()
	closeSink(t, sink)
	_, recs, bad := readLines(t, path)
	if len(bad) > 0 || !slices.Equal(recs, span(1, writers*each)) {
		t.Errorf("file is not 1..%d in order (%d records, bad lines %v)", writers*each, len(recs), bad)
	}
}

// TestNilSink: a relay without an audit file passes a nil *Sink around.
func TestNilSink(t *testing.T) {
	var s *Sink
	if s.LastSeq() != 0 || s.Errors() != 0 || s.Dropped() != 0 || s.LastError() != nil {
		t.Error("a nil Sink reports something")
	}
	log := NewLog(NewRing(4, s.LastSeq()), s, NewMetrics(nil))
	log.Record(Record{})
	if err := log.Close(context.Background()); err != nil {
		t.Error(err)
	}
}

// TestPrivacyEndToEnd types a password and visits a URL with a token
// through a Log, and checks that neither reaches the ring, the file or the
// HTTP answer.
func TestPrivacyEndToEnd(t *testing.T) {
	const password = "correct-horse-battery-staple"
	const token = "tok_9f8e7d6c5b4a"
	path := filepath.Join(t.TempDir(), "audit.jsonl")
	sink, err := OpenSink(path)
	if err != nil {
		t.Fatal(err)
	}
	log := NewLog(NewRing(16, 0), sink, nil)
	log.Record(Record{Actor: ActorCDPClient, Kind: KindInput, Method: "Input.insertText", Detail: TextLength(password)})
	log.Record(Record{Actor: ActorViewer, Kind: KindInput, Method: "Input.dispatchKeyEvent", Detail: TextLength(password[:1])})
	log.Record(Record{Actor: ActorCDPClient, Kind: KindNavigate, Method: "Page.navigate", Detail: RedactURL("https://u:" + password + "@bank.example/login?token=" + token)})
	// A careless caller that forgets RedactURL is covered too.
	log.Record(Record{Actor: ActorCDPClient, Kind: KindDenied, Method: "Page.navigate", Detail: "fence: https://bank.example/cb?code=" + token + "#pw=" + password})
	log.Record(Record{Actor: ActorCDPClient, Kind: KindDenied, Method: "Runtime.evaluate", Detail: "javascript:login('" + password + "')"})
	closeSink(t, sink)

	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	recs, _, _ := log.Ring().Query(Filter{})
	ring, _ := json.Marshal(recs)
	srv := httpGet(t, log.Ring(), "/v1/audit")
	for where, text := range map[string]string{"file": string(data), "ring": string(ring), "http": srv} {
		for _, secret := range []string{password, token} {
			if strings.Contains(text, secret) {
				t.Errorf("%s holds a secret: %s", where, text)
			}
		}
	}
	if !strings.Contains(string(data), "https://bank.example/login") || !strings.Contains(string(data), "typed 28 characters") {
		t.Errorf("the file lost what may be kept:\n%s", data)
	}
}

// A panic in the file's writer ends the writer, not the process: it is
// counted as a failed write, the records after it are dropped and
// counted, and neither recording nor Flush nor Close waits for it.
func TestSinkWriterPanic(t *testing.T) {
	f := &fakeFile{plan: []func([]byte) (int, error){func([]byte) (int, error) { panic("the disk driver") }}}
	sink := newSink(f, false, 0, false)
	log := NewLog(NewRing(16, 0), sink, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for range 4 {
		log.Record(Record{Kind: KindInput, Detail: "after the panic"})
		if err := sink.Flush(ctx); err != nil {
			t.Fatal(err)
		}
	}
	if sink.Errors() != 1 || sink.Dropped() < 3 {
		t.Errorf("errors %d dropped %d, want 1 and at least 3", sink.Errors(), sink.Dropped())
	}
	if err := sink.Close(ctx); err != nil {
		t.Logf("close: %v", err)
	}
	if got := log.Ring().Last(); got != 4 {
		t.Errorf("the ring's last record is %d, want 4", got)
	}
}
