package relay

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// newGUID returns 128 random bits as 32 lowercase hex digits.
func newGUID() string { return randHex(16) }

func randHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	return hex.EncodeToString(b)
}

func validGUID(s string) bool {
	if len(s) != 32 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f')
	}) < 0
}

// NewGUID mints a guid for callers that persist the default instance's.
func NewGUID() string { return newGUID() }
