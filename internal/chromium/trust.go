package chromium

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
)

// TrustCertificateFlag makes a browser accept cert whatever its issuer and
// names, and no other certificate it could not verify: it pins the
// certificate's public key. Chromium honours it only with a
// --user-data-dir, which Launch always gives.
func TrustCertificateFlag(cert *x509.Certificate) string {
	sum := sha256.Sum256(cert.RawSubjectPublicKeyInfo)
	return "--ignore-certificate-errors-spki-list=" + base64.StdEncoding.EncodeToString(sum[:])
}
