package localstack

import (
	"crypto"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"

	"k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"

	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// PKI holds the paths of the per-stack certificate authority and the
// certificates signed by it. Every API server of the stack serves the same
// loopback serving certificate; clients authenticate with the admin client
// certificate (group system:masters), so RBAC stays on.
type PKI struct {
	// Dir is <data-dir>/pki, which holds every file below.
	Dir string
	// CACert and CAKey are the stack's CA (ca.crt, ca.key): the API servers'
	// client CA, the kubeconfigs' certificate authority, and the signer of
	// member CSRs.
	CACert, CAKey string
	// ServingCert and ServingKey (apiserver.crt, apiserver.key) are served by
	// every API server, controller manager and scheduler of the stack.
	ServingCert, ServingKey string
	// AdminCert and AdminKey (admin.crt, admin.key) are the client
	// certificate the kubeconfigs embed.
	AdminCert, AdminKey string
	// FrontProxyCACert and FrontProxyCAKey (front-proxy-ca.crt, .key) are
	// the CA of the front-proxy client certificate alone, the API servers'
	// --requestheader-client-ca-file, as in Karmada and kubeadm. Apart
	// from the client CA, a client certificate is checked against it only
	// by name, not by signature: with one CA for both, every request with
	// a client certificate had its chain verified twice.
	FrontProxyCACert, FrontProxyCAKey string
	// FrontProxyCert and FrontProxyKey (front-proxy-client.crt, .key) are
	// the client certificate (CN FrontProxyClientName) API servers forward
	// aggregated API requests with, signed by the front-proxy CA.
	FrontProxyCert, FrontProxyKey string
}

// FrontProxyClientName is the common name of the front-proxy client
// certificate, the only name the members' --requestheader-allowed-names admits.
const FrontProxyClientName = "front-proxy-client"

// certValidity is how long generated certificates last: a local stack is
// long-lived, and expiry would lock users out of their own data. It equals
// the ten years client-go's cert.NewSelfSignedCACert gives the CA.
const certValidity = 10 * 365 * 24 * time.Hour

// PKIPaths returns where the stack's PKI lives under dataDir, without creating it.
func PKIPaths(dataDir string) PKI {
	d := filepath.Join(dataDir, "pki")
	return PKI{
		Dir:         d,
		CACert:      filepath.Join(d, "ca.crt"),
		CAKey:       filepath.Join(d, "ca.key"),
		ServingCert: filepath.Join(d, "apiserver.crt"),
		ServingKey:  filepath.Join(d, "apiserver.key"),
		AdminCert:   filepath.Join(d, "admin.crt"),
		AdminKey:    filepath.Join(d, "admin.key"),

		FrontProxyCACert: filepath.Join(d, "front-proxy-ca.crt"),
		FrontProxyCAKey:  filepath.Join(d, "front-proxy-ca.key"),
		FrontProxyCert:   filepath.Join(d, "front-proxy-client.crt"),
		FrontProxyKey:    filepath.Join(d, "front-proxy-client.key"),
	}
}

// ServiceAccountKeys returns the paths of the service-account signing key
// pair of one cluster (each cluster has its own, so tokens do not cross).
func (p PKI) ServiceAccountKeys(cluster string) (private, public string) {
	return filepath.Join(p.Dir, cluster+"-sa.key"), filepath.Join(p.Dir, cluster+"-sa.pub")
}

// EnsurePKI creates whatever is missing of the CA, the serving and admin
// certificates and the service-account keys of clusters. Existing files are
// kept, so a restarted stack keeps its identity and issued tokens stay valid;
// a pair with one file missing (an interrupted write) is issued again, and a
// new CA reissues the certificates it signs. Keys are ECDSA P-256 in
// "EC PRIVATE KEY" PEM files of mode 0600; certificates are PEM files of mode
// 0644 in the 0700 pki directory.
func EnsurePKI(dataDir string, clusters []string) (PKI, error) {
	p := PKIPaths(dataDir)
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return p, fmt.Errorf("create pki dir: %w", err)
	}
	if !pairPresent(p.CACert, p.CAKey) {
		if err := writeCA(p.CACert, p.CAKey, "flotilla-ca"); err != nil {
			return p, err
		}
		// A new CA invalidates every leaf signed by an old one.
		for _, f := range []string{p.ServingCert, p.ServingKey, p.AdminCert, p.AdminKey} {
			_ = os.Remove(f)
		}
	}
	if !pairPresent(p.FrontProxyCACert, p.FrontProxyCAKey) {
		// Also the way from a data dir whose front-proxy client
		// certificate the stack's CA signed.
		if err := writeCA(p.FrontProxyCACert, p.FrontProxyCAKey, "flotilla-front-proxy-ca"); err != nil {
			return p, err
		}
		_ = os.Remove(p.FrontProxyCert)
		_ = os.Remove(p.FrontProxyKey)
	}
	caCert, caKey, err := loadCA(p.CACert, p.CAKey)
	if err != nil {
		return p, err
	}
	if !pairPresent(p.ServingCert, p.ServingKey) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "flotilla-apiserver"},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			// Clients dial the loopback addresses; the kubernetes Service's
			// names and cluster IP are what in-cluster clients would use.
			DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")},
		}
		if err := signLeaf(p.ServingCert, p.ServingKey, tmpl, caCert, caKey); err != nil {
			return p, err
		}
	}
	if !pairPresent(p.AdminCert, p.AdminKey) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: controlplane.AdminUser, Organization: []string{"system:masters"}},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := signLeaf(p.AdminCert, p.AdminKey, tmpl, caCert, caKey); err != nil {
			return p, err
		}
	}
	if !pairPresent(p.FrontProxyCert, p.FrontProxyKey) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: FrontProxyClientName},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		proxyCA, proxyKey, err := loadCA(p.FrontProxyCACert, p.FrontProxyCAKey)
		if err != nil {
			return p, err
		}
		if err := signLeaf(p.FrontProxyCert, p.FrontProxyKey, tmpl, proxyCA, proxyKey); err != nil {
			return p, err
		}
	}
	for _, c := range clusters {
		priv, pub := p.ServiceAccountKeys(c)
		if pairPresent(priv, pub) {
			continue
		}
		if err := writeServiceAccountKeys(priv, pub); err != nil {
			return p, fmt.Errorf("service-account keys of %s: %w", c, err)
		}
	}
	return p, nil
}

