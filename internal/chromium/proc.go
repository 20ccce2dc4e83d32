package chromium

import "os"

// A tree is the launched browser's process tree as this platform holds it:
// the browser and every process it starts (renderers, the GPU process, the
// zygote, crash handlers) end together, when Stop ends them and when this
// process dies first, however it dies. Unix: a process group, and a small
// reaper that kills the group when this process is gone (proc_unix.go).
// Windows: a job object that ends its processes when its last handle, this
// process's, is closed (proc_windows.go).
//
// Launch calls newTree (each platform's: it sets the command's
// SysProcAttr) before the browser starts and started once it has; Stop
// calls terminate, kill and release, in that order.
type tree interface {
	// started adopts the started browser. An error means the browser
	// cannot be held: Launch kills it and fails.
	started(p *os.Process) error
	// terminate asks the tree to end: SIGTERM to the group on Unix. Where
	// a browser cannot be asked (Windows), it ends it.
	terminate() error
	// kill ends the whole tree at once. Safe to call when it is gone.
	kill() error
	// release lets go of what holds the tree, once it has ended.
	release()
}
