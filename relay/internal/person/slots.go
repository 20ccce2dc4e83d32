package person

// Tab is what the person's side keeps of a tab, embedded in the relay's
// tab. Guarded by the instance's mutex.
type Tab struct {
	// NavApproved is the host of a navigation a person approved, not to
	// be asked again until a document commits.
	NavApproved string
	// Dialog is the JavaScript dialog the tab shows.
	Dialog *Dialog
	// Control names the person who took control of the tab from the live
	// view; while set, the tab is read-only for automation.
	Control string
}
