package ingress

import (
	"errors"
	"fmt"

	"github.com/cdprelay/cdprelay/extension"
	"github.com/cdprelay/cdprelay/internal/routes"
)

// Config is the part of the ingress rules that a reload may change. The
// zero value is the zero-config relay: no tokens, so loopback peers only,
// with every scope; loopback names only as Host; no Origin on CDP
// endpoints; the default extension ids.
type Config struct {
	// Tokens, when not empty, are required on every request but the page
	// shell, loopback included. Default: none.
	Tokens []Token
	// Hosts are names (or addresses) a request's Host may carry besides
	// localhost, 127.0.0.0/8 and ::1. Default: none.
	Hosts []string
	// CDPOrigins are the Origins a CDP request (discovery or WebSocket)
	// may carry, as scheme://host[:port]; a request without Origin is
	// always fine. Default: none.
	CDPOrigins []string
	// ExtensionIDs are the extensions that may connect to /extension/.
	// nil: DefaultExtensionIDs. An empty, non-nil list allows only
	// clients that send no Origin (programs outside a browser).
	ExtensionIDs []string
	// SelfOrigins are origins that count as the relay's own besides the
	// one a request reached it under: the origin of its public URL, which
	// a TLS-terminating front door serves the live view from. Default:
	// none.
	SelfOrigins []string
	// PagePaths are the public paths of the live-view page shell.
	// nil: DefaultPagePaths (routes.DefaultPageShell).
	PagePaths []string
	// PersonKey is the person's key (GeneratePersonKey): presented, it
	// grants the person's actions, and the viewer scopes (every scope to
	// a loopback peer of the zero-config relay), whether tokens are
	// configured or not. Default: none; then only a token without the cdp
	// scope acts as the person, and without tokens nobody does.
	PersonKey string
}

// DefaultExtensionIDs are the extensions allowed by default: ours and
// Playwright's.
var DefaultExtensionIDs = []string{extension.ID, PlaywrightExtensionID}

// rules is a compiled Config. Immutable; a reload swaps in a new one.
type rules struct {
	tokens       *tokenTable // nil: no tokens configured
	person       *personKey  // nil: none
	hosts        hostList
	cdpOrigins   map[string]bool
	selfOrigins  map[string]bool
	extensionIDs map[string]bool
	routes       *routes.Table
}

func compile(cfg Config) (*rules, error) {
	var errs []error
	rs := &rules{}
	if len(cfg.Tokens) > 0 {
		t, err := compileTokens(cfg.Tokens)
		if err != nil {
			errs = append(errs, err)
		}
		rs.tokens = t
	}
	var err error
	if rs.person, err = compilePersonKey(cfg.PersonKey); err != nil {
		errs = append(errs, fmt.Errorf("person key: %w", err))
	}
	if rs.hosts, err = compileHosts(cfg.Hosts); err != nil {
		errs = append(errs, err)
	}
	if rs.cdpOrigins, err = compileOrigins("origins.cdp", cfg.CDPOrigins); err != nil {
		errs = append(errs, err)
	}
	if rs.selfOrigins, err = compileOrigins("public URL", cfg.SelfOrigins); err != nil {
		errs = append(errs, err)
	}
	ids := cfg.ExtensionIDs
	if ids == nil {
		ids = DefaultExtensionIDs
	}
	if rs.extensionIDs, err = compileExtensionIDs(ids); err != nil {
		errs = append(errs, err)
	}
	if rs.routes, err = routes.NewTable(cfg.PagePaths); err != nil {
		errs = append(errs, err)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return rs, nil
}

// Validate checks cfg as New and Reload would.
func (cfg Config) Validate() error {
	_, err := compile(cfg)
	return err
}
