package main

import (
	"flag"

	"github.com/cdprelay/cdprelay/screencast"
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

func (lf liveFlags) screencast() screencast.Config {
	return screencast.Config{MaxFPS: lf.fps, Quality: lf.quality, MaxWidth: lf.maxWidth, MaxHeight: lf.maxHeight}
}
