package owneronly

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"
)

// grantees reads back path's access list: whether it is protected from
// what the folder above grants, and the SIDs it allows.
func grantees(t *testing.T, path string) (protected bool, sids []string) {
	t.Helper()
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		t.Fatal(err)
	}
	control, _, err := sd.Control()
	if err != nil {
		t.Fatal(err)
	}
	dacl, _, err := sd.DACL()
	if err != nil {
		t.Fatal(err)
	}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			t.Fatal(err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			t.Errorf("%s: an entry of type %d", path, ace.Header.AceType)
			continue
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart))
		sids = append(sids, sid.String())
	}
	slices.Sort(sids)
	return control&windows.SE_DACL_PROTECTED != 0, sids
}

func TestACL(t *testing.T) {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{user.User.Sid.String(), "S-1-5-18", "S-1-5-32-544"} // the user, SYSTEM, Administrators
	slices.Sort(want)

	dir := filepath.Join(t.TempDir(), "cdprelay")
	if err := MkdirAll(dir); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "default-guid")
	if err := WriteFile(path, []byte("x")); err != nil {
		t.Fatal(err)
	}
	// A file another part makes in the folder inherits its entries.
	other := filepath.Join(dir, "instances.json")
	if err := os.WriteFile(other, []byte("{}"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{dir, path} {
		protected, sids := grantees(t, p)
		if !protected {
			t.Errorf("%s inherits from the folder above", p)
		}
		if !slices.Equal(sids, want) {
			t.Errorf("%s grants %v, want %v", p, sids, want)
		}
	}
	if _, sids := grantees(t, other); !slices.Equal(sids, want) {
		t.Errorf("%s, made in the folder, grants %v, want %v", other, sids, want)
	}
	for _, p := range []string{dir, path, other} {
		if err := Check(p); err != nil {
			t.Error(err)
		}
	}
	// A file of the temporary folder, as the system made it, lets others
	// than its owner in (an inherited entry for the user's own folder at
	// least names the user; the checks above would pass on such a list
	// only if it named no one else).
	loose := filepath.Join(t.TempDir(), "loose")
	if err := os.WriteFile(loose, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, sids := grantees(t, loose); len(sids) > 3 {
		if err := Check(loose); err == nil {
			t.Errorf("Check passes %s, which grants %v", loose, sids)
		}
	}
}
