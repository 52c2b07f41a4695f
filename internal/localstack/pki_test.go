package localstack

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"os"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// readCert parses the single PEM certificate in path.
func readCert(t *testing.T, path string) *x509.Certificate {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, rest := pem.Decode(data)
	if block == nil || block.Type != "CERTIFICATE" || len(bytes.TrimSpace(rest)) != 0 {
		t.Fatalf("%s does not hold exactly one PEM certificate", path)
	}
	c, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatalf("parse %s: %v", path, err)
	}
	return c
}

func caPool(t *testing.T, p PKI) *x509.CertPool {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AddCert(readCert(t, p.CACert))
	return pool
}

// TestServingCertificateVerifiesForEveryName checks each name a client of the stack dials (or a
// pod inside a simulated member would) against the serving certificate and the stack's CA.
func TestServingCertificateVerifiesForEveryName(t *testing.T) {
	p, err := EnsurePKI(t.TempDir(), nil)
	if err != nil {
		t.Fatalf("EnsurePKI() error: %v", err)
	}
	serving, roots := readCert(t, p.ServingCert), caPool(t, p)
	tests := []struct {
		name    string
		host    string
		wantErr bool
	}{
		{name: "kubeconfigs and components dial the IPv4 loopback", host: "127.0.0.1"},
		{name: "the IPv6 loopback", host: "::1"},
		{name: "localhost", host: "localhost"},
		{name: "the kubernetes Service's cluster IP", host: "10.96.0.1"},
		{name: "the kubernetes Service's short name", host: "kubernetes"},
		{name: "its namespaced name", host: "kubernetes.default"},
		{name: "its service name", host: "kubernetes.default.svc"},
		{name: "its fully qualified name", host: "kubernetes.default.svc.cluster.local"},
		{name: "a name the stack never serves is refused", host: "example.com", wantErr: true},
		{name: "an address the stack never serves is refused", host: "10.0.0.1", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := serving.Verify(x509.VerifyOptions{DNSName: tt.host, Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}})
			if (err != nil) != tt.wantErr {
				t.Errorf("Verify(%s) error = %v, wantErr %v", tt.host, err, tt.wantErr)
			}
		})
	}
}

