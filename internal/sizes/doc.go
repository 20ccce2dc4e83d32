// Package sizes holds no code: its test walks the repository and fails
// naming every non-test Go file over the house limit of 500 lines, so that
// files stay small and split by concept. It needs no browser and runs with
// every `go test ./...`.
package sizes
