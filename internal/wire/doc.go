// Package wire is the one place where cdprelay reads and writes the JSON of
// CDP and extension messages on the hot path.
//
// A frame is validated once (UTF-8, JSON grammar, nesting depth) while its
// top-level members are located; values stay as byte spans into the frame so
// that params, results and events are forwarded as their original bytes.
// Nothing here allocates for well-formed messages whose strings carry no
// escapes, which is every message real clients and Chrome send.
package wire
