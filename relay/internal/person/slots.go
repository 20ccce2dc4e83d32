package person

// Tab is what the person's side keeps of a tab, embedded in the relay's
// tab. Guarded by the instance's mutex. Who holds the tab (a person's
// take-over) and the navigation a person approved are the core's: access
// and the navigation ask depend on them.
type Tab struct {
	// Dialog is the JavaScript dialog the tab shows.
	Dialog *Dialog
}
