// Command cdprelay runs the relay: a Chrome DevTools Protocol endpoint for
// tabs that a person shares through the cdprelay extension.
//
//	cdprelay serve [--addr 127.0.0.1:9222] [--launch [--headful] [--chrome PATH]]
//	cdprelay check-config FILE
//	cdprelay hash-token < token-file
//	cdprelay gen-token [-name NAME] [-scopes cdp,viewer,...]
//	cdprelay connect-url [--addr 127.0.0.1:9222] [--profile NAME]
//	cdprelay version
//
// The command is flags, the config file, signals and the launched browser;
// what it serves is assembled by internal/app, the same assembly the
// developer tools under tools/ measure.
package main
