package owneronly

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"unsafe"

	"golang.org/x/sys/windows"
)

// attributes are the security attributes of a new owner-only file or
// folder of the current user.
func attributes(dir bool) (*windows.SecurityAttributes, error) {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return nil, fmt.Errorf("current user: %w", err)
	}
	sd, err := windows.SecurityDescriptorFromString(sddl(user.User.Sid.String(), dir))
	if err != nil {
		return nil, fmt.Errorf("security descriptor: %w", err)
	}
	return &windows.SecurityAttributes{
		Length:             uint32(unsafe.Sizeof(windows.SecurityAttributes{})),
		SecurityDescriptor: sd,
	}, nil
}

// createTemp makes a new file, owner-only from its creation: the access
// list is given to CreateFile, so no moment exists when it has the
// folder's.
func createTemp(dir, pattern string) (*os.File, error) {
	sa, err := attributes(false)
	if err != nil {
		return nil, err
	}
	prefix, suffix := pattern, ""
	for i := len(pattern) - 1; i >= 0; i-- {
		if pattern[i] == '*' {
			prefix, suffix = pattern[:i], pattern[i+1:]
			break
		}
	}
	for try := 0; ; try++ {
		name := filepath.Join(dir, prefix+rand.Text()[:12]+suffix)
		p, err := windows.UTF16PtrFromString(name)
		if err != nil {
			return nil, err
		}
		h, err := windows.CreateFile(p, windows.GENERIC_READ|windows.GENERIC_WRITE, 0, sa,
			windows.CREATE_NEW, windows.FILE_ATTRIBUTE_NORMAL, 0)
		if err == windows.ERROR_FILE_EXISTS && try < 100 {
			continue
		}
		if err != nil {
			return nil, &os.PathError{Op: "createfile", Path: name, Err: err}
		}
		return os.NewFile(uintptr(h), name), nil
	}
}

func mkdir(dir string) error {
	sa, err := attributes(true)
	if err != nil {
		return err
	}
	p, err := windows.UTF16PtrFromString(dir)
	if err != nil {
		return err
	}
	if err := windows.CreateDirectory(p, sa); err != nil {
		if err == windows.ERROR_ALREADY_EXISTS {
			return os.ErrExist
		}
		return &os.PathError{Op: "mkdir", Path: dir, Err: err}
	}
	return nil
}

// Check says why path is not owner-only, or nil when it is: every entry
// of its access list that allows anything names the current user, SYSTEM
// or the Administrators group (entries inherited from an owner-only folder
// count, as the file is private while the folder is).
func Check(path string) error {
	user, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return fmt.Errorf("current user: %w", err)
	}
	sd, err := windows.GetNamedSecurityInfo(path, windows.SE_FILE_OBJECT, windows.DACL_SECURITY_INFORMATION)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	dacl, _, err := sd.DACL()
	if err != nil || dacl == nil {
		// No access list at all lets everyone in.
		return fmt.Errorf("%s: no access list: everyone may open it", path)
	}
	allowed := map[string]bool{user.User.Sid.String(): true, "S-1-5-18": true, "S-1-5-32-544": true}
	for i := range uint32(dacl.AceCount) {
		var ace *windows.ACCESS_ALLOWED_ACE
		if err := windows.GetAce(dacl, i, &ace); err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if ace.Header.AceType != windows.ACCESS_ALLOWED_ACE_TYPE {
			continue // a deny entry takes nothing away from privacy
		}
		sid := (*windows.SID)(unsafe.Pointer(&ace.SidStart)).String()
		if !allowed[sid] {
			return fmt.Errorf("%s: its access list lets %s in", path, sid)
		}
	}
	return nil
}
