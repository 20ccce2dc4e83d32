package main

import (
	"os"
	"path/filepath"
	"runtime"
)

// defaultStateDir is where --state-dir points unless it is given: this
// platform's usual place for an application's own data.
func defaultStateDir() string {
	home, _ := os.UserHomeDir()
	return stateDirFor(runtime.GOOS, os.Getenv, home)
}

// stateDirFor is the state folder on goos: Linux and the other Unixes
// follow XDG ($XDG_STATE_HOME, else ~/.local/state), macOS keeps it in
// ~/Library/Application Support, Windows in %LOCALAPPDATA% (the user's
// own, not roamed to other machines: the guids are this relay's). ""
// (a fresh guid every run) when none of these is known.
func stateDirFor(goos string, getenv func(string) string, home string) string {
	under := func(root string, elems ...string) string {
		if root == "" {
			return ""
		}
		if goos == "windows" {
			// Built on any system, for the tests: Windows' separator.
			p := root
			for _, e := range elems {
				p += `\` + e
			}
			return p
		}
		return filepath.Join(append([]string{root}, elems...)...)
	}
	switch goos {
	case "darwin":
		return under(home, "Library", "Application Support", "cdprelay")
	case "windows":
		if d := getenv("LOCALAPPDATA"); d != "" {
			return under(d, "cdprelay")
		}
		return under(home, "AppData", "Local", "cdprelay")
	}
	if d := getenv("XDG_STATE_HOME"); d != "" {
		return under(d, "cdprelay")
	}
	return under(home, ".local", "state", "cdprelay")
}
