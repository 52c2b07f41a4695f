// Package dashboard is `flotilla dashboard`: a web dashboard of the fleet
// served on the control plane's side. Every page and action runs as the
// signed-in user (their own bearer token, or impersonation of the subject of
// a client certificate the control plane's client CA signed), so the
// control plane's RBAC decides what each user sees and may do. Pages are
// rendered on the server (html/template) and follow the control plane's
// watches through server-sent events: the browser re-reads a page when one
// of the kinds it shows changes.
//
// Pages: fleet (Clusters), workloads (bindings: a templates × clusters
// matrix), a template's story (internal/explain), policies, autoscaling
// (FederatedHPA, CronFederatedHPA), operations in progress (graceful
// evictions, failovers, rollouts, rebalancers) and metrics (the components'
// Prometheus metrics). Actions: cordon, uncordon and taint a cluster,
// trigger a WorkloadRebalancer, pause and resume a staged rollout; each is
// first run as a server-side dry run, whose result the user confirms.
package dashboard

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// Options are the flags of `flotilla dashboard`.
type Options struct {
	// Kubeconfig and Context give the dashboard's own credentials: used to
	// watch for changes (the notice carries no object), to impersonate a
	// user who signs in with a client certificate, and to scrape metrics.
	Kubeconfig, Context string
	BindAddress         string
	// SecurePort is the HTTPS port (TCP); the dashboard serves nothing in
	// plain HTTP.
	SecurePort              int
	TLSCertFile, TLSKeyFile string
	// ClientCAFile is the CA bundle that signs client certificates (the
	// control plane's --client-ca-file); empty: token sign-in only.
	ClientCAFile string
	// MetricsURLs are the components' Prometheus endpoints, "name=url".
	MetricsURLs []string
	// SessionTTL is how long a token sign-in lasts.
	SessionTTL time.Duration
	// ScrapeInterval is how often the metrics and the FederatedHPAs'
	// replicas are sampled for the plots.
	ScrapeInterval time.Duration
}

// AddFlags registers the options on fs.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane, with the dashboard's own credentials (they must allow watch on the kinds shown and impersonation; users act with their own)")
	fs.StringVar(&o.Context, "context", "", "context in --kubeconfig")
	fs.StringVar(&o.BindAddress, "bind-address", "127.0.0.1", "address to listen on")
	fs.IntVar(&o.SecurePort, "secure-port", 8443, "HTTPS port")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serving certificate (PEM)")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "serving certificate's key (PEM)")
	fs.StringVar(&o.ClientCAFile, "client-ca-file", "", "CA bundle of client certificates users may sign in with (the control plane's --client-ca-file); empty: bearer tokens only")
	fs.StringArrayVar(&o.MetricsURLs, "metrics-url", nil, "a component's Prometheus endpoint to plot, as name=url (repeatable), e.g. controller-manager=http://127.0.0.1:8080/metrics")
	fs.DurationVar(&o.SessionTTL, "session-ttl", 8*time.Hour, "how long a sign-in with a token lasts")
	fs.DurationVar(&o.ScrapeInterval, "scrape-interval", 5*time.Second, "how often metrics and FederatedHPA replicas are sampled for the plots")
}

// Validate checks the options, saying what to fix.
func (o *Options) Validate() error {
	var errs []error
	if o.TLSCertFile == "" || o.TLSKeyFile == "" {
		errs = append(errs, errors.New("--tls-cert-file and --tls-private-key-file are required: the dashboard serves HTTPS only"))
	}
	if o.SecurePort <= 0 || o.SecurePort > 65535 {
		errs = append(errs, fmt.Errorf("--secure-port must be between 1 and 65535, got %d", o.SecurePort))
	}
	for _, m := range o.MetricsURLs {
		if name, url, ok := strings.Cut(m, "="); !ok || name == "" || !strings.HasPrefix(url, "http") {
			errs = append(errs, fmt.Errorf("--metrics-url %q: want name=http(s)://host:port/metrics", m))
		}
	}
	if o.SessionTTL <= 0 {
		errs = append(errs, errors.New("--session-ttl must be positive"))
	}
	if o.ScrapeInterval < time.Second {
		errs = append(errs, errors.New("--scrape-interval must be at least 1s"))
	}
	return errors.Join(errs...)
}

