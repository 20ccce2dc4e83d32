package relay

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cdprelay/cdprelay/relay/internal/config"
	"github.com/cdprelay/cdprelay/relay/internal/core"

	"github.com/cdprelay/cdprelay/internal/fakeext"
)

// uploadPolicy allows everything and uploads from dir.
type uploadPolicy struct{ dir string }

func (uploadPolicy) Command(string, string, []byte) core.Decision         { return core.Decision{} }
func (uploadPolicy) MethodURL(string, string, string, bool) core.Decision { return core.Decision{} }
func (uploadPolicy) URL(string, string) core.Decision                     { return core.Decision{} }
func (uploadPolicy) FencesNavigation(string) bool                         { return false }
func (p uploadPolicy) UploadDirs(string) []string {
	if p.dir == "" {
		return nil
	}
	return []string{p.dir}
}

func TestRelayRules(t *testing.T) {
	dir := t.TempDir()
	uploads := filepath.Join(dir, "uploads")
	os.Mkdir(uploads, 0o755)
	os.WriteFile(filepath.Join(uploads, "report.pdf"), []byte("ok"), 0o644)
	os.WriteFile(filepath.Join(dir, "secret"), []byte("no"), 0o644)
	os.Symlink(filepath.Join(dir, "secret"), filepath.Join(uploads, "link"))
	realUploads, _ := filepath.EvalSymlinks(uploads)

	h := newHarness(t, config.Config{Policy: uploadPolicy{dir: uploads}})
	e := h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]

	refused := []struct {
		name, method string
		params       any
		want         string
	}{
		{"a nested command", "Target.sendMessageToTarget", map[string]any{"sessionId": sess, "message": `{"id":1,"method":"Network.getAllCookies"}`}, "nested"},
		{"a non-flat auto-attach on a tab", "Target.setAutoAttach", map[string]any{"autoAttach": true, "waitForDebuggerOnStart": false}, "flat"},
		{"flatten spelt otherwise", "Target.setAutoAttach", rawParams(`{"autoAttach":true,"waitForDebuggerOnStart":false,"Flatten":true}`), "flat"},
		{"another Target method on a tab", "Target.exposeDevToolsProtocol", map[string]any{"targetId": tid(1)}, "not available"},
		{"a file outside the folders", "DOM.setFileInputFiles", map[string]any{"files": []string{"/etc/passwd"}, "nodeId": 1}, "outside the upload folders"},
		{"a symlink out of the folder", "DOM.setFileInputFiles", map[string]any{"files": []string{filepath.Join(uploads, "link")}, "nodeId": 1}, "outside"},
		{"dot-dot out of the folder", "DOM.setFileInputFiles", map[string]any{"files": []string{uploads + "/../secret"}, "nodeId": 1}, "outside"},
		{"a relative path", "DOM.setFileInputFiles", map[string]any{"files": []string{"secret"}, "nodeId": 1}, "absolute"},
		{"a dropped file outside", "Input.dispatchDragEvent", map[string]any{"type": "drop", "x": 1, "y": 1, "data": map[string]any{"items": []any{}, "files": []string{"/etc/passwd"}, "dragOperationsMask": 1}}, "outside"},
	}
	for _, tc := range refused {
		before := len(e.Commands())
		m := h.callMsg(c, sess, tc.method, tc.params)
		if m.Error == nil || !strings.Contains(m.Error.Message, tc.want) {
			t.Errorf("%s: %s", tc.name, m.Raw)
		}
		if got := commandsSince(e, before); len(got) != 0 {
			t.Errorf("%s reached the tab: %v", tc.name, got)
		}
	}

	// A file inside goes to Chrome by its resolved path.
	before := len(e.Commands())
	h.call(c, sess, "DOM.setFileInputFiles", map[string]any{"files": []string{uploads + "/./report.pdf"}, "nodeId": 1})
	cmds := commandsSince(e, before)
	if len(cmds) != 1 || !strings.Contains(string(cmds[0].Params), filepath.Join(realUploads, "report.pdf")) || strings.Contains(string(cmds[0].Params), "/./") {
		t.Fatalf("forwarded as %v", cmds)
	}

	// Page.setDownloadBehavior is the relay's: a folder outside the
	// allowed ones is refused, and it never reaches the tab.
	before = len(e.Commands())
	if m := h.callMsg(c, sess, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": "/etc"}); m.Error == nil || !strings.Contains(m.Error.Message, "outside the folders") {
		t.Fatalf("Page.setDownloadBehavior into /etc: %s", m.Raw)
	}
	h.call(c, sess, "Page.setDownloadBehavior", map[string]any{"behavior": "allow", "downloadPath": t.TempDir()})
	if got := commandsSince(e, before); len(got) != 0 {
		t.Fatalf("Page.setDownloadBehavior reached the tab: %v", got)
	}
}

func TestUploadsOffWithoutFolders(t *testing.T) {
	h := newHarness(t, config.Config{Policy: uploadPolicy{}})
	h.ext(fakeext.Options{Tabs: twoTabs[:1]})
	c := h.client()
	sess := h.autoAttach(c)[0]
	m := h.callMsg(c, sess, "DOM.setFileInputFiles", map[string]any{"files": []string{"/etc/hostname"}, "nodeId": 1})
	if m.Error == nil || !strings.Contains(m.Error.Message, "uploads_dir") {
		t.Fatalf("reply %s", m.Raw)
	}
	// Clearing a file input uploads nothing and is allowed.
	if m := h.callMsg(c, sess, "DOM.setFileInputFiles", map[string]any{"files": []string{}, "nodeId": 1}); m.Error != nil {
		t.Fatalf("clearing: %s", m.Raw)
	}
}
