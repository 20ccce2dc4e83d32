package tiers

import (
	"encoding/json"

	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// What a blind tab shows the client instead of its page.

// BlindFrameTree answers Page.getFrameTree for a blind tab: its main frame
// (targetID) at its origin o (scheme://host, or scheme: alone), and
// nothing of what it shows.
func BlindFrameTree(o, targetID string) map[string]any {
	return map[string]any{"frameTree": map[string]any{"frame": map[string]any{
		"id": targetID, "loaderId": "CDPRELAY", "url": o + "/", "domainAndRegistry": "", "securityOrigin": o,
		"mimeType": "text/html", "secureContextType": "Secure", "crossOriginIsolatedContextType": "NotIsolated",
		"gatedAPIFeatures": []string{},
	}}}
}

// V8's refusal of script with side effects, and what it says on a
// read-only tab: why.
var (
	SideEffectText      = []byte("Possible side-effect in debug-evaluate")
	SideEffectExplained = []byte("Possible side-effect in debug-evaluate (cdprelay: this tab is read-only to automation, so script that could change the page is refused; read through locators)")
)

// BlindHistory reduces the entries of a Page.getNavigationHistory result
// that are on pages automation may not see (blind says which URL is) to
// their origin (api.Origin), with no title. A result it
// cannot read or write is answered with no entries.
func BlindHistory(result []byte, blind func(url string) bool) []byte {
	var h struct {
		CurrentIndex int              `json:"currentIndex"`
		Entries      []map[string]any `json:"entries"`
	}
	if json.Unmarshal(result, &h) != nil {
		return []byte(`{"currentIndex":0,"entries":[]}`)
	}
	for _, e := range h.Entries {
		u, _ := e["url"].(string)
		if !blind(u) {
			continue
		}
		o := api.Origin(u)
		e["url"], e["userTypedURL"], e["title"] = o+"/", o+"/", ""
	}
	b, err := json.Marshal(h)
	if err != nil {
		return []byte(`{"currentIndex":0,"entries":[]}`)
	}
	return b
}
