package main

import (
	"fmt"
	"os"
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "dev"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	cmd := "serve"
	if len(args) > 0 && len(args[0]) > 0 && args[0][0] != '-' {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(args)
	case "check-config":
		return checkConfig(args)
	case "hash-token":
		return hashToken(args, os.Stdin, os.Stdout, os.Stderr)
	case "gen-token":
		return genToken(args, os.Stdout, os.Stderr)
	case "connect-url":
		return connectURL(args)
	case "version":
		fmt.Println("cdprelay", version)
		return 0
	case "help", "-h", "--help":
		usage()
		return 0
	default:
		fmt.Fprintf(os.Stderr, "cdprelay: unknown command %q\n\n", cmd)
		usage()
		return 2
	}
}

func usage() {
	fmt.Fprint(os.Stderr, `usage:
  cdprelay serve [flags]         run the relay (the default command)
  cdprelay check-config FILE     validate a config file and explain its policy
  cdprelay hash-token            read a token on stdin, print its SHA-256 for the config
  cdprelay gen-token [-name N] [-scopes cdp,...]
                                 print a new random token and its config entry
  cdprelay connect-url [--addr | --url URL] [--token-file F] [--tenant T]
                                 print the links that connect an extension to a new instance
  cdprelay version               print the version

Run "cdprelay serve -h" for the serve flags.
`)
}
