package screencast

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/cputime"
)

// nopSession answers every command at once, as cheaply as possible.
type nopSession struct{}

func (nopSession) Call(context.Context, string, any) (json.RawMessage, error) {
	return nil, nil
}

// pageJPEG is a 1280×720 frame with the texture of a real page (flat
// areas, lines of "text"), about the size Chrome sends at quality 70.
func pageJPEG(b *testing.B) []byte {
	img := image.NewRGBA(image.Rect(0, 0, 1280, 720))
	for y := range 720 {
		for x := range 1280 {
			c := color.RGBA{250, 250, 250, 255}
			if y%24 < 14 && (x/7+y/24)%9 != 0 && x > 40 && x < 1100 && (x/3)%3 != 0 {
				c = color.RGBA{30, 30, 40, 255}
			}
			if y < 60 {
				c = color.RGBA{20, 90, 200, 255}
			}
			img.Set(x, y, c)
		}
	}
	var buf bytes.Buffer
	if err := jpeg.Encode(&buf, img, &jpeg.Options{Quality: 70}); err != nil {
		b.Fatal(err)
	}
	return buf.Bytes()
}

func cpuTime() time.Duration { return cputime.Process() }

// BenchmarkFanOut: one tab fanned out to n healthy subscribers plus one
// frozen one that never takes a frame. Each op is one frame from the
// relay's HandleEvent (base64 and all) to every healthy subscriber's
// Take. rate=60fps is Chrome's fastest on an animated page; rate=1000fps
// publishes a frame every millisecond, to show the headroom.
//
// Reported: delivered/sub (fraction of frames each healthy subscriber
// got), p50-µs and p99-µs (HandleEvent to Take), cpu-ns/frame/sub (process
// CPU per frame per subscriber, frozen included).
func BenchmarkFanOut(b *testing.B) {
	img := pageJPEG(b)
	params := frameParams(1, img, testMeta)
	b.Logf("frame: %d bytes of JPEG, %d bytes of event params", len(img), len(params))
	for _, fps := range []int{60, 1000} {
		for _, n := range []int{1, 10, 100} {
			b.Run(fmt.Sprintf("rate=%dfps/subs=%d+1frozen", fps, n), func(b *testing.B) {
				benchFanOut(b, params, n, time.Second/time.Duration(fps))
			})
		}
	}
}

func benchFanOut(b *testing.B, params []byte, n int, every time.Duration) {
	tap, err := New(nopSession{}, Config{MaxFPS: 1000, NoFramesAfter: time.Hour})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { tap.Close(); <-tap.Done() }()
	frozen, _ := tap.Subscribe()
	defer frozen.Close()

	sendAt := make([]time.Time, b.N+1)
	type result struct {
		got int
		lat []time.Duration
	}
	results := make([]result, n)
	var wg sync.WaitGroup
	last := uint64(b.N)
	for i := range n {
		sub, _ := tap.Subscribe()
		sub.Take() // the subscribe signal
		results[i].lat = make([]time.Duration, 0, b.N)
		wg.Go(func() {
			defer sub.Close()
			r := &results[i]
			for {
				<-sub.Ready()
				f, _, _ := sub.Take()
				if f == nil {
					continue
				}
				r.got++
				r.lat = append(r.lat, time.Since(sendAt[f.Seq]))
				if f.Seq == last {
					return
				}
			}
		})
	}

	tick := time.NewTicker(every)
	defer tick.Stop()
	cpu0 := cpuTime()
	b.ResetTimer()
	for i := 1; i <= b.N; i++ {
		<-tick.C
		sendAt[i] = time.Now()
		tap.HandleEvent(Event{Method: EventFrame, Params: params})
	}
	wg.Wait()
	b.StopTimer()
	cpu := cpuTime() - cpu0

	var lat []time.Duration
	got := 0
	for _, r := range results {
		got += r.got
		lat = append(lat, r.lat...)
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		if len(lat) == 0 {
			return 0
		}
		return float64(lat[int(p*float64(len(lat)-1))].Microseconds())
	}
	b.ReportMetric(float64(got)/float64(n)/float64(b.N), "delivered/sub")
	b.ReportMetric(pct(0.50), "p50-µs")
	b.ReportMetric(pct(0.99), "p99-µs")
	b.ReportMetric(float64(cpu.Nanoseconds())/float64(b.N)/float64(n+1), "cpu-ns/frame/sub")
	if d := frozen.Dropped(); d < uint64(b.N-1) {
		b.Errorf("frozen subscriber dropped only %d of %d", d, b.N)
	}
}

// BenchmarkDecodeFrame is the per-frame cost paid once per tap, whatever
// the number of subscribers: validate, find and base64-decode the image.
func BenchmarkDecodeFrame(b *testing.B) {
	params := frameParams(1, pageJPEG(b), testMeta)
	b.SetBytes(int64(len(params)))
	for b.Loop() {
		if _, _, _, err := decodeFrame(params); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkOfferTake is the per-subscriber cost of one frame: the slot
// handoff and its signal, without the decode.
func BenchmarkOfferTake(b *testing.B) {
	tap, err := New(nopSession{}, Config{})
	if err != nil {
		b.Fatal(err)
	}
	defer func() { tap.Close(); <-tap.Done() }()
	sub, _ := tap.Subscribe()
	defer sub.Close()
	f := &Frame{}
	for b.Loop() {
		sub.offer(f)
		<-sub.Ready()
		sub.Take()
	}
}
