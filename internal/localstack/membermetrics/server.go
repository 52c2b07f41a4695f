package membermetrics

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/pflag"
	"golang.org/x/sync/errgroup"
	"k8s.io/klog/v2"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
	msoptions "sigs.k8s.io/metrics-server/cmd/metrics-server/app/options"
)

// Options configures Run. Both servers listen on 127.0.0.1, serve
// TLSCertFile, authenticate and authorize their callers by delegating to the
// member's API server (front-proxy request headers, TokenReview,
// SubjectAccessReview), and use Kubeconfig (admin) to read the member.
type Options struct {
	Kubeconfig              string
	TLSCertFile, TLSKeyFile string
	// ResourceMetricsPort serves metrics.k8s.io (metrics-server).
	ResourceMetricsPort int
	// CustomMetricsPort serves custom.metrics.k8s.io (v1beta1, v1beta2) and
	// external.metrics.k8s.io.
	CustomMetricsPort int
	// MetricResolution is how often metrics-server scrapes kwok. CPU shows
	// after two scrapes. metrics-server's own command refuses less than 10s;
	// the library does not, and the local stack uses 5s.
	MetricResolution time.Duration
}

// Run serves the member's three metrics APIs until ctx ends: the real
// metrics-server (sigs.k8s.io/metrics-server, as a library) scraping the
// kubelet resource endpoints that kwok simulates, and a
// custom-metrics-apiserver adapter with Provider. It returns the first
// server's error.
func Run(ctx context.Context, o Options) error {
	ms, err := newMetricsServer(o)
	if err != nil {
		return fmt.Errorf("metrics-server: %w", err)
	}
	adapter, err := newAdapter(o)
	if err != nil {
		return fmt.Errorf("custom metrics adapter: %w", err)
	}
	g, ctx := errgroup.WithContext(ctx)
	g.Go(func() error {
		if err := ms.RunUntil(ctx.Done()); err != nil {
			return fmt.Errorf("metrics-server: %w", err)
		}
		return nil
	})
	g.Go(func() error {
		if err := adapter.Run(ctx); err != nil {
			return fmt.Errorf("custom metrics adapter: %w", err)
		}
		return nil
	})
	return g.Wait()
}

type runner interface{ RunUntil(<-chan struct{}) error }

func newMetricsServer(o Options) (runner, error) {
	opts := msoptions.NewOptions()
	fs := pflag.NewFlagSet("metrics-server", pflag.ContinueOnError)
	for _, f := range opts.Flags().FlagSets {
		fs.AddFlagSet(f)
	}
	// The timeout must stay below the resolution or a slow scrape overlaps the next.
	timeout := max(o.MetricResolution*8/10, time.Second)
	args := []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(o.ResourceMetricsPort),
		"--tls-cert-file=" + o.TLSCertFile,
		"--tls-private-key-file=" + o.TLSKeyFile,
		"--kubeconfig=" + o.Kubeconfig,
		"--authentication-kubeconfig=" + o.Kubeconfig,
		"--authorization-kubeconfig=" + o.Kubeconfig,
		// kwok serves all of a member's nodes on one port with a
		// self-signed certificate; the node's InternalIP (127.0.0.1), its
		// status port and its metrics.k8s.io/resource-metrics-path
		// annotation say where.
		"--kubelet-insecure-tls",
		"--kubelet-use-node-status-port",
		"--kubelet-preferred-address-types=InternalIP,Hostname",
		"--metric-resolution=" + o.MetricResolution.String(),
		"--kubelet-request-timeout=" + timeout.String(),
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	// Validate is skipped on purpose: it refuses resolutions under 10s,
	// and it would apply metrics-server's logging config over ours.
	cfg, err := opts.ServerConfig()
	if err != nil {
		return nil, err
	}
	return cfg.Complete()
}

type adapter struct {
	basecmd.AdapterBase
}

func newAdapter(o Options) (*adapter, error) {
	a := &adapter{}
	a.Name = "flotilla-custom-metrics"
	a.FlagSet = pflag.NewFlagSet("custom-metrics", pflag.ContinueOnError)
	args := []string{
		"--bind-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(o.CustomMetricsPort),
		"--tls-cert-file=" + o.TLSCertFile,
		"--tls-private-key-file=" + o.TLSKeyFile,
		"--lister-kubeconfig=" + o.Kubeconfig,
		"--authentication-kubeconfig=" + o.Kubeconfig,
		"--authorization-kubeconfig=" + o.Kubeconfig,
	}
	if err := a.Flags().Parse(args); err != nil {
		return nil, err
	}
	informers, err := a.Informers()
	if err != nil {
		return nil, err
	}
	p := &Provider{
		Pods:       informers.Core().V1().Pods().Lister(),
		ConfigMaps: informers.Core().V1().ConfigMaps().Lister(),
	}
	a.WithCustomMetrics(p)
	a.WithExternalMetrics(p)
	klog.Background().Info("Custom metrics adapter configured", "port", o.CustomMetricsPort,
		"podAnnotationPrefix", PodMetricAnnotationPrefix, "externalMetricsConfigMap", ExternalMetricsConfigMap)
	return a, nil
}
