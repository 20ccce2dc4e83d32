//go:build unix && !linux

package chromium

import "syscall"

// setDeathSignal: there is no parent-death signal here; the reaper alone
// ends the group when this process dies.
func setDeathSignal(*syscall.SysProcAttr) {}