// Server is the dashboard: its own clients, the signed-in users, the
// change notices and the sampled plots.
type Server struct {
	opts Options
	// own reaches the control plane with the dashboard's credentials;
	// anonymous is the same server and CA with none (a user's are added).
	own, anonymous *rest.Config
	scheme         *runtime.Scheme
	mapper         meta.RESTMapper
	// shortcuts also resolves kubectl's short names (deploy).
	shortcuts meta.RESTMapper
	ownClient client.Client
	sessions  *sessions
	hub       *hub
	samples   *samples
	clientCAs *x509.CertPool
}

// New returns a Server for the control plane cfg reaches (the dashboard's
// own credentials). Errors: unreadable client CA file.
func New(cfg *rest.Config, o Options) (*Server, error) {
	own := rest.CopyConfig(cfg)
	own.QPS, own.Burst = 100, 200
	anonymous := rest.AnonymousClientConfig(own)
	scheme := controlplane.NewScheme()
	d, err := discovery.NewDiscoveryClientForConfig(own)
	if err != nil {
		return nil, err
	}
	cached := memory.NewMemCacheClient(d)
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(cached)
	cl, err := client.New(own, client.Options{Scheme: scheme, Mapper: mapper})
	if err != nil {
		return nil, err
	}
	s := &Server{opts: o, own: own, anonymous: anonymous, scheme: scheme, mapper: mapper, ownClient: cl,
		shortcuts: restmapper.NewShortcutExpander(mapper, cached, nil),
		sessions:  newSessions(o.SessionTTL), hub: newHub(), samples: newSamples(120)}
	if o.ClientCAFile != "" {
		pem, err := os.ReadFile(o.ClientCAFile)
		if err != nil {
			return nil, fmt.Errorf("--client-ca-file: %w", err)
		}
		s.clientCAs = x509.NewCertPool()
		if !s.clientCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--client-ca-file %s holds no PEM certificate", o.ClientCAFile)
		}
	}
	return s, nil
}

// LoadConfig reads the dashboard's own credentials from o's kubeconfig
// (in-cluster when empty).
func LoadConfig(o Options) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.Kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.Context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("the dashboard's credentials (--kubeconfig, --context): %w", err)
	}
	return cfg, nil
}

// Start runs the watches that wake the pages and the samplers of the
// plots until ctx ends. It returns once the watches have synced or ctx
// ended.
func (s *Server) Start(ctx context.Context) error {
	if err := s.startWatches(ctx); err != nil {
		return err
	}
	go s.sample(ctx)
	return nil
}

// Run starts the server and serves HTTPS on the options' address until
// ctx ends.
func (s *Server) Run(ctx context.Context) error {
	if err := s.Start(ctx); err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(s.opts.TLSCertFile, s.opts.TLSKeyFile)
	if err != nil {
		return fmt.Errorf("serving certificate: %w", err)
	}
	addr := net.JoinHostPort(s.opts.BindAddress, fmt.Sprint(s.opts.SecurePort))
	srv := &http.Server{Addr: addr, Handler: s.Handler(), TLSConfig: s.TLSConfig(cert),
		ReadHeaderTimeout: 10 * time.Second}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", addr, err)
	}
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	klog.FromContext(ctx).Info("dashboard serving", "url", "https://"+addr)
	if err := srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// TLSConfig serves cert and asks for (without requiring) a client
// certificate signed by the client CA.
func (s *Server) TLSConfig(cert tls.Certificate) *tls.Config {
	c := &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	if s.clientCAs != nil {
		c.ClientCAs = s.clientCAs
		c.ClientAuth = tls.VerifyClientCertIfGiven
	}
	return c
}
