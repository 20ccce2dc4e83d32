//go:build unix

package chromium

import (
	"errors"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// alive reports whether pid runs: it exists and, where /proc says, is not
// a zombie waiting for a parent that is gone to be reaped.
func alive(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return false
	}
	stat, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return !os.IsNotExist(err)
	}
	// pid (comm) state ...: comm may hold spaces and parentheses.
	s := string(stat)
	if i := strings.LastIndexByte(s, ')'); i >= 0 && i+2 < len(s) {
		return s[i+2] != 'Z'
	}
	return true
}
