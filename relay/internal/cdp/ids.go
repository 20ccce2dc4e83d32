package cdp

import (
	"crypto/rand"
	"encoding/hex"
	"strings"
)

// NewGUID returns 128 random bits as 32 lowercase hex digits.
func NewGUID() string { return RandHex(16) }

// RandHex returns n random bytes as 2n lowercase hex digits.
func RandHex(n int) string {
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand: " + err.Error()) // never fails on Linux
	}
	return hex.EncodeToString(b)
}

// ValidGUID reports whether s has the form NewGUID returns.
func ValidGUID(s string) bool {
	if len(s) != 32 {
		return false
	}
	return strings.IndexFunc(s, func(r rune) bool {
		return !('0' <= r && r <= '9' || 'a' <= r && r <= 'f')
	}) < 0
}
