package audit

import (
	"context"
	"path/filepath"
	"testing"
)

// benchRecord is what the relay records for a denied command: every
// field set, nothing to sanitize.
var benchRecord = Record{
	Instance: "3f9a1c2b7d4e",
	Actor:    ActorCDPClient,
	Kind:     KindDenied,
	Method:   "Runtime.evaluate",
	Target:   "8C1E5F0A9B2D4C6E8F0A1B2C3D4E5F60",
	Outcome:  OutcomeDenied,
	Detail:   "rule runtime-eval",
}

func BenchmarkAppend(b *testing.B) {
	rg := NewRing(DefaultCapacity, 0)
	b.ReportAllocs()
	for b.Loop() {
		rg.Append(benchRecord)
	}
}

func BenchmarkAppendParallel(b *testing.B) {
	rg := NewRing(DefaultCapacity, 0)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			rg.Append(benchRecord)
		}
	})
}

// BenchmarkAppendFollowed has four followers waiting, as with open live
// views of the audit stream.
func BenchmarkAppendFollowed(b *testing.B) {
	rg := NewRing(DefaultCapacity, 0)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	for range 4 {
		sub := rg.Subscribe(0)
		go func() {
			defer func() { done <- struct{}{} }()
			defer sub.Close()
			var buf []Record
			for {
				recs, _, err := sub.Next(ctx, buf)
				if err != nil {
					return
				}
				buf = recs
			}
		}()
	}
	b.ReportAllocs()
	for b.Loop() {
		rg.Append(benchRecord)
	}
	b.StopTimer()
	cancel()
	for range 4 {
		<-done
	}
}

// BenchmarkLogWithSink is the full path: ring, metrics and a file.
func BenchmarkLogWithSink(b *testing.B) {
	sink, err := OpenSink(filepath.Join(b.TempDir(), "audit.jsonl"))
	if err != nil {
		b.Fatal(err)
	}
	log := NewLog(NewRing(DefaultCapacity, 0), sink, NewMetrics(nil))
	b.ReportAllocs()
	for b.Loop() {
		log.Record(benchRecord)
	}
	b.StopTimer()
	if err := log.Close(context.Background()); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(sink.Dropped())/float64(b.N), "dropped/op")
}

// BenchmarkSanitizeDirty is a record whose fields all need work.
func BenchmarkSanitizeDirty(b *testing.B) {
	r := Record{Method: "Page.navigate\n", Detail: "blocked https://u:p@bank.example/login?token=abc#x by fence"}
	b.ReportAllocs()
	for b.Loop() {
		c := r
		c.sanitize()
	}
}
