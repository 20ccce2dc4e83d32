package testenv

import (
	"embed"
	"io/fs"
	"os"
	"path/filepath"
)

// The person's other extensions, as the tests stand in for them (loaded
// with Options.StandIns):
//
//   - a password manager whose inline menu is a frame of its own next to
//     each password field (standins/passwordmanager), inserted when the
//     page loads or when the field gets focus, in the light DOM or inside a
//     closed shadow root, as 1Password's and Bitwarden's are: Chrome
//     detaches chrome.debugger from a tab that shows such a frame. It
//     comes only to the pages' /login.html, so that the other tests' login
//     forms (the secrets tests') are not its;
//   - the stock Playwright extension as its protocol is documented, with
//     its habits: no keepalive of its own, no tab removals forwarded
//     (standins/stock). Its connect page, connect.html?mcpRelayUrl=…&url=…,
//     shares the tab that shows url.

//go:embed standins
var standIns embed.FS

// The stand-ins' extension ids, which Chrome derives from the keys in
// their manifests.
const (
	PasswordManagerID = "fmagnefgknhjljmchkoadfghkckmkich"
	StockStandInID    = "cfjffnoliapajfagdccmcjfdcdmjmdgn"
)

// writeStandIns writes the stand-ins under dir and returns their folders.
func writeStandIns(dir string) ([]string, error) {
	var out []string
	for _, name := range []string{"passwordmanager", "stock"} {
		sub, err := fs.Sub(standIns, "standins/"+name)
		if err != nil {
			return nil, err
		}
		target := filepath.Join(dir, name)
		if err := os.CopyFS(target, sub); err != nil {
			return nil, err
		}
		out = append(out, target)
	}
	return out, nil
}
