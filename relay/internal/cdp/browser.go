package cdp

import "regexp"

// BrowserInfo is what Browser.getVersion reports of a browser, and what
// an extension says of its own (extension.info).
type BrowserInfo struct {
	Product   string `json:"product"`
	UserAgent string `json:"userAgent"`
	Version   string `json:"version"`
}

var chromeVersion = regexp.MustCompile(`(HeadlessChrome|Chrome|Chromium)/(\d+(?:\.\d+){3})`)

// InfoFromUA derives what Browser.getVersion reports from a user agent
// and, when known, the full version; false when ua names no Chrome.
func InfoFromUA(ua, full string) (BrowserInfo, bool) {
	m := chromeVersion.FindStringSubmatch(ua)
	if m == nil {
		return BrowserInfo{}, false
	}
	version := m[2]
	if full != "" {
		version = full
	}
	// Chrome's own product, headless or not: the user agent says which.
	return BrowserInfo{Product: "Chrome/" + version, UserAgent: ua, Version: version}, true
}

// IsChromeProduct reports whether product names a Chrome with its full
// version, as InfoFromUA makes it.
func IsChromeProduct(product string) bool { return chromeVersion.MatchString(product) }
