package core

import (
	"github.com/cdprelay/cdprelay/relay/internal/api"
)

// Lines: the order of a client's commands for a tab around a held one.
// The lines themselves, and what takes commands off them, are a part of
// the core in a package of its own (relay/internal/lines), which says
// how; here are what the core and the stages name of them: a held
// command (HeldCmd) and its line (LineKey), and the hooks the core calls
// (Lines). The asking of the person, which holds a command at the head of
// its line, is the person's stage's (relay/internal/person: asking.go).

// LineKey names a line of commands kept in order: one client's commands
// for one tab (nil: commands that reach no tab).
type LineKey struct {
	C   *ClientConn
	Tab *Tab
}

type holdStage uint8

const (
	HoldWaiting  holdStage = iota // behind another: judged when its turn comes
	HoldProbing                   // the relay looks at the page, to describe or judge it
	HoldAsked                     // shown to a person, waiting for their answer
	HoldApproved                  // approved: judged again, the question not asked again
	HoldDenied                    // denied: its error is due
)

// SeenTarget is what the relay saw where a command acts when it asked a
// person about it: looked at again when the person approves.
type SeenTarget struct {
	OK     bool // the page could be looked at
	Target api.PointTarget
	Node   int64 // Chrome's backendNodeId of the element; 0 if unknown
	Via    *Session
}

// HeldCmd is a command in a line. Its fields are guarded by the
// instance's mutex; Cmd belongs to whoever takes it off the line.
type HeldCmd struct {
	Key    LineKey
	Cmd    Cmd
	Method string // k's, for records while k is being judged
	Stage  holdStage
	// Running: a line's task is judging k now, and answers it.
	Running bool
	// Approved: a person approved the command once; nothing more is asked.
	Approved bool
	// pixelsSeen: the relay looked at the page's fields holding a secret
	// before this screenshot (package creds); not again.
	PixelsSeen bool

	// While asked: the approval's id (the person's stage numbers and
	// answers them: Authority.Answer), why and what it is asked about.
	AskID    int64
	Decision Decision // the asking decision
	What     string
	// Once denied: the error for the client.
	Denial string
	// TargetID is the tab's target id, noted under the lock when h is
	// taken off its line (lines.Take), for the audit record lines.Answer
	// makes.
	TargetID string

	// Seen is what the relay saw where the command acts when it asked;
	// byPerson: a person approved it; checked: the page was looked at
	// again since (the person's stage: recheck.go).
	Seen     SeenTarget
	ByPerson bool
	Checked  bool
	// Off: taken off its line, and no longer counted in flight for it.
	Off bool
}

// Lines are the hooks of the lines' part (package lines) the core calls.
type Lines struct {
	// ForTabLocked keeps k, a client's command for tab t whose sessions
	// are suspended, in t's line until they are back (answered later),
	// and reports whether it did: a command taken off a line, or the
	// relay's own, is not kept.
	ForTabLocked func(c *ClientConn, st *State, k *Cmd, t *Tab) bool
	// ClientGoneLocked takes client c's lines off the instance; answer,
	// called once the lock is released, answers their commands.
	ClientGoneLocked func(st *State, c *ClientConn) (answer func())
}

// heldLines are the lines' hooks, set once before the order (Services.Lines).
var heldLines Lines

// UnaskLocked takes h, a command shown to a person, off what they are
// asked (the person's Authority.UnaskLocked).
func (st *State) UnaskLocked(h *HeldCmd) { authority.UnaskLocked(st, h) }
