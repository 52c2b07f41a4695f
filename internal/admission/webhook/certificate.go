package webhook

import (
	"bytes"
	"context"
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/go-logr/logr"
	"sigs.k8s.io/controller-runtime/pkg/certwatcher"
	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// CertificatePoll is how often the serving certificate's files are read again for a change
// when inotify cannot watch them (controller-runtime's certwatcher polls as often besides).
const CertificatePoll = 10 * time.Second

// newWatcher is controller-runtime's certwatcher.New; tests replace it.
var newWatcher = certwatcher.New

// ServingCertificate serves the key pair in certPath and keyPath and reloads it when the files
// change (a rotated certificate is served without a restart). It returns the option that puts
// the certificate in the server's tls.Config (webhook.Options.TLSOpts) and the runnable that
// keeps it fresh (add it to the manager).
//
// It watches through controller-runtime's certwatcher (inotify and a poll). Where the machine
// has no inotify instance left (fs.inotify.max_user_instances reached: "too many open files"),
// it does not fail: it reloads by reading the files every CertificatePoll instead, and logs
// once that it does and which sysctl to raise.
//
// Errors: the key pair cannot be loaded (a file missing or unreadable, not a matching PEM
// certificate and key), with the paths named.
func ServingCertificate(certPath, keyPath string, log logr.Logger) (func(*tls.Config), manager.Runnable, error) {
	if _, err := tls.LoadX509KeyPair(certPath, keyPath); err != nil {
		return nil, nil, fmt.Errorf("load the serving certificate %s and key %s: %w", certPath, keyPath, err)
	}
	w, err := newWatcher(certPath, keyPath)
	if err == nil {
		return func(c *tls.Config) { c.GetCertificate = w.GetCertificate }, w, nil
	}
	log.Info("Cannot watch the serving certificate with inotify; reloading it by polling instead (raise the sysctl fs.inotify.max_user_instances to watch it)",
		"cert", certPath, "interval", CertificatePoll, "reason", err.Error())
	p := &pollingCertificate{certPath: certPath, keyPath: keyPath, interval: CertificatePoll, log: log}
	if err := p.reload(); err != nil {
		return nil, nil, err
	}
	return func(c *tls.Config) { c.GetCertificate = p.GetCertificate }, p, nil
}

// pollingCertificate serves a key pair read from files and reads them again every interval,
// keeping the last good pair when the new contents do not load (a rotation half written).
type pollingCertificate struct {
	certPath, keyPath string
	interval          time.Duration
	log               logr.Logger

	mu        sync.RWMutex
	cert      *tls.Certificate
	certPEM   []byte
	keyPEM    []byte
	lastError string
}

// GetCertificate is tls.Config.GetCertificate: the pair last loaded.
func (p *pollingCertificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	return p.cert, nil
}

// NeedLeaderElection is false: every replica serves.
func (p *pollingCertificate) NeedLeaderElection() bool { return false }

// Start reads the files every interval until ctx is done.
func (p *pollingCertificate) Start(ctx context.Context) error {
	t := time.NewTicker(p.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
			if err := p.reload(); err != nil {
				p.mu.Lock()
				first := err.Error() != p.lastError
				p.lastError = err.Error()
				p.mu.Unlock()
				if first {
					p.log.Error(err, "Keeping the serving certificate loaded before")
				}
			}
		}
	}
}

// reload loads the pair when the files' contents changed.
func (p *pollingCertificate) reload() error {
	certPEM, err := os.ReadFile(p.certPath)
	if err != nil {
		return fmt.Errorf("read the serving certificate: %w", err)
	}
	keyPEM, err := os.ReadFile(p.keyPath)
	if err != nil {
		return fmt.Errorf("read the serving key: %w", err)
	}
	p.mu.RLock()
	same := bytes.Equal(certPEM, p.certPEM) && bytes.Equal(keyPEM, p.keyPEM)
	p.mu.RUnlock()
	if same {
		return nil
	}
	cert, err := tls.X509KeyPair(certPEM, keyPEM)
	if err != nil {
		return fmt.Errorf("load the serving certificate %s and key %s: %w", p.certPath, p.keyPath, err)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	reloaded := p.cert != nil
	p.cert, p.certPEM, p.keyPEM, p.lastError = &cert, certPEM, keyPEM, ""
	if reloaded {
		p.log.Info("Reloaded the serving certificate", "cert", p.certPath)
	}
	return nil
}
