package access

import "strings"

// Commands that reach past the tab that carries them: what they read or
// render is judged by what they name or by every frame of the tab.

// bodyMethods read what a request fetched (or sent) by its request id.
var bodyMethods = map[string]bool{
	"Network.getResponseBody": true, "Network.searchInResponseBody": true, "Network.getRequestPostData": true,
	"Network.replayXHR": true, "Network.streamResourceContent": true,
}

// ReadsBody reports whether method reads what a request fetched (or sent)
// by its request id.
func ReadsBody(method string) bool { return bodyMethods[method] }

// storageDomains name their storage by origin or storage key in their
// params, not by the tab that carries them.
var storageDomains = map[string]bool{"Storage.": true, "CacheStorage.": true, "IndexedDB.": true, "DOMStorage.": true}

// NamesStorage reports whether method (Domain.command) is of a domain that
// names its storage by origin or storage key in its params, not by the
// tab that carries it.
func NamesStorage(method string) bool {
	return storageDomains[method[:strings.IndexByte(method, '.')+1]]
}

// pixelMethods are what renders a tab's pixels, blind frames and all.
var pixelMethods = map[string]bool{
	"Page.captureScreenshot": true, "Page.printToPDF": true, "Page.captureSnapshot": true,
	"Page.startScreencast": true, "LayerTree.makeSnapshot": true, "LayerTree.replaySnapshot": true,
	"LayerTree.snapshotCommandLog": true, "LayerTree.profileSnapshot": true,
}

// Pixels reports whether method renders a tab's pixels, blind frames and
// all.
func Pixels(method string) bool { return pixelMethods[method] }

// StorageKeys are where the params of the domains that name their storage
// themselves (NamesStorage) name it: at the top, or in the object of
// StorageObjects.
var (
	StorageKeys    = []string{"origin", "securityOrigin", "storageKey", "topLevelSite"}
	StorageObjects = []string{"storageId", "storageBucket", "bucket"}
)
