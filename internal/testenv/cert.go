package testenv

import "github.com/cdprelay/cdprelay/internal/testcert"

// Cert is a self-signed certificate for this machine's loopback names
// (testcert.Cert).
type Cert = testcert.Cert

// NewCert makes a certificate valid for an hour.
func NewCert() (*Cert, error) { return testcert.NewCert() }
