package relay

import "encoding/json"

// noteDownloadBehavior records whether the client asked for download
// events with Browser.setDownloadBehavior, which the relay answers itself:
// the person's Chrome decides where files go, not the client.
func (c *clientConn) noteDownloadBehavior(params []byte) {
	var p struct {
		EventsEnabled bool `json:"eventsEnabled"`
	}
	if params != nil && json.Unmarshal(params, &p) != nil {
		return
	}
	c.inst.mu.Lock()
	c.downloadEvents = p.EventsEnabled
	c.inst.mu.Unlock()
}
