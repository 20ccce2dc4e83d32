package rules

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// TestUploads: a file goes to Chrome only from inside an upload folder, by
// its resolved path; a symlink or ".." out of the folder, a relative path,
// a file that does not exist and any file without folders are refused in
// words.
func TestUploads(t *testing.T) {
	dir := t.TempDir()
	uploads := filepath.Join(dir, "uploads")
	if err := os.Mkdir(uploads, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, body := range map[string]string{filepath.Join(uploads, "report.pdf"): "ok", filepath.Join(dir, "secret"): "no"} {
		if err := os.WriteFile(name, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(dir, "secret"), filepath.Join(uploads, "link")); err != nil {
		t.Skip("no symlinks here:", err)
	}
	real, err := filepath.EvalSymlinks(filepath.Join(uploads, "report.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name  string
		dirs  []string
		files []string
		want  []string // the resolved paths, or nil when refused
		says  string   // in the refusal's words
	}{
		{"inside", []string{uploads}, []string{filepath.Join(uploads, "report.pdf")}, []string{real}, ""},
		{"inside, spelt with a dot", []string{uploads}, []string{uploads + "/./report.pdf"}, []string{real}, ""},
		{"the folder's own name through a second one", []string{dir + "/none", uploads}, []string{filepath.Join(uploads, "report.pdf")}, []string{real}, ""},
		{"no folders", nil, []string{filepath.Join(uploads, "report.pdf")}, nil, "uploads_dir"},
		{"outside", []string{uploads}, []string{"/etc/passwd"}, nil, "outside the upload folders"},
		{"a symlink out", []string{uploads}, []string{filepath.Join(uploads, "link")}, nil, "outside"},
		{"dot-dot out", []string{uploads}, []string{uploads + "/../secret"}, nil, "outside"},
		{"a relative path", []string{uploads}, []string{"secret"}, nil, "absolute"},
		{"a file that is not there", []string{uploads}, []string{filepath.Join(uploads, "gone")}, nil, "does not exist"},
		{"one bad among good", []string{uploads}, []string{filepath.Join(uploads, "report.pdf"), "/etc/passwd"}, nil, "outside"},
		{"a long path clipped", []string{uploads}, []string{"/" + strings.Repeat("x", 300)}, nil, "..."},
	} {
		got, err := resolveUploads(tc.dirs, tc.files)
		switch {
		case tc.want == nil && err == nil:
			t.Errorf("%s: taken as %v", tc.name, got)
		case tc.want == nil && !strings.Contains(err.Error(), tc.says):
			t.Errorf("%s: %v, want it to say %q", tc.name, err, tc.says)
		case tc.want == nil && len(err.Error()) > 400:
			t.Errorf("%s: the refusal is %d bytes long", tc.name, len(err.Error()))
		case tc.want != nil && (err != nil || !slices.Equal(got, tc.want)):
			t.Errorf("%s: %v, %v; want %v", tc.name, got, err, tc.want)
		}
	}
}

// replaceCases are a client's params of the two commands that upload.
var replaceCases = []struct {
	method, params string
	ok             bool
}{
	{"DOM.setFileInputFiles", `{"files":["/etc/passwd"],"nodeId":1}`, true},
	{"DOM.setFileInputFiles", `{"files":["a"],"backendNodeId":7,"objectId":"x"}`, true},
	{"Input.dispatchDragEvent", `{"type":"drop","x":1,"y":1,"data":{"items":[],"files":["/etc/passwd"],"dragOperationsMask":1}}`, true},
	{"Input.dispatchDragEvent", `{"type":"drop","x":1,"y":1}`, false},
	{"Input.dispatchDragEvent", `{"type":"drop","data":null}`, false},
	{"Input.dispatchDragEvent", `{"type":"drop","data":[1]}`, false},
	{"DOM.setFileInputFiles", `null`, false},
	{"DOM.setFileInputFiles", ``, false},
	{"DOM.setFileInputFiles", `[1,2]`, false},
	{"DOM.setFileInputFiles", `{"files":`, false},
}

// checkReplaced checks that out is params with the files replaced, and
// nothing else changed.
func checkReplaced(t *testing.T, method, params string, out []byte, files []string) {
	t.Helper()
	var in, got map[string]jsontext.Value
	if err := jsonv2.Unmarshal([]byte(params), &in); err != nil {
		t.Fatalf("%s %s: %v", method, params, err)
	}
	if err := jsonv2.Unmarshal(out, &got); err != nil {
		t.Fatalf("%s %s gave %s: %v", method, params, out, err)
	}
	same := func(what string, a, b map[string]jsontext.Value) {
		if len(a) != len(b) {
			t.Errorf("%s %s: %s changed: %s", method, params, what, out)
		}
		for k, v := range a {
			x, y := v.Clone(), b[k].Clone()
			if x.Compact() != nil || y.Compact() != nil || !slices.Equal(x, y) {
				t.Errorf("%s %s: %s.%s changed to %s", method, params, what, k, b[k])
			}
		}
	}
	inHolder, gotHolder := in, got
	if method != "DOM.setFileInputFiles" {
		inHolder, gotHolder = nil, nil
		if jsonv2.Unmarshal(in["data"], &inHolder) != nil || jsonv2.Unmarshal(got["data"], &gotHolder) != nil {
			t.Fatalf("%s %s gave %s", method, params, out)
		}
		delete(in, "data")
		delete(got, "data")
		same("the params", in, got)
	}
	var put []string
	if err := jsonv2.Unmarshal(gotHolder["files"], &put); err != nil || !slices.Equal(put, files) {
		t.Errorf("%s %s: files %s, want %v", method, params, gotHolder["files"], files)
	}
	delete(inHolder, "files")
	delete(gotHolder, "files")
	same("what holds the files", inHolder, gotHolder)
}

func TestReplaceFiles(t *testing.T) {
	files := []string{"/srv/uploads/report.pdf"}
	for _, tc := range replaceCases {
		var params []byte
		if tc.params != "" {
			params = []byte(tc.params)
		}
		out, err := ReplaceFiles(tc.method, params, files)
		if (err == nil) != tc.ok {
			t.Errorf("ReplaceFiles(%s, %s) = %s, %v", tc.method, tc.params, out, err)
			continue
		}
		if tc.ok {
			checkReplaced(t, tc.method, tc.params, out, files)
		}
	}
}

// FuzzReplaceFiles: whatever the client's params, nothing panics, and
// what is taken holds the resolved files where Chrome reads them.
func FuzzReplaceFiles(f *testing.F) {
	for _, tc := range replaceCases {
		f.Add(tc.method == "DOM.setFileInputFiles", tc.params, "/srv/uploads/a b.pdf")
	}
	f.Fuzz(func(t *testing.T, input bool, params, file string) {
		method := "Input.dispatchDragEvent"
		if input {
			method = "DOM.setFileInputFiles"
		}
		files := []string{file}
		out, err := ReplaceFiles(method, []byte(params), files)
		if err != nil {
			return
		}
		if !jsontext.Value(params).IsValid() {
			// The decoder took what is not plain JSON (e.g. a
			// duplicate name): the result must still be an object.
			var m map[string]jsontext.Value
			if jsonv2.Unmarshal(out, &m) != nil {
				t.Fatalf("%s %q gave %s", method, params, out)
			}
			return
		}
		checkReplaced(t, method, params, out, files)
	})
}

func TestTargetOnTab(t *testing.T) {
	for m, want := range map[string]bool{
		"Target.setAutoAttach": true, "Target.getTargetInfo": true,
		"Target.exposeDevToolsProtocol": false, "Target.sendMessageToTarget": false, "Target.createTarget": false, "": false,
	} {
		if mayTargetOnTab(m) != want {
			t.Errorf("mayTargetOnTab(%q) = %v", m, !want)
		}
	}
	if !strings.Contains(MsgTargetTab("Target.x"), "Target.x") {
		t.Error("the refusal does not name the method")
	}
}
