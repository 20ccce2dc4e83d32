package screencast

import (
	"bytes"
	"encoding/base64"
	"image/jpeg"
	"testing"
)

func TestJPEGSize(t *testing.T) {
	for _, sz := range [][2]int{{1, 1}, {16, 9}, {1280, 720}, {333, 4001}} {
		img := testJPEG(t, sz[0], sz[1], 1)
		w, h, ok := jpegSize(img)
		cfg, err := jpeg.DecodeConfig(bytes.NewReader(img))
		if err != nil {
			t.Fatal(err)
		}
		if !ok || w != cfg.Width || h != cfg.Height {
			t.Errorf("%v: jpegSize = %d×%d %v, image/jpeg says %d×%d", sz, w, h, ok, cfg.Width, cfg.Height)
		}
	}
	for _, bad := range [][]byte{nil, {0xFF}, {0xFF, 0xD8}, {0xFF, 0xD8, 0xFF, 0xC0, 0, 1}, []byte("not a jpeg at all"), {0xFF, 0xD8, 0xFF, 0xDA, 0, 4, 0, 0}} {
		if _, _, ok := jpegSize(bad); ok {
			t.Errorf("jpegSize(%x) ok", bad)
		}
	}
}

func TestDecodeFrame(t *testing.T) {
	img := testJPEG(t, 40, 30, 2)
	for _, tc := range []struct {
		name   string
		params []byte
		id     int64
		hasID  bool
		ok     bool
	}{
		{"chrome", frameParams(17, img, testMeta), 17, true, true},
		{"escaped slashes", bytes.ReplaceAll(frameParams(3, img, testMeta), []byte("/"), []byte(`\/`)), 3, true, true},
		{"other order", []byte(`{"sessionId":4,"metadata":{"offsetTop":0,"pageScaleFactor":1,"deviceWidth":800,"deviceHeight":600,"scrollOffsetX":3,"scrollOffsetY":120,"timestamp":1.7e9},"data":"` + base64.StdEncoding.EncodeToString(img) + `"}`), 4, true, true},
		{"no id", []byte(`{"data":"AAAA","metadata":{}}`), 0, false, false},
		{"bad base64", []byte(`{"data":"@@@@","metadata":{},"sessionId":5}`), 5, true, false},
		{"empty data", []byte(`{"data":"","metadata":{},"sessionId":6}`), 6, true, false},
		{"no data", []byte(`{"metadata":{},"sessionId":7}`), 7, true, false},
		{"data not a string", []byte(`{"data":12,"sessionId":8}`), 8, true, false},
		{"bad metadata", []byte(`{"data":"AAAA","metadata":"x","sessionId":9}`), 0, false, false},
		{"not json", []byte(`{"data":"AAAA",`), 0, false, false},
		{"array", []byte(`["data"]`), 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f, id, hasID, err := decodeFrame(tc.params)
			if (err == nil) != tc.ok || hasID != tc.hasID || id != tc.id {
				t.Fatalf("decodeFrame = %v, id %d %v, err %v; want ok %v id %d %v", f != nil, id, hasID, err, tc.ok, tc.id, tc.hasID)
			}
			if tc.ok {
				if !bytes.Equal(f.JPEG, img) || f.Width != 40 || f.Height != 30 || f.Metadata != testMeta {
					t.Errorf("frame = %d bytes %d×%d %+v", len(f.JPEG), f.Width, f.Height, f.Metadata)
				}
			}
		})
	}
}

func FuzzDecodeFrame(f *testing.F) {
	img := testJPEG(f, 8, 8, 1)
	f.Add(frameParams(1, img, testMeta))
	f.Add([]byte(`{"data":"AAAA","metadata":{"deviceWidth":1e400},"sessionId":2}`))
	f.Add([]byte(`{"data":"\u0041AAA","sessionId":-1}`))
	f.Add([]byte(`{"sessionId":1,"data":"/9j/","sessionId":2}`))
	f.Fuzz(func(t *testing.T, params []byte) {
		fr, _, hasID, err := decodeFrame(params)
		if err == nil && (fr == nil || !hasID) {
			t.Fatal("success without a frame or an id")
		}
	})
}

func FuzzJPEGSize(f *testing.F) {
	f.Add(testJPEG(f, 3, 5, 1))
	f.Add([]byte{0xFF, 0xD8, 0xFF, 0xFF, 0xC0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		w, h, ok := jpegSize(b)
		if ok && (w <= 0 || h <= 0) {
			t.Fatalf("ok with %d×%d", w, h)
		}
	})
}
