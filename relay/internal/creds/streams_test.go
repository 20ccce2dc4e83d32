package creds

import (
	"encoding/base64"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/secrets"
)

// FuzzStreamPieces: whatever the body and however it is cut, what the
// client puts together is the body with the lock's values replaced, and
// no value stands between two references.
func FuzzStreamPieces(f *testing.F) {
	f.Add([]byte("hunter2-correct-horse"), []byte(`<input value="hunter2-correct-horse">`), []byte{3, 1, 7})
	f.Add([]byte("pw12"), []byte("pw1pw12pw12pw"), []byte{1})
	// The base64 of the value, cut inside the run at every place.
	f.Add([]byte("hunter2-correct-horse"), []byte("x aHVudGVyMi1jb3JyZWN0LWhvcnNl y"), []byte{38 % 16, 39 % 16, 2})
	f.Fuzz(func(t *testing.T, secret, body, cuts []byte) {
		if len(secret) < 4 || len(cuts) == 0 {
			return
		}
		l := (*secrets.Lock)(nil).Add("s", secret)
		var s Streams
		var got []byte
		for at, i := 0, 0; ; i++ {
			if i > 2*len(body)+4 {
				t.Fatal("the stream never ended")
			}
			size := int(cuts[i%len(cuts)])%16 + 1
			end := min(len(body), at+size)
			// Chrome says eof with the last data, or (as it does) with an
			// empty read after it.
			eof := end == len(body) && (cuts[0]%2 == 0 || at == end)
			res, _ := json.Marshal(map[string]any{"data": base64.StdEncoding.EncodeToString(body[at:end]), "base64Encoded": true, "eof": eof})
			at = end
			s.NoteRead(int64(i), "h")
			out, ok := s.Piece(int64(i), res, l)
			if !ok {
				t.Fatalf("piece %d not read: %s", i, res)
			}
			var r struct {
				Data string
				EOF  bool
			}
			json.Unmarshal(out, &r)
			d, err := base64.StdEncoding.DecodeString(r.Data)
			if err != nil {
				t.Fatal(err)
			}
			if r.EOF && len(d) > 0 {
				t.Fatalf("data with eof: %q", d)
			}
			got = append(got, d...)
			if r.EOF {
				break
			}
		}
		if want := l.Replace(nil, body); string(got) != string(want) {
			t.Fatalf("put together %q, the body replaced whole is %q", got, want)
		}
		for _, piece := range strings.Split(string(got), secrets.Ref("s")) {
			if strings.Contains(piece, string(secret)) {
				t.Fatalf("the value in %q (body %q)", got, body)
			}
		}
	})
}