func TestEnsurePKIIssuesWhatTheStackUses(t *testing.T) {
	p, err := EnsurePKI(t.TempDir(), []string{"karmada", "member1"})
	if err != nil {
		t.Fatalf("EnsurePKI() error: %v", err)
	}
	roots := caPool(t, p)

	t.Run("the CA signs certificates for ten years", func(t *testing.T) {
		ca := readCert(t, p.CACert)
		if !ca.IsCA || ca.KeyUsage&x509.KeyUsageCertSign == 0 || ca.Subject.CommonName != "flotilla-ca" {
			t.Errorf("CA: IsCA=%v, KeyUsage=%b, CN=%q; want a CA named flotilla-ca that signs certificates", ca.IsCA, ca.KeyUsage, ca.Subject.CommonName)
		}
		if lifetime := time.Until(ca.NotAfter); lifetime < certValidity-24*time.Hour {
			t.Errorf("CA valid for %v more, want about %v", lifetime, certValidity)
		}
	})
	t.Run("the serving certificate is for servers only", func(t *testing.T) {
		c := readCert(t, p.ServingCert)
		if diff := cmp.Diff([]x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}, c.ExtKeyUsage); diff != "" {
			t.Errorf("extended key usages (-want +got):\n%s", diff)
		}
		if c.IsCA {
			t.Errorf("the serving certificate is a CA")
		}
	})
	t.Run("the admin client certificate is in system:masters, so RBAC lets it do anything", func(t *testing.T) {
		c := readCert(t, p.AdminCert)
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("admin certificate does not verify as a client: %v", err)
		}
		if diff := cmp.Diff([]string{"system:masters"}, c.Subject.Organization); diff != "" {
			t.Errorf("organization (-want +got):\n%s", diff)
		}
		if c.Subject.CommonName != "flotilla-admin" {
			t.Errorf("CN = %q, want flotilla-admin", c.Subject.CommonName)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err == nil {
			t.Errorf("admin certificate also verifies as a server")
		}
		if lifetime := time.Until(c.NotAfter); lifetime < certValidity-24*time.Hour {
			t.Errorf("admin certificate valid for %v more, want about %v", lifetime, certValidity)
		}
	})
	t.Run("the front-proxy client certificate has a CA of its own", func(t *testing.T) {
		proxyRoots := x509.NewCertPool()
		proxyRoots.AddCert(readCert(t, p.FrontProxyCACert))
		c := readCert(t, p.FrontProxyCert)
		if _, err := c.Verify(x509.VerifyOptions{Roots: proxyRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("the front-proxy client certificate does not verify with the front-proxy CA: %v", err)
		}
		if _, err := c.Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			t.Error("the front-proxy client certificate verifies with the stack's CA too")
		}
		if _, err := readCert(t, p.AdminCert).Verify(x509.VerifyOptions{Roots: proxyRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err == nil {
			t.Error("the admin certificate verifies with the front-proxy CA")
		}
	})
	t.Run("each certificate's key is beside it, readable by its owner only", func(t *testing.T) {
		for _, pair := range [][2]string{{p.CACert, p.CAKey}, {p.ServingCert, p.ServingKey}, {p.AdminCert, p.AdminKey}, {p.FrontProxyCACert, p.FrontProxyCAKey}, {p.FrontProxyCert, p.FrontProxyKey}} {
			if _, err := tls.LoadX509KeyPair(pair[0], pair[1]); err != nil {
				t.Errorf("LoadX509KeyPair(%s, %s): %v", pair[0], pair[1], err)
			}
			if info, err := os.Stat(pair[1]); err != nil || info.Mode().Perm() != 0o600 {
				t.Errorf("%s: mode %v, error %v; want 0600", pair[1], info.Mode().Perm(), err)
			}
		}
	})
	t.Run("each cluster has its own service-account key pair", func(t *testing.T) {
		var publics []*ecdsa.PublicKey
		for _, cluster := range []string{"karmada", "member1"} {
			privPath, pubPath := p.ServiceAccountKeys(cluster)
			priv := readPEM(t, privPath, "EC PRIVATE KEY")
			key, err := x509.ParseECPrivateKey(priv)
			if err != nil {
				t.Fatalf("%s: %v", privPath, err)
			}
			pub, err := x509.ParsePKIXPublicKey(readPEM(t, pubPath, "PUBLIC KEY"))
			if err != nil {
				t.Fatalf("%s: %v", pubPath, err)
			}
			if !key.PublicKey.Equal(pub) {
				t.Errorf("%s does not hold the public half of %s", pubPath, privPath)
			}
			publics = append(publics, &key.PublicKey)
		}
		if publics[0].Equal(publics[1]) {
			t.Errorf("two clusters share a service-account key")
		}
	})
}

// readPEM returns the bytes of the single PEM block of type blockType in path.
func readPEM(t *testing.T, path, blockType string) []byte {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(data)
	if block == nil || block.Type != blockType {
		t.Fatalf("%s does not hold a %s PEM block", path, blockType)
	}
	return block.Bytes
}

func TestEnsurePKIKeepsTheStackIdentityAcrossRestarts(t *testing.T) {
	dir := t.TempDir()
	p, err := EnsurePKI(dir, []string{"member1"})
	if err != nil {
		t.Fatalf("EnsurePKI() error: %v", err)
	}
	saKey, saPub := p.ServiceAccountKeys("member1")
	files := []string{p.CACert, p.CAKey, p.ServingCert, p.ServingKey, p.AdminCert, p.AdminKey, saKey, saPub}
	read := func() map[string]string {
		out := map[string]string{}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(data)
		}
		return out
	}
	first := read()

	t.Run("a restart keeps every file", func(t *testing.T) {
		if _, err := EnsurePKI(dir, []string{"member1"}); err != nil {
			t.Fatalf("EnsurePKI() again: %v", err)
		}
		if diff := cmp.Diff(first, read()); diff != "" {
			t.Errorf("files changed on restart (-before +after):\n%s", diff)
		}
	})
	t.Run("a lost serving key reissues the serving pair only", func(t *testing.T) {
		if err := os.Remove(p.ServingKey); err != nil {
			t.Fatal(err)
		}
		if _, err := EnsurePKI(dir, []string{"member1"}); err != nil {
			t.Fatalf("EnsurePKI() error: %v", err)
		}
		now := read()
		if now[p.ServingCert] == first[p.ServingCert] {
			t.Errorf("the serving certificate was not reissued with its key")
		}
		if now[p.CACert] != first[p.CACert] || now[p.AdminCert] != first[p.AdminCert] || now[saKey] != first[saKey] {
			t.Errorf("reissuing the serving pair changed the CA, the admin certificate or a service-account key")
		}
		if _, err := tls.LoadX509KeyPair(p.ServingCert, p.ServingKey); err != nil {
			t.Errorf("reissued serving pair: %v", err)
		}
		first = now
	})
	t.Run("a new CA reissues the certificates it signs and keeps service-account keys", func(t *testing.T) {
		if err := os.Remove(p.CAKey); err != nil {
			t.Fatal(err)
		}
		if _, err := EnsurePKI(dir, []string{"member1"}); err != nil {
			t.Fatalf("EnsurePKI() error: %v", err)
		}
		now := read()
		for _, f := range []string{p.CACert, p.ServingCert, p.AdminCert} {
			if now[f] == first[f] {
				t.Errorf("%s was kept across a new CA", f)
			}
		}
		if now[saKey] != first[saKey] || now[saPub] != first[saPub] {
			t.Errorf("a new CA replaced the service-account keys (issued tokens would stop verifying)")
		}
		roots := caPool(t, p)
		if _, err := readCert(t, p.ServingCert).Verify(x509.VerifyOptions{DNSName: "127.0.0.1", Roots: roots}); err != nil {
			t.Errorf("the reissued serving certificate does not verify against the new CA: %v", err)
		}
		if _, err := readCert(t, p.AdminCert).Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("the reissued admin certificate does not verify against the new CA: %v", err)
		}
	})
	t.Run("a data dir without a front-proxy CA gets one and a front-proxy certificate it signs", func(t *testing.T) {
		// As stacks made before the front-proxy CA: the client
		// certificate signed by the stack's CA, no front-proxy CA.
		first = read()
		old, err := os.ReadFile(p.FrontProxyCert)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{p.FrontProxyCACert, p.FrontProxyCAKey} {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
		if _, err := EnsurePKI(dir, []string{"member1"}); err != nil {
			t.Fatalf("EnsurePKI() error: %v", err)
		}
		if now, _ := os.ReadFile(p.FrontProxyCert); bytes.Equal(now, old) {
			t.Error("the front-proxy client certificate was kept across a new front-proxy CA")
		}
		proxyRoots := x509.NewCertPool()
		proxyRoots.AddCert(readCert(t, p.FrontProxyCACert))
		if _, err := readCert(t, p.FrontProxyCert).Verify(x509.VerifyOptions{Roots: proxyRoots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
			t.Errorf("the reissued front-proxy certificate does not verify with the new front-proxy CA: %v", err)
		}
		if diff := cmp.Diff(first, read()); diff != "" {
			t.Errorf("a new front-proxy CA changed other files (-before +after):\n%s", diff)
		}
	})
	t.Run("a CA that is not PEM is reported with how to recover", func(t *testing.T) {
		if err := os.WriteFile(p.CACert, []byte("garbage"), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := EnsurePKI(dir, nil)
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte("delete "+p.Dir)) {
			t.Errorf("EnsurePKI() error = %v, want one saying to delete %s", err, p.Dir)
		}
	})
}
