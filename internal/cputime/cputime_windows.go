package cputime

import (
	"time"

	"golang.org/x/sys/windows"
)

// Process is the user plus system CPU time this process has used; 0 when
// the system does not say.
func Process() time.Duration {
	var created, exited, kernel, user windows.Filetime
	if err := windows.GetProcessTimes(windows.CurrentProcess(), &created, &exited, &kernel, &user); err != nil {
		return 0
	}
	// Filetimes count 100 ns.
	ticks := func(f windows.Filetime) int64 { return int64(f.HighDateTime)<<32 | int64(f.LowDateTime) }
	return time.Duration((ticks(kernel) + ticks(user)) * 100)
}
