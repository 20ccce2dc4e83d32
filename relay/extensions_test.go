package relay

import "github.com/cdprelay/cdprelay/internal/fakeext"

// extensions are the extensions the relay serves: ours, unbatched and with
// batch frames, and the stock Playwright extension as its documented
// protocol describes it. The key contract tests run against each.
var extensions = []extension{
	{name: "cdprelay"},
	{name: "cdprelay-batches", batches: true},
	{name: "stock", stock: true},
}

type extension struct {
	name    string
	stock   bool
	batches bool // ours, with batch frames both ways
}

// with returns opts for this extension.
func (x extension) with(opts fakeext.Options) fakeext.Options {
	opts.Stock = x.stock
	opts.Batches = x.batches
	return opts
}
