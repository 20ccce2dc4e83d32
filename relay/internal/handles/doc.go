// Package handles is the relay's own use of a shared tab beside the CDP
// client's session (the live view's screencast, input and navigation), a
// part of the core in a package of its own. The facade hands it to the
// live view (relay.OpenTab, relay.TabHandle), and two rows of the order
// say whose a tab's screencast frames are (screencast.go); the core calls
// nothing here. The core keeps what it must know of a handle (core.TabHandle on
// the tab's list, Tab.Handles): that the tab is still in use when the
// client leaves, and where the tab's events go (core.NotifyHandles).
//
// A handle's commands and their replies never reach the client, and are
// the relay's own, so they are bounded here:
//
//   - never a navigation to the relay's own origins, whoever asks;
//   - on a blind tab, nothing but the screencast's start and stop (its
//     frames are withheld), leaving the tab and undoing its own resizing
//     (blindAllowed);
//   - the person's navigation has passed the URL fence (internal/app) and
//     is noted as approved, so that they are not asked of it again where
//     it ends (core.State.ApprovedNavigation).
package handles
