module github.com/cdprelay/cdprelay

go 1.26.8

require (
	github.com/chromedp/cdproto v0.159.3 // indirect
	github.com/go-json-experiment/json v0.0.0-20260213210345-44df1a37e875 // indirect
	github.com/gorilla/websocket v1.5.3 // indirect
)
