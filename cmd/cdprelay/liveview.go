package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/cdprelay/cdprelay/internal/ingress"
	"github.com/cdprelay/cdprelay/relay"
	"github.com/cdprelay/cdprelay/screencast"
	"github.com/cdprelay/cdprelay/viewer"
)

// liveFlags tune the live view's screencast.
type liveFlags struct {
	fps       float64
	quality   int
	maxWidth  int
	maxHeight int
}

func (lf *liveFlags) register(fs *flag.FlagSet) {
	fs.Float64Var(&lf.fps, "live-fps", 30, "live view: maximum frames per second of each watched tab")
	fs.IntVar(&lf.quality, "live-quality", 70, "live view: JPEG quality of the frames, 1-100")
	fs.IntVar(&lf.maxWidth, "live-max-width", 1920, "live view: widest frame in pixels; larger tabs are scaled down")
	fs.IntVar(&lf.maxHeight, "live-max-height", 1080, "live view: tallest frame in pixels")
}

// newLiveView builds the live view (the page at / and the viewer socket)
// over srv, with its metrics on reg.
func newLiveView(srv *relay.Server, reg prometheus.Registerer, log *slog.Logger, lf liveFlags) (*viewer.Server, error) {
	m, err := screencast.NewMetrics(reg)
	if err != nil {
		return nil, fmt.Errorf("live view metrics: %w", err)
	}
	vs, err := viewer.New(viewer.Config{
		Source: viewer.FromRelay(srv),
		Logger: log.With("component", "liveview"),
		// A viewer's navigate passes the same fence as a client's
		// Page.navigate, under the policy in force at the time.
		URLFence: func(url string) (bool, string) {
			d := srv.Policy().URL("", url)
			return d.Verdict == relay.Allow, d.Message
		},
		// Watching needs the viewer scope; taking over needs
		// viewer-interactive (loopback without tokens has every scope).
		Interactive: func(r *http.Request) bool {
			return ingress.Scopes(r.Context()).Has(ingress.ScopeViewerInteractive) && r.URL.Query().Get("mode") != "view"
		},
		Screencast: screencast.Config{
			MaxFPS:    lf.fps,
			Quality:   lf.quality,
			MaxWidth:  lf.maxWidth,
			MaxHeight: lf.maxHeight,
			Metrics:   m,
		},
	})
	if err != nil {
		return nil, fmt.Errorf("live view: %w", err)
	}
	return vs, nil
}

func closeLiveView(vs *viewer.Server, log *slog.Logger) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := vs.Close(ctx); err != nil {
		log.Warn("closing the live view", "err", err)
	}
}
