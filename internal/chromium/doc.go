// Package chromium finds and runs a dedicated Chromium for the relay's
// embedded default: headless (or headful on request), a fresh profile, and
// the relay's own extension loaded. It lives apart from the command so that
// the end-to-end tests and the developer tools start the browser exactly as
// `cdprelay serve --launch` does, and never download one of their own.
//
// On Linux, macOS and Windows alike: Find looks where each installs
// Chromium, Chrome for Testing, Edge and Google Chrome (candidates.go,
// tested for every platform on any through Host), and the launched
// browser's process tree ends with this process (tree: proc_*.go).
package chromium
