// Package owneronly writes the files that must stay private to the person
// who runs the relay, and the folders that hold them: the default
// instance's guid and the minted instances (capabilities: whoever reads
// one can pair a browser or drive its tabs), keys, and the state folder.
//
// Owner-only means, on Unix, mode 0600 for a file and 0700 for a folder;
// on Windows, a protected access list (nothing inherited from the folder
// above) that grants full control to the current user, SYSTEM and the
// Administrators group and to no one else: the set Windows' own OpenSSH
// accepts for a private key. SYSTEM and Administrators can read any file
// on the machine in any case (they can take ownership); granting them
// outright keeps backups and an administrator's repairs working.
//
// A file is owner-only from the moment it exists, never widened after:
// WriteFile writes a new file beside the old one and renames it over, so
// a reader sees the old content or the new, never half of either.
package owneronly
