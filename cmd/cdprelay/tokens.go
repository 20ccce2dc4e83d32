package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"github.com/cdprelay/cdprelay/internal/ingress"
)

// hashToken is `cdprelay hash-token`: the token on stdin (so that it
// stays out of the shell's history and the process list), its hash on
// stdout, for the config's tokens[].sha256.
func hashToken(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) != 0 {
		fmt.Fprintln(stderr, "usage: cdprelay hash-token < token-file   (or type the token and press Ctrl-D)")
		return 2
	}
	b, err := io.ReadAll(io.LimitReader(stdin, 4096))
	if err != nil {
		fmt.Fprintln(stderr, "cdprelay hash-token:", err)
		return 1
	}
	// One trailing newline is the terminal's or echo's, not the token's.
	tok := strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	if why := ingress.CheckTokenText(tok); why != "" {
		fmt.Fprintln(stderr, "cdprelay hash-token:", why)
		return 1
	}
	if len(tok) < 32 {
		fmt.Fprintf(stderr, "cdprelay hash-token: warning: a %d-character token is short; `cdprelay gen-token` makes 256-bit ones\n", len(tok))
	}
	fmt.Fprintln(stdout, ingress.HashToken(tok))
	return 0
}

// genToken is `cdprelay gen-token`: a new random token, and the config
// entry that grants it.
func genToken(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("gen-token", flag.ContinueOnError)
	fs.SetOutput(stderr)
	name := fs.String("name", "client", "the token's name in the config")
	scopes := fs.String("scopes", "cdp", "comma-separated scopes: "+strings.Join(ingress.ScopeNames(), ", "))
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "cdprelay gen-token: unexpected argument %q\n", fs.Arg(0))
		return 2
	}
	list := splitList(*scopes)
	entry := ingress.Token{Name: *name, Scopes: list}
	tok := ingress.GenerateToken()
	entry.SHA256 = ingress.HashToken(tok)
	if err := (ingress.Config{Tokens: []ingress.Token{entry}}).Validate(); err != nil {
		fmt.Fprintln(stderr, "cdprelay gen-token:", err)
		return 2
	}
	fmt.Fprintf(stdout, `token: %s
# The relay keeps only the hash. Give the token to its holder; add this under tokens: in the config:
- name: %q
  sha256: %s
  scopes: [%s]
`, tok, entry.Name, entry.SHA256, strings.Join(list, ", "))
	return 0
}
