package api

import "errors"

// ErrWedged answers what asks an instance a panic left unusable.
var ErrWedged = errors.New("this instance stopped working after an internal error; restart the relay")

// ErrNoTab is returned for a tab id the instance does not share.
var ErrNoTab = errors.New("no such shared tab")

// ErrStopped and ErrNotStopped answer a Stop or Resume that changes
// nothing.
var (
	ErrStopped    = errors.New("the automation is already stopped")
	ErrNotStopped = errors.New("the automation is not stopped")
)

// ErrNoApproval answers an approval or denial of a command that is not
// waiting for one (any more).
var ErrNoApproval = errors.New("no command is waiting for that approval: it was answered, timed out, or its client went")

// Errors of answering a dialog.
var (
	ErrNoDialog       = errors.New("the tab shows no dialog (or no longer that one)")
	ErrDialogAnswered = errors.New("the dialog was already answered")
)

// ErrControlled is returned when another person already holds a tab.
var ErrControlled = errors.New("another person already controls this tab")

// ErrHidden is returned when a tab is blind: on a page hidden from
// automation and the live view, which the person uses in the browser
// itself.
var ErrHidden = errors.New("the tab is hidden from automation and the live view")
