// Command protocolgen writes the names of every CDP command and event that
// the cdproto module in go.mod knows, one "command Domain.method" or
// "event Domain.name" a line, for the relay's /json/protocol. A
// chrome.debugger session cannot fetch Chrome's own schema, so the relay
// answers with what its cdproto knows, generated rather than kept by hand.
// It is run by go generate in the relay's cdp package (relay/internal/cdp):
//
//	go run ../../../internal/protocolgen -o protocol_names.txt
package main