// clockSkew backdates certificates, so a component whose clock is slightly
// behind does not reject a certificate issued a moment ago.
const clockSkew = time.Hour

// pairPresent reports whether both files of a certificate/key (or key/public
// key) pair can be read. A lone file counts as absent, so the pair is issued
// again rather than left half-written.
func pairPresent(first, second string) bool {
	ok, err := cert.CanReadCertAndKey(first, second)
	return ok && err == nil
}

// newKey generates an ECDSA P-256 key and returns it with its PEM encoding.
func newKey() (crypto.Signer, []byte, error) {
	keyPEM, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return nil, nil, fmt.Errorf("generate key: %w", err)
	}
	key, err := keyutil.ParsePrivateKeyPEM(keyPEM)
	if err != nil {
		return nil, nil, fmt.Errorf("read generated key: %w", err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("generated key of type %T cannot sign", key)
	}
	return signer, keyPEM, nil
}

// writeCA writes a new self-signed CA, valid for certValidity, and its key.
func writeCA(certPath, keyPath, name string) error {
	key, keyPEM, err := newKey()
	if err != nil {
		return err
	}
	ca, err := cert.NewSelfSignedCACert(cert.Config{CommonName: name, NotBefore: time.Now().Add(-clockSkew)}, key)
	if err != nil {
		return fmt.Errorf("create CA %s: %w", certPath, err)
	}
	certPEM, err := cert.EncodeCertificates(ca)
	if err != nil {
		return fmt.Errorf("encode CA %s: %w", certPath, err)
	}
	return writePair(certPath, keyPath, certPEM, keyPEM)
}

// signLeaf issues the certificate described by tmpl (subject, usages, SANs)
// under the CA, with a new key, valid for certValidity. This step uses
// crypto/x509 directly: client-go's util/cert only makes self-signed
// certificates (a CA, or a serving certificate under a throwaway CA of its
// own), so it can neither sign with the stack's CA nor issue the admin's
// client-auth certificate in system:masters.
func signLeaf(certPath, keyPath string, tmpl *x509.Certificate, ca *x509.Certificate, caKey crypto.Signer) error {
	key, keyPEM, err := newKey()
	if err != nil {
		return err
	}
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return fmt.Errorf("serial number for %s: %w", certPath, err)
	}
	now := time.Now()
	tmpl.SerialNumber = serial
	tmpl.NotBefore = now.Add(-clockSkew)
	tmpl.NotAfter = now.Add(certValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, key.Public(), caKey)
	if err != nil {
		return fmt.Errorf("sign certificate %s: %w", certPath, err)
	}
	return writePair(certPath, keyPath, pem.EncodeToMemory(&pem.Block{Type: cert.CertificateBlockType, Bytes: der}), keyPEM)
}

// writePair writes the key first, so a certificate on disk always has its key.
func writePair(certPath, keyPath string, certPEM, keyPEM []byte) error {
	if err := keyutil.WriteKey(keyPath, keyPEM); err != nil {
		return fmt.Errorf("write key %s: %w", keyPath, err)
	}
	if err := cert.WriteCert(certPath, certPEM); err != nil {
		return fmt.Errorf("write certificate %s: %w", certPath, err)
	}
	return nil
}

// writeServiceAccountKeys writes a new token-signing key and its public half
// ("PUBLIC KEY" PEM, what --service-account-key-file reads). keyutil reads
// public keys but has no encoder for them, so that one is encoded here.
func writeServiceAccountKeys(privPath, pubPath string) error {
	key, keyPEM, err := newKey()
	if err != nil {
		return err
	}
	der, err := x509.MarshalPKIXPublicKey(key.Public())
	if err != nil {
		return fmt.Errorf("encode public key: %w", err)
	}
	if err := keyutil.WriteKey(privPath, keyPEM); err != nil {
		return fmt.Errorf("write %s: %w", privPath, err)
	}
	if err := keyutil.WriteKey(pubPath, pem.EncodeToMemory(&pem.Block{Type: keyutil.PublicKeyBlockType, Bytes: der})); err != nil {
		return fmt.Errorf("write %s: %w", pubPath, err)
	}
	return nil
}

// loadCA reads the stack's CA certificate and key.
func loadCA(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	hint := fmt.Sprintf("delete %s to regenerate the stack's CA", filepath.Dir(certPath))
	certs, err := cert.CertsFromFile(certPath)
	if err != nil {
		return nil, nil, fmt.Errorf("read CA certificate: %w; %s", err, hint)
	}
	key, err := keyutil.PrivateKeyFromFile(keyPath)
	if err != nil {
		return nil, nil, fmt.Errorf("read CA key: %w; %s", err, hint)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, nil, fmt.Errorf("CA key %s of type %T cannot sign; %s", keyPath, key, hint)
	}
	return certs[0], signer, nil
}
