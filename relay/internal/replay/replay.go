// Package replay is the record of what a client's sessions set on a tab
// that the debugger's next session does not have: the domains it switched
// on, its emulation, its headers, its bindings, its scripts for new
// documents. A resume sets it again, in order, when the tab is attached
// again (relay/internal/away, and a person's Resume after a Stop); the
// tiers lift part of it on a page where automation may do less and put it
// back after.
//
// The record is kept as the commands go out, one Record per tab, under
// the instance's lock (the core holds it: core.Tab.Replay); a child
// session's settings are a list of their own (Keep). Nothing here calls
// anything: the package is its tables (tables.go) and the record's rules,
// pure.
package replay

import (
	"encoding/json"
	"strconv"

	"github.com/cdprelay/cdprelay/internal/wire"
)

// Kind says how a method's command is kept.
type Kind uint8

const (
	None     Kind = iota
	Set           // the last call of the method counts
	Keyed         // the last call per value of its key field (Runtime.addBinding's name)
	Unkey         // removes a Keyed call
	Clear         // removes the Set call ClearedBy names
	Script        // Page.addScriptToEvaluateOnNewDocument: each call counts
	Unscript      // Page.removeScriptToEvaluateOnNewDocument
)

// MaxCmds and MaxBytes bound what is kept per tab: a client that sets
// thousands of states, or huge ones, resumes without the rest.
const (
	MaxCmds  = 512
	MaxBytes = 8 << 20
)

// Cmd is one command kept.
type Cmd struct {
	key    string // what a later call replaces or removes
	Method string
	Params []byte // owned
	// script is a Page.addScriptToEvaluateOnNewDocument's identifier as
	// the client knows it ("" until its reply has been read).
	script string
}

// Script is the identifier the client was given for a script for new
// documents ("" for another command, or until Chrome's reply was read).
func (c Cmd) Script() string { return c.script }

// Record is what a tab's sessions set, in the order they set it.
type Record struct {
	Cmds  []Cmd
	Bytes int // of the commands' params
	// nextScript numbers the scripts for new documents; scriptIDs maps
	// the client's identifiers of them to Chrome's after a resume.
	nextScript int
	scriptIDs  map[string]string
}

// Add keeps a command of method, of kind k, with params, as it goes out.
// For a script for new documents it returns the key under which Chrome's
// identifier of it is to be noted (Noted).
func (r *Record) Add(k Kind, method string, params []byte) (scriptKey string) {
	switch k {
	case Set:
		r.keep(Cmd{key: method, Method: method}, params)
	case Keyed:
		r.keep(Cmd{key: KeyOf(method, params), Method: method}, params)
	case Unkey:
		r.unkeep(KeyOf("Runtime.addBinding", params))
	case Clear:
		r.unkeep(ClearedBy(method))
	case Script:
		r.nextScript++
		c := Cmd{key: "script\x00" + strconv.Itoa(r.nextScript), Method: method}
		r.keep(c, params)
		return c.key
	case Unscript:
		id := string(wire.StringField(params, "identifier"))
		for i := range r.Cmds {
			if r.Cmds[i].Method == "Page.addScriptToEvaluateOnNewDocument" && r.Cmds[i].script == id && id != "" {
				r.unkeep(r.Cmds[i].key)
				break
			}
		}
	}
	return ""
}

// Switch keeps a domain's enable (with its params), or forgets it on its
// disable.
func (r *Record) Switch(domain string, on bool, params []byte) {
	if on {
		r.keep(Cmd{key: "enable\x00" + domain, Method: domain + ".enable"}, params)
		return
	}
	r.unkeep("enable\x00" + domain)
}

// Noted notes the identifier Chrome gave the script kept under key.
func (r *Record) Noted(key, id string) {
	for i := range r.Cmds {
		if r.Cmds[i].key == key {
			r.Cmds[i].script = id
		}
	}
}

// Renamed notes the identifiers Chrome gave the client's scripts, set
// again by a resume: ids maps the client's identifier to Chrome's now.
func (r *Record) Renamed(ids map[string]string) {
	if len(ids) == 0 {
		return
	}
	if r.scriptIDs == nil {
		r.scriptIDs = map[string]string{}
	}
	for client, now := range ids {
		r.scriptIDs[client] = now
	}
}

// ScriptRewrite maps a client's script identifier in params (a
// Page.removeScriptToEvaluateOnNewDocument's) to the one Chrome has now,
// after a resume; nil when it is unchanged.
func (r *Record) ScriptRewrite(params []byte) []byte {
	id := string(wire.StringField(params, "identifier"))
	now, ok := r.scriptIDs[id]
	if !ok || now == id {
		return nil
	}
	b, _ := json.Marshal(map[string]string{"identifier": now})
	return b
}

// Forget forgets what a resume would set again: the client's sessions
// have ended, and the next ones set their own. The numbering of the
// scripts goes on, so that the identifier of a script of the old
// sessions, read late, is noted on none of the new ones'.
func (r *Record) Forget() { r.Cmds, r.Bytes, r.scriptIDs = nil, 0, nil }

// Drop forgets the commands and keeps what Chrome renamed: nobody is there
// to set them again for, and a script removed later is still named as
// Chrome knows it.
func (r *Record) Drop() { r.Cmds, r.Bytes = nil, 0 }

func (r *Record) keep(c Cmd, params []byte) {
	r.unkeep(c.key) // a later call replaces it, in its place below
	if len(r.Cmds) >= MaxCmds || r.Bytes+len(params) > MaxBytes {
		return
	}
	c.Params = append([]byte(nil), params...)
	r.Cmds = append(r.Cmds, c)
	r.Bytes += len(params)
}

func (r *Record) unkeep(key string) {
	for i := range r.Cmds {
		if r.Cmds[i].key == key {
			r.Bytes -= len(r.Cmds[i].Params)
			r.Cmds = append(r.Cmds[:i:i], r.Cmds[i+1:]...)
			return
		}
	}
}

// Keep records a setting of kind k in list, a child session's (an
// out-of-process frame's own), as a Record keeps a tab's, bounded by max
// commands, and returns the list. Scripts for new documents are not kept
// here (the tiers keep a frame's).
func Keep(list []Cmd, k Kind, method string, params []byte, max int) []Cmd {
	key := method
	switch k {
	case Set:
	case Keyed:
		key = KeyOf(method, params)
	case Unkey:
		return unkeepIn(list, KeyOf("Runtime.addBinding", params))
	case Clear:
		return unkeepIn(list, ClearedBy(method))
	default:
		return list
	}
	list = unkeepIn(list, key)
	if len(list) >= max {
		return list
	}
	return append(list, Cmd{key: key, Method: method, Params: append([]byte(nil), params...)})
}

func unkeepIn(list []Cmd, key string) []Cmd {
	for i := range list {
		if list[i].key == key {
			return append(list[:i:i], list[i+1:]...)
		}
	}
	return list
}

// KeyOf is a Keyed setting's key: its method and the value of its key
// field.
func KeyOf(method string, params []byte) string {
	return method + "\x00" + string(wire.StringField(params, keyField[method]))
}
