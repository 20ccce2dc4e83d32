package relay

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"
	"github.com/cdprelay/cdprelay/relay/internal/ext"

	"github.com/cdprelay/cdprelay/internal/wire"
	"github.com/cdprelay/cdprelay/relay/internal/link"
)

// benchInstance is an instance with an extension and a client whose
// sockets are replaced by drained queues: what remains is the relay's own
// work per message.
func benchInstance(b testing.TB) (*core.Instance, *core.ClientConn, *ext.Conn, func()) {
	return benchInstanceWith(b, config.Config{})
}

func benchInstanceWith(b testing.TB, cfg config.Config) (*core.Instance, *core.ClientConn, *ext.Conn, func()) {
	// The extension here never answers: the relay's own calls give up soon.
	cfg.CallTimeout = 50 * time.Millisecond
	srv, err := New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	in := srv.Default()
	x := ext.New(in, nil, in.Log)
	x.SetReady()
	ctx, cancel := context.WithCancel(context.Background())
	c := &core.ClientConn{Inst: in, P: link.NewPeer(nil, 1<<16, 0), Log: in.Log, Ctx: ctx, Cancel: cancel}
	c.SetExt(x)
	st := in.Lock()
	st.Ext, st.Client = x, c
	t := &core.Tab{Id: 7, TargetID: "T7", State: core.TabAttached}
	st.Tabs[t.Id] = t
	st.NextSession++
	s := core.NewSession("pw-tab-1", t, false)
	t.Session = s
	st.Sessions[s.Id] = s
	in.Unlock()
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for _, p := range []*link.Peer{x.P, c.P} {
		wg.Add(1)
		go func(p *link.Peer) {
			defer wg.Done()
			p.Discard(stop)
		}(p)
	}
	return in, c, x, func() { cancel(); close(stop); wg.Wait() }
}

var (
	benchMethod  = core.LookupMethod([]byte("Runtime.evaluate"))
	benchCommand = []byte(`{"id":42,"method":"Runtime.evaluate","sessionId":"pw-tab-1","params":{"expression":"1","returnByValue":true}}`)
	benchReply   = []byte(`{"id":1,"result":{"result":{"type":"number","value":1,"description":"1"}}}`)
	benchEvent   = []byte(`{"method":"chrome.debugger.onEvent","params":[{"tabId":7},"Runtime.consoleAPICalled",{"type":"log","args":[{"type":"string","value":"hello"}],"executionContextId":1,"timestamp":1764400000000.5}]}`)
)

// BenchmarkForwardCommand: one client command decoded, routed and
// re-framed for the extension.
func BenchmarkForwardCommand(b *testing.B) {
	_, c, x, stop := benchInstance(b)
	defer stop()
	b.SetBytes(int64(len(benchCommand)))
	b.ReportAllocs()
	for b.Loop() {
		k := &c.Cmd
		if err := wire.DecodeCommand(benchCommand, &k.Env); err != nil {
			b.Fatal(err)
		}
		c.Handle(k)
		// The reply never comes: keep the pending map from growing.
		x.Forget(x.LastID())
	}
}

// BenchmarkForwardCommandTiers: the same with a policy that has tiers, on
// a tab of a full site: what the tiers cost a command there.
func BenchmarkForwardCommandTiers(b *testing.B) {
	in, c, x, stop := benchInstanceWith(b, config.Config{Policy: tierPolicy{"ro.example": "read-only", "blind.example": "blind"}})
	defer stop()
	st := in.Lock()
	t := st.Tabs[7]
	t.Url, t.DocURL = "https://a.example/", "https://a.example/"
	st.UpdateAccess(t)
	in.Unlock()
	b.SetBytes(int64(len(benchCommand)))
	b.ReportAllocs()
	for b.Loop() {
		k := &c.Cmd
		if err := wire.DecodeCommand(benchCommand, &k.Env); err != nil {
			b.Fatal(err)
		}
		c.Handle(k)
		x.Forget(x.LastID())
	}
}

// BenchmarkForwardReply: one extension reply matched to its command and
// re-framed for the client.
func BenchmarkForwardReply(b *testing.B) {
	_, c, x, stop := benchInstance(b)
	defer stop()
	s := c.Inst.St.Sessions["pw-tab-1"]
	var m wire.ExtMessage
	b.SetBytes(int64(len(benchReply)))
	b.ReportAllocs()
	for b.Loop() {
		id, err := x.Register(core.PendingCall{Kind: core.CallClient, Client: c, ClientID: 42, ReplyTo: s, Via: s, TabID: 7, Tab: s.Tab, M: benchMethod})
		if err != nil {
			b.Fatal(err)
		}
		if err := wire.DecodeExt(benchReply, &m); err != nil {
			b.Fatal(err)
		}
		m.ID = id
		x.HandleReply(&m)
	}
}

// BenchmarkForwardEvent: one chrome.debugger.onEvent routed to the
// client's session.
func BenchmarkForwardEvent(b *testing.B) {
	_, _, x, stop := benchInstance(b)
	defer stop()
	var m wire.ExtMessage
	b.SetBytes(int64(len(benchEvent)))
	b.ReportAllocs()
	for b.Loop() {
		if err := wire.DecodeExt(benchEvent, &m); err != nil {
			b.Fatal(err)
		}
		x.Handle(&m)
	}
}

var benchExtraInfo = []byte(`{"method":"chrome.debugger.onEvent","params":[{"tabId":7},"Network.requestWillBeSentExtraInfo",{"requestId":"1000.42","associatedCookies":[{"blockedReasons":[],"exemptionReason":"None","cookie":{"name":"sid","value":"3f9c2a7be1d04b6f8a1c5e9d2b7f4a60","domain":"a.example","path":"/","expires":-1,"size":35,"httpOnly":true,"secure":true,"session":true,"sameSite":"Lax","priority":"Medium","sameParty":false,"sourceScheme":"Secure","sourcePort":443}}],"headers":{":authority":"a.example",":method":"GET",":path":"/api/items?page=2",":scheme":"https","accept":"application/json","accept-encoding":"gzip, deflate, br","accept-language":"en-US","cookie":"sid=3f9c2a7be1d04b6f8a1c5e9d2b7f4a60; theme=dark","referer":"https://a.example/","sec-fetch-dest":"empty","sec-fetch-mode":"cors","sec-fetch-site":"same-origin","user-agent":"Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36"},"connectTiming":{"requestTime":12345.678},"clientSecurityState":{"initiatorIsSecureContext":true,"initiatorIPAddressSpace":"Public","privateNetworkRequestPolicy":"PreflightWarn"},"siteHasCookieInOtherPartition":false}]}`)

// BenchmarkForwardEventRedacted: a Network.requestWillBeSentExtraInfo
// with a session cookie, its values replaced on the way to the client.
func BenchmarkForwardEventRedacted(b *testing.B) {
	_, _, x, stop := benchInstance(b)
	defer stop()
	var m wire.ExtMessage
	b.SetBytes(int64(len(benchExtraInfo)))
	b.ReportAllocs()
	for b.Loop() {
		if err := wire.DecodeExt(benchExtraInfo, &m); err != nil {
			b.Fatal(err)
		}
		x.Handle(&m)
	}
}
