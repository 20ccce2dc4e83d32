package core

import (
	"sync/atomic"

	"github.com/cdprelay/cdprelay/relay/internal/replay"
)

// What the core keeps for the tiers (blind, read-only, take-over:
// access.go) per tab, per session and per instance, because it decides a
// tab's access from it, follows it from the tab's events or holds a
// navigation for it: embedded in Tab, Session and Instance. What only the
// tiers stage reads (the read-only guard, the client's world names, the
// settings a blind tab deferred) is in its own slots (package tiers,
// slots.go).

// tierTab is what the core keeps of a tab for the tiers. Guarded by the
// instance's mutex, but for the atomics, which say who reads them without
// it.
type tierTab struct {
	// Frames are the sub-frames of the tab's document that share its
	// process (frame id to URL), followed while the policy has tiers: what
	// automation may do with the tab is the strictest of theirs and the
	// document's, since the tab's own session reaches into them.
	Frames map[string]FrameAt
	// BlindFrames are its sub-frames on their way to a site that is not
	// full, until they commit (the tiers' tabframes.go).
	BlindFrames map[string]BlindNav
	// BlindReqs are the page's requests to blind sites (the tiers'
	// blindframes.go).
	BlindReqs map[string]bool
	// Scripts are the client's scripts for new documents, kept while the
	// policy has tiers (initscripts.go).
	Scripts []*InitScript
	// Lift is where the client's settings of the tab stand in Chrome
	// (lifts.go, the tiers' lifts.go).
	Lift LiftState
	// NavTo is where the tab's main frame is on its way to, from the first
	// event that says so (Page.frameStartedNavigating or
	// frameRequestedNavigation, a Document request or its redirect) until a
	// document commits: the tab is as strict as that destination from then
	// on, so that nothing of a page on a blind site — not even its URL in a
	// request event — reaches the client before it commits. A navigation
	// that never commits leaves the tab that strict until the next one does.
	NavTo string
	// blindEpoch moves on each time the tab goes blind. A command records
	// it when forwarded; a reply that finds it moved is withheld. Read
	// without the lock, on the reply path.
	blindEpoch atomic.Uint32
}

// tierSession is what the tiers keep of a child session (an
// out-of-process frame, a worker), as of a tab. Guarded by the instance's
// mutex.
type tierSession struct {
	// NavTo is where a child's frame is on its way to, as a tab's
	// (tierTab).
	NavTo string
	// Frames are the frames in a child's process below its own (frame id
	// to URL), followed while the policy has tiers, as a tab's.
	Frames map[string]FrameAt
	// Kept are a child's settings, and Lift where they stand in Chrome,
	// while the policy has tiers (lifts.go, the tiers' lifts.go).
	Kept []replay.Cmd
	Lift LiftState
}

// tierInstance is what the tiers keep of an instance.
type tierInstance struct {
	// fakeContext numbers the stand-in execution contexts of blind tabs
	// (access.go), far from Chrome's own.
	FakeContext atomic.Int64
}

// FrameAt is a sub-frame of a tab's document: where it is, and the access
// its site gives, decided when it got there (gen: the server's access
// generation then). Deciding the tab's access reads it rather than decide
// every frame's again: a page with thousands of frames made each of its
// events cost a decision per frame, under the instance's lock.
type FrameAt struct {
	Url string
	Acc TabAccess
	Gen uint64
}
