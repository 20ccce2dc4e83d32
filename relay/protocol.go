package relay

import (
	"encoding/json"
	"strings"
	"sync"

	"github.com/cdprelay/cdprelay/relay/internal/cdp"
)

// /json/protocol.
//
// Chrome serves its protocol description there, and chrome-remote-interface
// fetches it by default to build its Domain.method helpers before it
// connects. The relay cannot ask the person's Chrome for it (no extension
// API gives it), so it serves the commands and events that cdproto knows,
// by name: enough for every helper a client builds from the description,
// without Chrome's parameter and type schemas (cdp/protocol.go). A newer
// Chrome's methods that the list lacks still work when sent by name.

var protocolJSON = sync.OnceValue(func() []byte {
	type member struct {
		Name string `json:"name"`
	}
	type domain struct {
		Domain   string   `json:"domain"`
		Commands []member `json:"commands"`
		Events   []member `json:"events"`
	}
	var domains []*domain
	byName := map[string]*domain{}
	for _, n := range cdp.Names() {
		dn, mn, _ := strings.Cut(n.Method, ".")
		d := byName[dn]
		if d == nil {
			d = &domain{Domain: dn, Commands: []member{}, Events: []member{}}
			byName[dn] = d
			domains = append(domains, d)
		}
		if !n.Event {
			d.Commands = append(d.Commands, member{mn})
		} else {
			d.Events = append(d.Events, member{mn})
		}
	}
	b, _ := json.Marshal(map[string]any{
		"version": map[string]string{"major": "1", "minor": "3"},
		"domains": domains,
	})
	return b
})
