// Package leakcheck fails a test binary whose goroutines outlive its tests:
// every connection, tap and follower must be gone once its owner is
// closed. A leak of one goroutine per connection passes every functional
// test and ends a relay after days; this check finds it in seconds.
package leakcheck
