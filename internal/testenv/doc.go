// Package testenv runs the real thing for end-to-end tests and tools: a
// relay (or, with Options.Build, the whole assembled product) on a loopback
// socket, a headless Chromium with the cdprelay extension connected to it,
// and local web pages on three origins. One environment for every test keeps
// them testing the same path a person's browser takes.
package testenv
