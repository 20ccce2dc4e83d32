package ingress

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"strings"
)

// The person key is the credential of the person who lends the browser:
// what stops and resumes the automation, approves and denies, answers
// dialogs, takes over a tab and removes an instance. The relay mints it
// (cmd/cdprelay keeps it in the state dir) and hands it to the person as
// the live view's link; a CDP client never holds it, so that on loopback,
// where the CDP endpoints need no token, the agent still cannot act as the
// person.
//
// It is presented explicitly, never as a cookie: cookies are not kept
// apart by port, so a cookie of the relay's origin would also go to every
// other server on the same host the person's browser visits, one the
// agent runs included. The live view keeps the key in its origin's
// storage and offers it as a WebSocket subprotocol (PersonProtocolPrefix);
// a program sends it as a token (Authorization: Bearer). Being explicit,
// it is not sent by a browser on a page's behalf: no other page can make
// the person's browser use it.

// PersonKeyPrefix marks a person key, as tokenPrefix marks a token.
const PersonKeyPrefix = "cdpp_"

// PersonKeyName names the person key as a credential: in the audit log,
// in the live view, in what a CDP client is told of a Stop.
const PersonKeyName = "person key"

// PersonProtocolPrefix prefixes the person key as a WebSocket
// subprotocol: a browser's WebSocket cannot set headers, and a URL ends
// up in logs. The guard takes it out of the handshake before the request
// goes on, so no handler and no response ever carries it.
const PersonProtocolPrefix = "cdprelay-person."

// personKeyLen is the length of a person key: the prefix and 32 random
// bytes in unpadded base64url.
var personKeyLen = len(PersonKeyPrefix) + base64.RawURLEncoding.EncodedLen(32)

// GeneratePersonKey returns a new person key: 256 bits from crypto/rand,
// URL-safe, and a valid subprotocol name once prefixed.
func GeneratePersonKey() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand panics instead)
	return PersonKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// CheckPersonKey says what is wrong with a person key read back from a
// file, or nil.
func CheckPersonKey(key string) error {
	rest, ok := strings.CutPrefix(key, PersonKeyPrefix)
	if !ok || len(key) != personKeyLen {
		return errors.New("a person key is " + PersonKeyPrefix + " and 43 characters of base64url")
	}
	if _, err := base64.RawURLEncoding.DecodeString(rest); err != nil {
		return errors.New("a person key is " + PersonKeyPrefix + " and 43 characters of base64url")
	}
	return nil
}

// personKey is the compiled person key: its hash, compared in constant
// time, as a token's is.
type personKey struct {
	hash [sha256.Size]byte
}

func compilePersonKey(key string) (*personKey, error) {
	if key == "" {
		return nil, nil
	}
	if err := CheckPersonKey(key); err != nil {
		return nil, err
	}
	return &personKey{hash: sha256.Sum256([]byte(key))}, nil
}

// match reports whether presented is the key; nil matches nothing.
func (k *personKey) match(presented string) bool {
	if k == nil || presented == "" {
		return false
	}
	sum := sha256.Sum256([]byte(presented))
	return constantTimeCompare(sum[:], k.hash[:]) == 1
}

// presentedPersonKey reads the person key a WebSocket handshake offers
// among its subprotocols (Sec-WebSocket-Protocol, any number of header
// lines, comma-separated), and returns the subprotocols without it. Two
// keys are ambiguous, and an empty one is malformed.
func presentedPersonKey(protocols []string) (key string, c credential, rest []string) {
	if len(protocols) == 0 {
		return "", credNone, nil
	}
	found := 0
	for _, line := range protocols {
		for p := range strings.SplitSeq(line, ",") {
			p = strings.TrimSpace(p)
			if k, ok := strings.CutPrefix(p, PersonProtocolPrefix); ok {
				found++
				key = k
				continue
			}
			if p != "" {
				rest = append(rest, p)
			}
		}
	}
	switch {
	case found == 0:
		return "", credNone, rest
	case found > 1 || key == "" || len(key) > maxTokenBytes:
		return "", credMalformed, rest
	}
	return key, credToken, rest
}
