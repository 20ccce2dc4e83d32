package team

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/cdprelay/cdprelay/internal/testenv"
)

// relayNode is one cdprelay serve process of a fleet.
type relayNode struct {
	t    *testing.T
	args []string
	log  string
	cmd  *exec.Cmd
	done chan struct{}
	addr string
}

func (n *relayNode) start(ctx context.Context) {
	n.t.Helper()
	f, err := os.OpenFile(n.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		n.t.Fatal(err)
	}
	n.cmd = exec.Command(n.args[0], n.args[1:]...)
	n.cmd.Stdout, n.cmd.Stderr = f, f
	if err := n.cmd.Start(); err != nil {
		n.t.Fatal(err)
	}
	n.done = make(chan struct{})
	go func() { n.cmd.Wait(); f.Close(); close(n.done) }()
	for {
		resp, err := http.Get("http://" + n.addr + "/favicon.svg")
		if err == nil {
			resp.Body.Close()
			return
		}
		select {
		case <-n.done:
			n.t.Fatalf("node %s exited: %s", n.addr, n.tail())
		case <-ctx.Done():
			n.t.Fatalf("node %s does not serve: %s", n.addr, n.tail())
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// stop ends the node as an operator or Kubernetes does: SIGTERM, and it
// closes every connection with a reason.
func (n *relayNode) stop() {
	if n.cmd == nil {
		return
	}
	n.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-n.done:
	case <-time.After(10 * time.Second):
		n.cmd.Process.Kill()
		<-n.done
		n.t.Errorf("node %s ignored SIGTERM", n.addr)
	}
	n.cmd = nil
}

func (n *relayNode) tail() string {
	b, _ := os.ReadFile(n.log)
	return tail(string(b), 40)
}

// TestFleet: two relay processes behind a real nginx, configured from
// deploy/nginx, each with its --public-url. A browser pairs with node 2
// through the front door; Playwright, given the node's URL only, drives
// it through the front door with the socket /json/version names. Node 1
// going away changes nothing for it; node 2 restarting with its state
// dir brings the extension back through the front door by itself, to
// the same instance, and a client connects again.
func TestFleet(t *testing.T) {
	testenv.SkipOrFail(t, true)
	if testenv.NginxPath() == "" {
		t.Skip("SKIPPED: nginx is not installed (Debian's nginx package; .ci/run installs it): the fleet test needs a real front door")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := testenv.BuildRelay(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	cfg, _ := json.Marshal(teamFile()) // JSON is YAML
	cfgPath := filepath.Join(dir, "config.yaml")
	if err := os.WriteFile(cfgPath, cfg, 0o600); err != nil {
		t.Fatal(err)
	}
	var addrs []string
	for range 2 {
		a, err := testenv.FreeAddr()
		if err != nil {
			t.Fatal(err)
		}
		addrs = append(addrs, a)
	}
	front, err := testenv.StartFrontDoor(ctx, dir, addrs)
	if err != nil {
		t.Fatal(err)
	}
	defer front.Close()
	var nodes []*relayNode
	for i, a := range addrs {
		n := &relayNode{t: t, addr: a, log: filepath.Join(dir, fmt.Sprintf("relay-%d.log", i)), args: []string{
			bin, "serve", "--addr", a, "--config", cfgPath, "--log-level", "debug",
			"--public-url", fmt.Sprintf("%s/relay-%d", front.URL(), i),
			"--state-dir", filepath.Join(dir, fmt.Sprintf("state-%d", i)),
		}}
		n.start(ctx)
		defer n.stop()
		nodes = append(nodes, n)
	}
	defer func() {
		if t.Failed() {
			t.Logf("front door:\n%s", front.Log())
			for i, n := range nodes {
				t.Logf("relay-%d:\n%s", i, n.tail())
			}
		}
	}()
	pages, err := testenv.StartPages()
	if err != nil {
		t.Fatal(err)
	}
	defer pages.Close()

	// Alice pairs with node 2 (relay-1) through the front door.
	node2 := client{t, front.URL() + "/relay-1"}
	info := node2.mint("alice-browser")
	if want := "ws://" + front.Addr + "/relay-1/extension/"; !strings.HasPrefix(info.ExtensionURL, want) {
		t.Fatalf("the extension URL %s does not name node 2 through the front door (%s…)", info.ExtensionURL, want)
	}
	b, err := testenv.StartBrowser(ctx, info.ExtensionURL+"?token=alice-browser", testenv.BrowserOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	node2.waitTabs(ctx, info.InstanceID, "")
	node(t, "fleet.mjs", node2.base, "alice-cdp", pages.Main)
	// The client's socket went through nginx, upgraded there.
	if b, _ := os.ReadFile(filepath.Join(front.Dir, "access.log")); !strings.Contains(string(b), "GET /relay-1/devtools/browser/") || !strings.Contains(string(b), `HTTP/1.1" 101 `) {
		t.Errorf("the front door's log shows no upgraded CDP socket to node 2:\n%s", tail(string(b), 20))
	}

	// Minting at the front door's root lands on a node that answers, and
	// the answer names it.
	root := client{t, front.URL()}
	placed := root.mint("bob-browser")
	if !strings.HasPrefix(placed.CDPURL, "ws://"+front.Addr+"/relay-0/") && !strings.HasPrefix(placed.CDPURL, "ws://"+front.Addr+"/relay-1/") {
		t.Errorf("minted at the root: %s names no node", placed.CDPURL)
	}

	// Node 1 goes away: alice on node 2 carries on; the front door's
	// root mints on node 2 now.
	nodes[0].stop()
	node(t, "fleet.mjs", node2.base, "alice-cdp", pages.Main)
	if again := root.mint("bob-browser"); !strings.HasPrefix(again.CDPURL, "ws://"+front.Addr+"/relay-1/") {
		t.Errorf("minted at the root with node 1 down: %s", again.CDPURL)
	}
	if code, _, _ := (client{t, front.URL() + "/relay-0"}).do("GET", "/json/version", "alice-cdp"); code != http.StatusBadGateway {
		t.Errorf("node 1 through the front door while it is down: %d", code)
	}

	// Node 2 restarts with its state dir: the extension comes back
	// through the front door by itself, to the same instance and guid.
	nodes[1].stop()
	start := time.Now()
	nodes[1].start(ctx)
	st := node2.waitTabs(ctx, info.InstanceID, "")
	t.Logf("node 2 restarted; alice's extension was back %v later", time.Since(start).Round(time.Millisecond))
	if st.Tenant != "alice" {
		t.Errorf("after the restart the instance is %q's", st.Tenant)
	}
	_, body, _ := node2.do("GET", "/json/version", "alice-cdp")
	if !strings.Contains(body, info.CDPURL) {
		t.Errorf("after the restart alice's discovery: %s, want %s", body, info.CDPURL)
	}
	node(t, "fleet.mjs", node2.base, "alice-cdp", pages.Main)

	// The live view through the front door, under node 2's prefix: its
	// page, its socket, alice's tab on the canvas.
	node(t, "team.mjs", "drive", node2.base, "alice-cdp", pages.Main+"/")
	node(t, "team.mjs", "liveview", b.WS, node2.base, "alice-watch", pages.Main+"/", pages.Other, filepath.Join(dir, "fleet-liveview.png"))

	// The guid is the same capability it was: bob still cannot reach it.
	_, body, _ = node2.do("GET", "/cdp/"+info.CDPURL[strings.LastIndex(info.CDPURL, "/")+1:]+"/json/version", "bob-cdp")
	if body != "404 page not found\n" {
		t.Errorf("bob on alice's instance after the restart: %q", body)
	}
}
