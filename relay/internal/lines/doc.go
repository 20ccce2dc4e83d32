// Package lines keeps the order of a client's commands for a tab around
// one that is held. It is a part of the core in a package of its own: the
// core reaches it through the hooks the facade hands over (core.Lines,
// Hooks); the facade's commands table runs InLine as the row core.Line;
// the stages that hold a command (the person's asking, the secrets'
// typing) and the time away call it directly.
//
// Order is kept per tab: the client's later commands for a tab with a
// held command wait in line behind it and go on, in order, once it is
// answered; commands for other tabs go on meanwhile. A command is held at
// the head of its line:
//
//   - while a person is asked about it (Hold; the person's stage asks and
//     answers), or the relay looks at the page to describe or judge it;
//   - while the relay carries it out itself (Occupy, Release: a secret
//     being typed);
//   - while the tab's sessions are away (away.go): a task holds the head
//     until the resume ends.
//
// Once the head is answered, a task takes the commands behind it off the
// line (StartDrain), each judged again from the running stage on as if it
// had just arrived (core.ClientConn.Judge): Stop, the policy and the tab's
// access as they are then. Held and waiting commands count toward the
// client's commands in flight. A Stop, or the client leaving, takes every
// line off the instance (Take) and answers their commands (Answer).
//
// The lines are the instance's state, guarded by its mutex (a slot of the
// core's State); a client's count of lines (core.ClientConn.LineCount)
// lets InLine pass a command without the lock when it has none.
package lines

import "github.com/cdprelay/cdprelay/relay/internal/core"

// Hooks are what the core calls of the lines (core.Services.Lines).
func Hooks() core.Lines {
	return core.Lines{
		ForTabLocked: forTabLocked,
		ClientGoneLocked: func(st *core.State, c *core.ClientConn) func() {
			held := Take(st, c)
			return func() {
				for _, h := range held {
					Answer(h, Gone, "")
				}
			}
		},
	}
}
