package webhook

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
)

// writePair writes a fresh self-signed certificate for name and its key into dir as tls.crt
// and tls.key.
func writePair(t *testing.T, dir, name string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: name},
		NotBefore: time.Now().Add(-time.Minute), NotAfter: time.Now().Add(time.Hour), DNSNames: []string{name}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.crt"), pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
}

// served returns the common name of the certificate the option's GetCertificate serves.
func served(t *testing.T, opt func(*tls.Config)) string {
	t.Helper()
	cfg := &tls.Config{}
	opt(cfg)
	cert, err := cfg.GetCertificate(&tls.ClientHelloInfo{})
	if err != nil || cert == nil {
		t.Fatalf("GetCertificate: %v, %v", cert, err)
	}
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

// Where the machine has no inotify instance left, the webhook still serves its certificate
// and picks up a rotated one by polling, instead of exiting at start.
func TestServingCertificateWithoutInotifyPolls(t *testing.T) {
	newWatcher = func(string, string) (*certwatcher.CertWatcher, error) {
		return nil, errors.Join(errors.New("couldn't initialize inotify"), syscall.EMFILE)
	}
	defer func() { newWatcher = certwatcher.New }()
	dir := t.TempDir()
	writePair(t, dir, "first")
	opt, runnable, err := ServingCertificate(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if got := served(t, opt); got != "first" {
		t.Fatalf("served %q, want first", got)
	}
	p := runnable.(*pollingCertificate)
	p.interval = 10 * time.Millisecond
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { _ = p.Start(ctx) }()

	// A half-written rotation keeps the pair loaded before.
	if err := os.WriteFile(filepath.Join(dir, "tls.key"), []byte("not a key"), 0o600); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if got := served(t, opt); got != "first" {
		t.Fatalf("served %q after a bad key was written, want the pair loaded before", got)
	}
	writePair(t, dir, "second")
	for deadline := time.Now().Add(5 * time.Second); served(t, opt) != "second"; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the rotated certificate was not served within 5s")
		}
	}
}

// With inotify, controller-runtime's certwatcher serves the pair.
func TestServingCertificateWatches(t *testing.T) {
	dir := t.TempDir()
	writePair(t, dir, "watched")
	opt, runnable, err := ServingCertificate(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), logr.Discard())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := runnable.(*certwatcher.CertWatcher); !ok {
		t.Skipf("inotify is not available here (%T)", runnable)
	}
	if got := served(t, opt); got != "watched" {
		t.Fatalf("served %q, want watched", got)
	}
}

// A missing certificate is an error that names the files.
func TestServingCertificateMissing(t *testing.T) {
	dir := t.TempDir()
	_, _, err := ServingCertificate(filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), logr.Discard())
	if err == nil || !strings.Contains(err.Error(), filepath.Join(dir, "tls.crt")) {
		t.Fatalf("error %v, want one naming %s", err, filepath.Join(dir, "tls.crt"))
	}
}
