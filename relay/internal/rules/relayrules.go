package rules

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	jsonv2 "github.com/go-json-experiment/json"
	"github.com/go-json-experiment/json/jsontext"
)

// The relay's own rules: refusals that hold whatever the operator's policy
// says, because without them a client could go around every other check.
// They run in the policy stage, after the operator's method rules
// (rows.go runs them on the relay's commands).
//
//   - Nested commands. Target.sendMessageToTarget carries a whole CDP
//     command inside a string, and a non-flat session (auto-attach without
//     flatten) delivers and takes its messages that way: neither would pass
//     through the pipeline. Both are refused; flat sessions are what every
//     supported client uses.
//   - Target methods on a tab. Past the ones the relay emulates, a tab's
//     session may send Target.setAutoAttach (flat) and getTargetInfo, and
//     nothing else of the Target domain (TargetOnTab).
//   - Files. DOM.setFileInputFiles and Input.dispatchDragEvent make the
//     page read files of the machine the browser runs on, which a form
//     then sends anywhere. Only files inside the configured upload folders
//     (Policy.UploadDirs) are accepted, after symlinks and ".." are
//     resolved, and they go to Chrome as the resolved paths (resolveUploads,
//     ReplaceFiles). Without folders, uploads are refused.
//   - The relay's own origins. No URL-bearing command goes there
//     (origins.Origins).
//   - Downloads. Browser.setDownloadBehavior and Page.setDownloadBehavior
//     are the relay's to answer (package browser: downloadcalls.go): the folder a
//     client names must be one the operator allows.

// Rule ids of the relay's own rules, the label values of
// cdprelay_policy_refusals_total beside the policy's.
const (
	RuleNested    = "relay:nested-command"
	RuleNonFlat   = "relay:non-flat-session"
	RuleTargetTab = "relay:target-method-on-tab"
	RuleUploads   = "relay:uploads"
)

// Texts of the relay's own refusals, as the client reads them.
const (
	// MsgNested refuses Target.sendMessageToTarget.
	MsgNested = "cdprelay: Target.sendMessageToTarget carries a nested command past the relay's checks; use a flat session (Target.attachToTarget with flatten: true) and send the command on it"
	// MsgNonFlat refuses an auto-attach without flatten.
	MsgNonFlat = "cdprelay: only flat sessions are supported (flatten: true)"
)

// RuleIDs lists the rule ids of the relay's own rules, for counters that
// start at zero.
func RuleIDs() []string { return []string{RuleNested, RuleNonFlat, RuleTargetTab, RuleUploads} }

// MsgTargetTab is the text that refuses method, a Target method a tab's
// session may not send (TargetOnTab).
func MsgTargetTab(method string) string {
	return "cdprelay: " + method + " is not available on a tab's session through the relay"
}

// targetOnTab are the Target methods a tab's session may send to Chrome.
var targetOnTab = map[string]bool{"Target.setAutoAttach": true, "Target.getTargetInfo": true}

// mayTargetOnTab reports whether a tab's session may send Chrome method, a
// Target method the relay does not emulate.
func mayTargetOnTab(method string) bool { return targetOnTab[method] }

// resolveUploads resolves files for an upload and checks that each lies inside
// one of dirs, the upload folders. It returns the resolved paths; its
// error says why a file is refused, in words for the client.
func resolveUploads(dirs, files []string) ([]string, error) {
	if len(dirs) == 0 {
		return nil, errors.New("uploads are off: set uploads_dir in the relay's policy to the folders files may be uploaded from")
	}
	var roots []string
	for _, d := range dirs {
		if r, err := filepath.EvalSymlinks(d); err == nil {
			roots = append(roots, r)
		}
	}
	out := make([]string, 0, len(files))
	for _, f := range files {
		if !filepath.IsAbs(f) {
			return nil, errors.New("an upload needs an absolute path: " + clipPath(f))
		}
		real, err := filepath.EvalSymlinks(filepath.Clean(f))
		if err != nil {
			return nil, errors.New("cannot upload " + clipPath(f) + ": it does not exist on the relay's machine")
		}
		if !inside(real, roots) {
			return nil, errors.New(clipPath(f) + " is outside the upload folders (uploads_dir: " + strings.Join(dirs, ", ") + ")")
		}
		out = append(out, real)
	}
	return out, nil
}

// inside reports whether path lies in one of roots (or is one).
func inside(path string, roots []string) bool {
	for _, r := range roots {
		rel, err := filepath.Rel(r, path)
		if err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(os.PathSeparator)) && !filepath.IsAbs(rel) {
			return true
		}
	}
	return false
}

func clipPath(p string) string {
	if len(p) > 120 {
		return p[:117] + "..."
	}
	return p
}

// ReplaceFiles puts the resolved files in place of the client's in the
// params of method: DOM.setFileInputFiles' files, or else (for
// Input.dispatchDragEvent) its data's.
func ReplaceFiles(method string, params []byte, files []string) ([]byte, error) {
	var m map[string]jsontext.Value
	if params != nil {
		if err := jsonv2.Unmarshal(params, &m); err != nil {
			return nil, err
		}
	}
	if m == nil {
		return nil, errors.New(method + " has no params to put the files in")
	}
	fs, err := jsonv2.Marshal(files)
	if err != nil {
		return nil, err
	}
	if method == "DOM.setFileInputFiles" {
		m["files"] = fs
	} else {
		var data map[string]jsontext.Value
		if err := jsonv2.Unmarshal(m["data"], &data); err != nil {
			return nil, err
		}
		if data == nil {
			return nil, errors.New(method + " has no data to put the files in")
		}
		data["files"] = fs
		if m["data"], err = jsonv2.Marshal(data, jsonv2.Deterministic(true)); err != nil {
			return nil, err
		}
	}
	return jsonv2.Marshal(m, jsonv2.Deterministic(true))
}
