// Package core is the relay's inside: instances (one upstream, at most one
// CDP client, the tabs the person shares), the one lock and the state
// under it, the tab and session tables and a tab's attach state, the
// judging of what a client set that a resume sets again, the client's read
// loop, what the extension's events and
// replies mean, the dispatch of what is answered at the relay
// (emulate.go), and the runners of the three tables of the order, which
// the facade (package relay) writes and hands over with SetOrder.
//
// Parts of it are packages of their own. Three are leaves it builds on:
// relay/internal/methods (the table of CDP methods and events; the core
// plans each entry), relay/internal/contexts (the execution contexts of a
// tab's sessions, kept from Chrome's events) and relay/internal/replay
// (the record of what a client set that a resume sets again). Four are
// above it and reached through the services the facade hands over
// (Services, services.go): relay/internal/away, the time a tab's sessions
// wait while Chrome takes the debugger away, the client's wait for its
// extension, and the resume; relay/internal/switches, the answers to a
// client's switch of a domain's events on a tab's session, Runtime's
// above all, which the relay keeps on for itself; relay/internal/lines,
// the order of a client's commands for a tab around one that is held;
// relay/internal/attach, attaching the debugger to a tab and letting go
// of it, the I/O side of the tab's attach state (Tab.State, SetState).
// Two more are above it and never called by it:
// relay/internal/navhold, the navigation backstop's hold of a tab's
// document request, which the stages call, and relay/internal/handles,
// the live view's use of a shared tab (the relay's own commands, below),
// which the facade hands out.
//
// The core reaches the browser through an Upstream (upstream.go): the
// connection that carries its commands, keeps the calls pending on it,
// and tells the core what the browser does. Package ext is the
// extension's: its socket and read loop, the ids of its calls, and what
// the extension protocol's events mean for the core's tabs (a tab offered,
// updated, removed or detached, the handshake, the popups it marks), which
// it carries out with the core's operations (UpsertTab, RemoveTab,
// BrowserDetached, ...), the attach's (package attach: Tab,
// ReleaseIfUnused) and the time away's (package away: WaitOnDetach,
// ResumeAway, ...). A client's reply comes
// back by Instance.DeliverReply and a tab's CDP event by
// Instance.RouteEvent, each through the order's table.
//
// A stage reaches the core only through what the facade hands over at
// assembly, before any instance exists: its rows in the three tables
// (SetOrder), the methods it answers at the relay (AddEmulations,
// AddLevels), the
// outcomes it watches (AddOutcomeHooks), what it hears of a tab's and a client's life
// (AddLifecycle), the services (SetServices: the last look at what
// leaves the relay, a tab's dialogs, what a Stop and a take-over do,
// asking a person and carrying out their answer, the navigation
// backstop's answers, what the tiers decide of a tab's access, the
// browser's policy refusals), and its own state in the core's structures (the
// slots of slots.go). Every stage is so plugged in:
// browser (the version, windows and downloads), targets (Target.*),
// creds (credentials and secrets), person
// (the Stop, what it undoes and the brake on script that does not end,
// take-over, what a person is asked and what they saw, a tab's dialogs),
// rules (the
// operator's rules and the relay's own) and tiers (blind, read-only and
// take-over: refusals, stand-ins, what is withheld). The core imports
// none of them.
//
// The core reads no policy: it holds the one in force (Relay.SetPolicy)
// and takes one snapshot of it per message (policy.go), which the stages
// read. What the policy says of a command, a URL, a site's tier, a host a
// person is asked about or a submit is read by the stage that owns it;
// the core asks the stages what it needs to know (Instance.HasTiers,
// Instance.Fencing, Instance.AsksNavigation).
//
// What of the person's authority every part of the relay honours is the
// core's own: whether the automation is stopped and by whom
// (Instance.IsStopped, State.StoppedBy, refused by core.Running), who
// holds a tab (Tab.Control), the held commands and their lines
// (lines.go; the lines themselves are package lines') and the document
// requests held (navhold.go; the hold is package navhold's). What a Stop
// does, undoes and lets go on, the brake on script that does not end,
// taking over a tab, and asking a person and carrying out their answer
// are the person's stage's (authority.go hands them over).
//
// The fences that apply the policy to what the browser does on its own are
// the rules stage's (package rules): the navigation backstop on the Fetch
// domain and its multiplexing of the client's own Fetch (the rows
// rules.Fence, rules.Backstop and rules.FenceChild, set up as a tab
// attaches by the Attaching hook), and the extension's first-request
// rules. What the backstop lets through may still be held by the core
// while the client's settings are lifted for where it goes or a person is
// asked (navhold.go; package navhold holds them).
//
// So is a tab's access (full, read-only, blind, and why), which every part
// of the relay reads: keeping it and the tab's frames and navigations it
// is decided from (access.go, frameaccess.go, blindframes.go,
// tierslots.go), what is lifted of the client's settings (lifts.go) and
// the client's scripts for new documents (initscripts.go). Deciding it
// from the policy, following the tab's sub-frames, what a change of it
// does and tells the client, and sending what lifts and puts back are the
// tiers stage's, through Tiers (hooks.go). The core also keeps the contexts the
// client names (a contexts.Tab per tab, relay/internal/contexts; the
// tiers' contexts.go judges them), and the
// state the tiers' access is decided from in slots embedded in its
// structures (tierslots.go: the frames, the navigations, the scripts, what
// is lifted). The tiers stage judges by it.
//
// Where each thing is decided across the relay — the order, what each
// concern keeps, how a stage is added — is the facade's package doc
// (package relay).
//
// # Under the lock
//
// Every method of *State, every function whose name ends in Locked (and
// every function handed over as a hook so named), and every event row run
// with the instance lock held. None of them blocks or calls the
// extension: State.Fire queues a command in the outbox (package outbox),
// which is sent after the lock is released, in order, before anything
// else is sent. TestLockedCodeDoesNotBlock (package relay) follows what
// each of them calls, through the relay's packages, and fails on a path
// to the lock taken again, a call upstream, the outbox flushed, a sleep or
// a wait.
//
// # The relay's own commands
//
// Not every command the extension receives is a client's. The relay sends
// its own, and each goes through what must see it:
//
//   - Attach (package attach): chrome.debugger.attach, Target.getTargetInfo,
//     what the stages put in place first (Lifecycle.Attaching: the
//     backstop's Fetch.enable on a fenced tab), Page.enable,
//     Runtime.enable, the history check of a tab that once held a page that
//     is never shared. Before any client command: the tab is not the
//     client's until they are done.
//   - A resume's replay (package away's replay.go): what the client had
//     set on the tab is sent again when the tab is attached again. Each command runs the
//     judging rows of the commands table as the relay's own (JudgeReplayed:
//     the policy read now, access, the fence) and then the rows that act
//     on the relay's own commands (CmdStage.Replays: rules.Fence's
//     rewrite); what they refuse is not sent, and the client is told why.
//     Scripts for new documents that tiers withheld are put back by tiers
//     (their lifts.go), where they may run. After it, a document that
//     loaded while the tab's sessions waited may be asked its readyState
//     (relay/internal/away, load.go: Runtime.evaluate, silent, by value; never on a blind
//     tab or while the automation is stopped), when the client's own
//     lifecycle events did not say how far it loaded.
//   - Fire-and-forget commands (State.Fire, Upstream.Fire, FireCall): the
//     consequences of a decision already taken, never judged again — the
//     Fetch backstop's answers (the rules stage's backstop.go, rules.go,
//     package navhold), the read-only guard and its removal (the tiers' access.go and
//     events.go),
//     Runtime.runIfWaitingForDebugger and Page.enable on a new child held
//     at its start (events.go), Debugger.resume of what the brake paused
//     when the person resumes (person.Resume), the brake's own Debugger
//     calls (person's brake.go), the extension's own calls
//     (extension.setNavigationFence, extension.sharePopup,
//     chrome.debugger.detach).
//   - The relay's own world (package look): a fresh isolated world with a
//     random name for each look — the focus and point probes of an
//     approval (package person: probe.go, recheck.go), the secret field's checks and the typing of a
//     secret (package creds: fieldwatch.go, typing.go). Its contexts, objects and scripts
//     are never announced to the client and refused if the client names
//     them (the tiers' contexts.go).
//   - Tab handles (package handles; the core keeps a tab's list of them,
//     handles.go): the live view's screencast, input and navigation.
//     Never to the relay's own origins; nothing but the screencast's start
//     and stop, leaving and undoing its resizing on a blind tab; the
//     person's navigation passes the URL fence (internal/app) and is not
//     asked of them again.
//   - Learning and emulation: the browser's identity from a tab
//     (ext/learn.go), a tab's target info (targets.go), the answers to
//     Target.* (package targets) and Browser.* (package browser: the
//     version, windows and downloads)
//     — chrome.tabs.*, chrome.windows.*, extension.downloadFile — and the
//     person's undo after a Stop (person's stopundo.go).
package core
