package chromium

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// roleEnv makes this test binary play a part in the process-tree tests
// instead of running tests: "browser" (started by Launch, with Chrome's
// flags, it starts a "renderer" and writes both pids into its
// --user-data-dir), "renderer" (sleeps), or "relay" (Launches a browser,
// prints its profile folder, and waits to be killed).
const roleEnv = "CDPRELAY_CHROMIUM_TEST_ROLE"

func TestMain(m *testing.M) {
	switch os.Getenv(roleEnv) {
	case "":
		os.Exit(m.Run())
	case "browser":
		fakeBrowser()
	case "renderer":
		time.Sleep(time.Hour)
	case "relay":
		fakeRelay()
	}
	os.Exit(0)
}

func fakeBrowser() {
	var profile string
	for _, a := range os.Args[1:] {
		if v, ok := strings.CutPrefix(a, "--user-data-dir="); ok {
			profile = v
		}
	}
	child := exec.Command(os.Args[0])
	child.Env = append(os.Environ(), roleEnv+"=renderer")
	if err := child.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "fake browser:", err)
		os.Exit(1)
	}
	pids := fmt.Sprintf("%d %d\n", os.Getpid(), child.Process.Pid)
	tmp := filepath.Join(profile, "pids.tmp")
	if err := os.WriteFile(tmp, []byte(pids), 0o600); err != nil {
		os.Exit(1)
	}
	if err := os.Rename(tmp, filepath.Join(profile, "pids")); err != nil {
		os.Exit(1)
	}
	_ = child.Wait()
}

func fakeRelay() {
	os.Setenv(roleEnv, "browser")
	b, err := Launch(context.Background(), Options{Path: os.Args[0]})
	if err != nil {
		fmt.Println("error", err)
		os.Exit(1)
	}
	fmt.Println("profile", b.UserDataDir())
	time.Sleep(time.Hour)
}

// browserPids waits for the fake browser in profile to say who it is.
func browserPids(t *testing.T, profile string) (browser, renderer int) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(profile, "pids"))
		if err == nil {
			f := strings.Fields(string(b))
			if len(f) == 2 {
				browser, _ = strconv.Atoi(f[0])
				renderer, _ = strconv.Atoi(f[1])
				return browser, renderer
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fake browser never wrote its pids into %s", profile)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitGone waits (generously) until none of pids runs, and fails naming
// those that still do.
func waitGone(t *testing.T, what string, pids map[string]int) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var left []string
		for name, pid := range pids {
			if alive(pid) {
				left = append(left, fmt.Sprintf("%s (pid %d)", name, pid))
			}
		}
		if len(left) == 0 {
			return
		}
		if time.Now().After(deadline) {
			for _, pid := range pids {
				if p, err := os.FindProcess(pid); err == nil {
					p.Kill()
				}
			}
			t.Fatalf("%s, still running: %s", what, strings.Join(left, ", "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStopEndsTheTree: Stop ends the browser and what it started.
func TestStopEndsTheTree(t *testing.T) {
	t.Setenv(roleEnv, "browser")
	b, err := Launch(context.Background(), Options{Path: os.Args[0]})
	if err != nil {
		t.Fatal(err)
	}
	browser, renderer := browserPids(t, b.UserDataDir())
	if browser != b.PID() {
		t.Fatalf("the browser says its pid is %d, Launch says %d", browser, b.PID())
	}
	if err := b.Stop(5 * time.Second); err != nil {
		t.Fatal(err)
	}
	select {
	case <-b.Done():
	default:
		t.Fatal("Stop returned before the browser exited")
	}
	waitGone(t, "after Stop", map[string]int{"browser": browser, "renderer": renderer})
	if _, err := os.Stat(b.UserDataDir()); !os.IsNotExist(err) {
		t.Errorf("the temporary profile %s is still there: %v", b.UserDataDir(), err)
	}
	// Again, and from two goroutines: nothing left to do, nothing fails.
	done := make(chan struct{})
	go func() { b.Stop(time.Second); close(done) }()
	b.Stop(time.Second)
	<-done
}

// TestTreeEndsWithTheRelay: a relay killed outright (no chance to stop
// anything) takes the browser and the processes the browser started with
// it: on Unix the reaper kills the group, on Windows the system closes
// the job.
func TestTreeEndsWithTheRelay(t *testing.T) {
	relay := exec.Command(os.Args[0])
	relay.Env = append(os.Environ(), roleEnv+"=relay")
	out, err := relay.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	relay.Stderr = os.Stderr
	if err := relay.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { relay.Process.Kill(); relay.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the relay said nothing: %v", err)
	}
	profile, ok := strings.CutPrefix(strings.TrimSpace(line), "profile ")
	if !ok {
		t.Fatalf("the relay: %s", line)
	}
	t.Cleanup(func() { os.RemoveAll(profile) })
	browser, renderer := browserPids(t, profile)
	if err := relay.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	relay.Wait()
	waitGone(t, "after the relay was killed", map[string]int{"browser": browser, "renderer": renderer})
}
