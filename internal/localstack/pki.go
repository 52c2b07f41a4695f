package localstack

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// PKI holds the paths of the per-stack certificate authority and the
// certificates signed by it. Every API server of the stack serves the same
// loopback serving certificate; clients authenticate with the admin client
// certificate (group system:masters), so RBAC stays on.
type PKI struct {
	Dir                     string
	CACert, CAKey           string
	ServingCert, ServingKey string
	AdminCert, AdminKey     string
}

// certValidity is how long generated certificates last: a local stack is
// long-lived, and expiry would lock users out of their own data.
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
	}
}

// ServiceAccountKeys returns the paths of the service-account signing key
// pair of one cluster (each cluster has its own, so tokens do not cross).
func (p PKI) ServiceAccountKeys(cluster string) (private, public string) {
	return filepath.Join(p.Dir, cluster+"-sa.key"), filepath.Join(p.Dir, cluster+"-sa.pub")
}

// EnsurePKI creates whatever is missing of the CA, the serving and admin
// certificates and the service-account keys of clusters. Existing files are
// kept, so a restarted stack keeps its identity and issued tokens stay valid.
func EnsurePKI(dataDir string, clusters []string) (PKI, error) {
	p := PKIPaths(dataDir)
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return p, fmt.Errorf("create pki dir: %w", err)
	}
	if !exists(p.CACert) || !exists(p.CAKey) {
		key, err := newKey()
		if err != nil {
			return p, err
		}
		tmpl := &x509.Certificate{
			Subject:               pkix.Name{CommonName: "flotilla-ca"},
			IsCA:                  true,
			KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			BasicConstraintsValid: true,
		}
		if err := writeCert(p.CACert, p.CAKey, tmpl, tmpl, key, key); err != nil {
			return p, err
		}
		// A new CA invalidates every leaf signed by an old one.
		for _, f := range []string{p.ServingCert, p.ServingKey, p.AdminCert, p.AdminKey} {
			_ = os.Remove(f)
		}
	}
	caCert, caKey, err := loadCA(p.CACert, p.CAKey)
	if err != nil {
		return p, err
	}
	if !exists(p.ServingCert) || !exists(p.ServingKey) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "flotilla-apiserver"},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
			DNSNames:    []string{"localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "kubernetes.default.svc.cluster.local"},
			IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP("10.96.0.1")},
		}
		if err := signLeaf(p.ServingCert, p.ServingKey, tmpl, caCert, caKey); err != nil {
			return p, err
		}
	}
	if !exists(p.AdminCert) || !exists(p.AdminKey) {
		tmpl := &x509.Certificate{
			Subject:     pkix.Name{CommonName: "flotilla-admin", Organization: []string{"system:masters"}},
			KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageKeyEncipherment,
			ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
		}
		if err := signLeaf(p.AdminCert, p.AdminKey, tmpl, caCert, caKey); err != nil {
			return p, err
		}
	}
	for _, c := range clusters {
		priv, pub := p.ServiceAccountKeys(c)
		if exists(priv) && exists(pub) {
			continue
		}
		key, err := newKey()
		if err != nil {
			return p, err
		}
		if err := writeKey(priv, key); err != nil {
			return p, err
		}
		der, err := x509.MarshalPKIXPublicKey(key.Public())
		if err != nil {
			return p, err
		}
		if err := os.WriteFile(pub, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: der}), 0o600); err != nil {
			return p, err
		}
	}
	return p, nil
}

func newKey() (*ecdsa.PrivateKey, error) {
	return ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
}

func signLeaf(certPath, keyPath string, tmpl *x509.Certificate, ca *x509.Certificate, caKey crypto.Signer) error {
	key, err := newKey()
	if err != nil {
		return err
	}
	return writeCert(certPath, keyPath, tmpl, ca, key, caKey)
}

func writeCert(certPath, keyPath string, tmpl, parent *x509.Certificate, key *ecdsa.PrivateKey, signer crypto.Signer) error {
	serial, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	if err != nil {
		return err
	}
	tmpl.SerialNumber = serial
	tmpl.NotBefore = time.Now().Add(-time.Hour)
	tmpl.NotAfter = time.Now().Add(certValidity)
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, key.Public(), signer)
	if err != nil {
		return fmt.Errorf("sign certificate %s: %w", certPath, err)
	}
	if err := writeKey(keyPath, key); err != nil {
		return err
	}
	return os.WriteFile(certPath, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600)
}

func writeKey(path string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: der}), 0o600)
}

func loadCA(certPath, keyPath string) (*x509.Certificate, crypto.Signer, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return nil, nil, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return nil, nil, err
	}
	cb, _ := pem.Decode(certPEM)
	kb, _ := pem.Decode(keyPEM)
	if cb == nil || kb == nil {
		return nil, nil, fmt.Errorf("%s or %s is not PEM; delete %s to regenerate the stack's CA", certPath, keyPath, filepath.Dir(certPath))
	}
	cert, err := x509.ParseCertificate(cb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	key, err := x509.ParseECPrivateKey(kb.Bytes)
	if err != nil {
		return nil, nil, err
	}
	return cert, key, nil
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, os.ErrNotExist)
}
