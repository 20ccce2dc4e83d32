package ingress

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
)

// Token is one configured token. The relay never stores a token itself,
// only its SHA-256: a leaked config file grants nothing.
type Token struct {
	// Name says whose token it is, in logs, audit and metrics-free
	// diagnostics. Required, unique.
	Name string `json:"name"`
	// SHA256 is the hex SHA-256 of the token (`cdprelay hash-token`).
	// Required, unique.
	SHA256 string `json:"sha256"`
	// Scopes are what the token grants: cdp, viewer, viewer-interactive,
	// admin, extension, pair. At least one.
	Scopes []string `json:"scopes"`
	// Tenant, when set, confines the token to that tenant's instances
	// (ValidTenant says what a name may be). Empty: the operator's token,
	// which reaches every instance.
	Tenant string `json:"tenant,omitempty"`
}

// maxTenantBytes bounds a tenant's name: it labels records, logs and,
// when the operator asks, a metric.
const maxTenantBytes = 63

// ValidTenant says what is wrong with a tenant's name, or nil: 1 to 63
// lowercase letters, digits, '-', '_' and '.', starting with a letter or
// a digit. Lowercase only, so that "Alice" and "alice" cannot be two
// tenants that a person takes for one.
func ValidTenant(name string) error {
	if name == "" || len(name) > maxTenantBytes {
		return fmt.Errorf("a tenant's name is 1 to %d characters", maxTenantBytes)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		alnum := 'a' <= c && c <= 'z' || '0' <= c && c <= '9'
		if !alnum && (i == 0 || c != '-' && c != '_' && c != '.') {
			return fmt.Errorf("tenant %q: a tenant's name is lowercase letters, digits, '-', '_' and '.', starting with a letter or a digit", name)
		}
	}
	return nil
}

// tokenPrefix marks generated tokens, so that secret scanners and people
// recognise one in a paste.
const tokenPrefix = "cdpr_"

// maxTokenBytes bounds what is hashed: no real token is longer, and a
// request cannot make the relay hash megabytes.
const maxTokenBytes = 512

// HashToken is the SHA-256 of token, in hex, as the config file stores it.
func HashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// GenerateToken returns a new random token: 256 bits, URL-safe, so that it
// can go in ?token= as it is.
func GenerateToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return tokenPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// CheckTokenText says what is wrong with a token a person chose, or "".
// The relay accepts any token whose hash is configured; this only keeps
// tokens that a header or a URL would mangle out of the config.
func CheckTokenText(token string) string {
	switch {
	case token == "":
		return "the token is empty"
	case len(token) > maxTokenBytes:
		return fmt.Sprintf("the token is longer than %d bytes", maxTokenBytes)
	}
	for i := 0; i < len(token); i++ {
		if !tokenChar(token[i]) {
			return fmt.Sprintf("the token has a character (%q) that needs escaping in a header or URL; use letters, digits and -._~", token[i])
		}
	}
	return ""
}

// tokenChar is the URL's unreserved set: a token made of these goes into
// an Authorization header and a query string unchanged.
func tokenChar(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~'
}

// tokenTable is the compiled token list. Immutable.
type tokenTable struct {
	entries []tokenEntry
}

type tokenEntry struct {
	hash   [sha256.Size]byte
	scopes ScopeSet
	name   string
	tenant string // "": the operator's
}

// emptyHash is the hash of the empty string: configuring it would let
// `?token=` in.
var emptyHash = sha256.Sum256(nil)

func compileTokens(tokens []Token) (*tokenTable, error) {
	var errs []error
	t := &tokenTable{}
	names := make(map[string]bool, len(tokens))
	hashes := make(map[[sha256.Size]byte]string, len(tokens))
	for i, tok := range tokens {
		where := fmt.Sprintf("tokens[%d]", i)
		if tok.Name != "" {
			where += fmt.Sprintf(" (%s)", tok.Name)
		}
		var e tokenEntry
		switch {
		case strings.TrimSpace(tok.Name) == "":
			errs = append(errs, fmt.Errorf("%s: name is required", where))
		case names[tok.Name]:
			errs = append(errs, fmt.Errorf("%s: name used twice", where))
		}
		names[tok.Name] = true
		e.name = tok.Name
		raw, err := hex.DecodeString(tok.SHA256)
		switch {
		case err != nil || len(raw) != sha256.Size:
			errs = append(errs, fmt.Errorf("%s: sha256 must be 64 hex digits (cdprelay hash-token prints it)", where))
		default:
			copy(e.hash[:], raw)
			if e.hash == emptyHash {
				errs = append(errs, fmt.Errorf("%s: sha256 is the hash of the empty token", where))
			} else if other, dup := hashes[e.hash]; dup {
				errs = append(errs, fmt.Errorf("%s: same sha256 as %s; one token has one set of scopes", where, other))
			}
			hashes[e.hash] = where
		}
		if e.scopes, err = ParseScopes(tok.Scopes); err != nil {
			errs = append(errs, fmt.Errorf("%s: scopes: %w", where, err))
		}
		if tok.Tenant != "" {
			if err := ValidTenant(tok.Tenant); err != nil {
				errs = append(errs, fmt.Errorf("%s: %w", where, err))
			}
			e.tenant = tok.Tenant
		}
		t.entries = append(t.entries, e)
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	return t, nil
}

// constantTimeCompare is subtle.ConstantTimeCompare; tests replace it to
// see that every entry is compared on every request.
var constantTimeCompare = subtle.ConstantTimeCompare

// match finds the entry whose hash is the presented token's. It compares
// against every entry whatever the result, so that the time taken says
// neither whether nor where a token matched. Comparing hashes, not tokens,
// also keeps the compare's time independent of the token's length.
func (t *tokenTable) match(presented string) (g Grant, ok bool) {
	sum := sha256.Sum256([]byte(presented))
	found, at := 0, 0
	var granted int
	for i := range t.entries {
		e := &t.entries[i]
		eq := constantTimeCompare(sum[:], e.hash[:])
		found |= eq
		at = subtle.ConstantTimeSelect(eq, i, at)
		granted |= subtle.ConstantTimeSelect(eq, int(e.scopes), 0)
	}
	if found == 0 {
		return Grant{}, false
	}
	e := &t.entries[at]
	return Grant{TokenName: e.name, Tenant: e.tenant, Scopes: ScopeSet(granted)}, true
}

// Tenants are the tenants the tokens name, each once, in the order first
// named.
func (t *tokenTable) tenants() []string {
	var out []string
	seen := map[string]bool{}
	for _, e := range t.entries {
		if e.tenant != "" && !seen[e.tenant] {
			seen[e.tenant] = true
			out = append(out, e.tenant)
		}
	}
	return out
}
