module github.com/cdprelay/cdprelay/e2e/chromedp-classic

go 1.26.8

require (
	github.com/cdprelay/cdprelay v0.0.0-00010101000000-000000000000
	github.com/chromedp/cdproto v0.159.3
	github.com/chromedp/chromedp v0.23.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/chromedp/sysutil v1.1.0 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gobwas/glob v1.1.0 // indirect
	github.com/gobwas/httphead v0.1.0 // indirect
	github.com/gobwas/pool v0.2.1 // indirect
	github.com/gobwas/ws v1.4.0 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	github.com/prometheus/client_model v0.6.3 // indirect
	github.com/prometheus/common v0.72.0 // indirect
	github.com/prometheus/procfs v0.22.0 // indirect
	golang.org/x/net v0.62.0 // indirect
	golang.org/x/sys v0.49.0 // indirect
	golang.org/x/text v0.43.0 // indirect
	google.golang.org/protobuf v1.36.12 // indirect
)

// The relay under test, from this repository.
replace github.com/cdprelay/cdprelay => ../..

// The main module tests with chromedp v0.23 and a newer cdproto; the classic
// API is tested with the chromedp v0.14 line and the cdproto it was built
// against. Nothing of the relay that this test builds uses cdproto.
replace (
	github.com/chromedp/cdproto => github.com/chromedp/cdproto v0.0.0-20250724212937-08a3db8b4327
	github.com/chromedp/chromedp => github.com/chromedp/chromedp v0.14.2
)
