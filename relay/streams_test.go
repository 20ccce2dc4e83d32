package relay

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/creds"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// A body that echoes a typed secret, read as a stream in pieces so small
// that no piece holds the value whole: what the client puts together
// holds the reference, never the value, and nothing else of the body is
// lost or changed.
func TestStreamPiecesJoinedForTheLock(t *testing.T) {
	const secret = "hunter2-correct-horse"
	body := `<form><input name="password" value="` + secret + `"></form> and the rest of the page`
	var mu sync.Mutex
	at := 0
	handler := func(tabID int, sid, method string, params json.RawMessage) (any, error) {
		if method != "IO.read" {
			return fakeext.DefaultHandler(tabID, sid, method, params)
		}
		var p struct{ Size int }
		json.Unmarshal(params, &p)
		mu.Lock()
		defer mu.Unlock()
		end := min(len(body), at+p.Size)
		piece := body[at:end]
		at = end
		// Chrome gives text as it is, binary as base64: both occur.
		if at%2 == 0 {
			return map[string]any{"data": base64.StdEncoding.EncodeToString([]byte(piece)), "base64Encoded": true, "eof": at == len(body)}, nil
		}
		return map[string]any{"data": piece, "eof": at == len(body)}, nil
	}
	h := newHarness(t, config.Config{})
	h.ext(fakeext.Options{Tabs: twoTabs[:1], Handler: handler})
	c := h.client()
	sess := h.autoAttach(c)[0]
	creds.LockSecret(h.srv.Default(), "site", []byte(secret))
	var got strings.Builder
	for i := 0; i < 1000; i++ {
		res := h.call(c, sess, "IO.read", map[string]any{"handle": "7", "size": 3})
		var r struct {
			Data          string
			Base64Encoded bool
			EOF           bool
		}
		if err := json.Unmarshal(res, &r); err != nil {
			t.Fatal(err)
		}
		data := r.Data
		if r.Base64Encoded {
			d, err := base64.StdEncoding.DecodeString(r.Data)
			if err != nil {
				t.Fatalf("piece %d: %v", i, err)
			}
			data = string(d)
		}
		got.WriteString(data)
		if r.EOF {
			break
		}
	}
	// Reads that would start a piece inside a value, or read one stream
	// as another, are refused while the secret is locked: at an offset
	// (however the key is spelt), or with the handle given twice.
	for _, params := range []string{`{"handle":"7","offset":8,"size":64}`, `{"handle":"7","offs\u0065t":8}`, `{"handle":"8","handle":"7","size":64}`} {
		if m := h.callMsg(c, sess, "IO.read", json.RawMessage(params)); m.Error == nil {
			t.Errorf("IO.read %s: %s", params, m.Raw)
		}
	}
	want := strings.Replace(body, secret, "{{secret:site}}", 1)
	if got.String() != want {
		t.Fatalf("the client put together %q, want %q", got.String(), want)
	}
	for _, m := range c.Messages() {
		if strings.Contains(string(m.Raw), "hunter2") {
			t.Fatalf("a piece of the secret reached the client: %s", m.Raw)
		}
	}
}
