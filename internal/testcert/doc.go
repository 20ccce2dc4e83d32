// Package testcert makes self-signed certificates for tests that serve
// TLS on loopback. It stands apart from internal/testenv so that the
// assembly's own tests, which testenv builds on, can use it too.
package testcert
