package chromium

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobTree is a job object that kills its processes when its last handle is
// closed. This process holds the only one (it is not inherited), so the
// system closes it, and ends the browser with every process it started
// (they join the job with it), when this process exits, however it exits.
//
// The browser starts suspended and is resumed once it is in the job, so
// that nothing it starts escapes the job before it is there. A process it
// starts asking to leave the job (CREATE_BREAKAWAY_FROM_JOB) may: refused,
// its start would fail; every other process it starts stays in.
type jobTree struct {
	log *slog.Logger // static

	mu  sync.Mutex
	job windows.Handle // guarded by mu; 0 once released
}

func newTree(cmd *exec.Cmd, log *slog.Logger) (tree, error) {
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return nil, fmt.Errorf("create job object: %w", err)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE | windows.JOB_OBJECT_LIMIT_BREAKAWAY_OK,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return nil, fmt.Errorf("job object limits: %w", err)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{CreationFlags: windows.CREATE_SUSPENDED}
	return &jobTree{log: log, job: job}, nil
}

func (t *jobTree) started(p *os.Process) error {
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err != nil {
		return fmt.Errorf("open browser process: %w", err)
	}
	defer windows.CloseHandle(h)
	t.mu.Lock()
	err = windows.AssignProcessToJobObject(t.job, h)
	t.mu.Unlock()
	if err != nil {
		return fmt.Errorf("put the browser in a job object: %w", err)
	}
	return resumeProcess(uint32(p.Pid))
}

// resumeProcess resumes the threads of a process started suspended (its
// main thread: the process has run nothing yet).
func resumeProcess(pid uint32) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return fmt.Errorf("list threads: %w", err)
	}
	defer windows.CloseHandle(snap)
	entry := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := 0
	for err = windows.Thread32First(snap, &entry); err == nil; err = windows.Thread32Next(snap, &entry) {
		if entry.OwnerProcessID != pid {
			continue
		}
		th, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, entry.ThreadID)
		if err != nil {
			return fmt.Errorf("open browser thread: %w", err)
		}
		_, err = windows.ResumeThread(th)
		windows.CloseHandle(th)
		if err != nil {
			return fmt.Errorf("resume browser thread: %w", err)
		}
		resumed++
	}
	if !errors.Is(err, windows.ERROR_NO_MORE_FILES) {
		return fmt.Errorf("list threads: %w", err)
	}
	if resumed == 0 {
		return errors.New("resume browser: it has no thread")
	}
	return nil
}

// terminate ends the tree: a browser without a window has no way to be
// asked to close here.
func (t *jobTree) terminate() error { return t.kill() }

func (t *jobTree) kill() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job == 0 {
		return nil
	}
	return windows.TerminateJobObject(t.job, 1)
}

func (t *jobTree) release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.job != 0 {
		windows.CloseHandle(t.job)
		t.job = 0
	}
}
