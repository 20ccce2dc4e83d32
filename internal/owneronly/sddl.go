package owneronly

import "fmt"

// sddl is the security descriptor, in Windows' descriptor language, of an
// owner-only file or folder of the user whose SID is user: a protected
// access list (P: nothing inherited from the folder above) of three
// entries granting full control (FA) to that user, SYSTEM (SY) and the
// Administrators group (BA). A folder's entries are inherited by what is
// made in it (OICI: files and folders), so a file another part writes
// there is private too.
func sddl(user string, dir bool) string {
	inherit := ""
	if dir {
		inherit = "OICI"
	}
	return fmt.Sprintf("D:P(A;%[2]s;FA;;;%[1]s)(A;%[2]s;FA;;;SY)(A;%[2]s;FA;;;BA)", user, inherit)
}
