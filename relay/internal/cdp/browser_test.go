package cdp

import "testing"

func TestInfoFromUA(t *testing.T) {
	tests := []struct {
		ua, full string
		want     BrowserInfo
		ok       bool
	}{
		{
			ua:   "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/156.0.0.0 Safari/537.36",
			full: "156.0.8078.108",
			want: BrowserInfo{Product: "Chrome/156.0.8078.108", Version: "156.0.8078.108"},
			ok:   true,
		},
		{
			// Not a secure context: the reduced version is all there is.
			ua:   "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36",
			want: BrowserInfo{Product: "Chrome/156.0.0.0", Version: "156.0.0.0"},
			ok:   true,
		},
		{ua: "Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0"},
		{ua: ""},
	}
	for _, tt := range tests {
		got, ok := InfoFromUA(tt.ua, tt.full)
		tt.want.UserAgent = tt.ua
		if ok != tt.ok || (ok && got != tt.want) {
			t.Errorf("InfoFromUA(%q, %q) = %+v, %t; want %+v, %t", tt.ua, tt.full, got, ok, tt.want, tt.ok)
		}
	}
}

func FuzzInfoFromUA(f *testing.F) {
	f.Add("Mozilla/5.0 HeadlessChrome/156.0.0.0 Safari/537.36", "156.0.8078.108")
	f.Add("Chrome/1.2.3.4", "")
	f.Add("", "")
	f.Fuzz(func(t *testing.T, ua, full string) {
		info, ok := InfoFromUA(ua, full)
		if ok && (info.UserAgent != ua || info.Version == "" || info.Product == "") {
			t.Fatalf("InfoFromUA(%q, %q) = %+v", ua, full, info)
		}
	})
}
