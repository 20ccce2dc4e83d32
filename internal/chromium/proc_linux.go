package chromium

import "syscall"

// setDeathSignal has the kernel kill the browser's main process when the
// thread that started it ends, before the reaper has started too.
func setDeathSignal(attr *syscall.SysProcAttr) { attr.Pdeathsig = syscall.SIGKILL }
