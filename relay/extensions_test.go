package relay

import "github.com/cdprelay/cdprelay/internal/fakeext"

// extensions are the two extensions the relay serves: ours, and the stock
// Playwright extension as its documented protocol describes it. The key
// contract tests run against both.
var extensions = []extension{
	{name: "cdprelay"},
	{name: "stock", stock: true},
}

type extension struct {
	name  string
	stock bool
}

// with returns opts for this extension.
func (x extension) with(opts fakeext.Options) fakeext.Options {
	opts.Stock = x.stock
	return opts
}
