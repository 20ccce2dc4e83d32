package relay

import (
	"context"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/cdprelay/cdprelay/internal/fakeext"
	"github.com/cdprelay/cdprelay/relay/internal/config"
)

// Connections that arrive while the server shuts down are either refused
// or waited for: Close never returns with one still running.
func TestCloseDuringConnects(t *testing.T) {
	t.Parallel()
	srv, err := New(config.Config{})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewServer(srv)
	defer hs.Close()
	base := "ws" + strings.TrimPrefix(hs.URL, "http")
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()

	stop := make(chan struct{})
	var connected atomic.Int64
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				if i%2 == 0 {
					if conn, _, err := websocket.DefaultDialer.DialContext(ctx, base+"/devtools/browser/"+srv.Default().GUID(), nil); err == nil {
						connected.Add(1)
						conn.Close()
					}
				} else if e, err := fakeext.Dial(ctx, base+"/extension/"+srv.Default().GUID(), fakeext.Options{}); err == nil {
					connected.Add(1)
					e.Close()
				}
			}
		}()
	}
	for connected.Load() < 8 && ctx.Err() == nil {
		time.Sleep(time.Millisecond)
	}
	if err := srv.Close(ctx); err != nil {
		t.Errorf("close: %v", err)
	}
	close(stop)
	wg.Wait()
}
