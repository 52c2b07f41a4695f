package component

import (
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/flotilla-io/flotilla/internal/localstack/membermetrics"
)

// RunMetrics runs a member's metrics APIs (package membermetrics): the
// resource metrics API on --resource-metrics-port and the custom and external
// metrics APIs on --custom-metrics-port, both on 127.0.0.1, until it is
// signalled. It returns the exit code: 2 for bad flags, 1 when a server fails.
func RunMetrics(args []string) int {
	fs := flag.NewFlagSet("metrics", flag.ContinueOnError)
	var o membermetrics.Options
	fs.StringVar(&o.Kubeconfig, "kubeconfig", "", "admin kubeconfig of the member")
	fs.StringVar(&o.TLSCertFile, "tls-cert-file", "", "serving certificate")
	fs.StringVar(&o.TLSKeyFile, "tls-private-key-file", "", "serving key")
	fs.IntVar(&o.ResourceMetricsPort, "resource-metrics-port", 0, "port of metrics.k8s.io (metrics-server)")
	fs.IntVar(&o.CustomMetricsPort, "custom-metrics-port", 0, "port of custom.metrics.k8s.io and external.metrics.k8s.io")
	fs.DurationVar(&o.MetricResolution, "metric-resolution", 5*time.Second, "how often metrics-server scrapes kwok")
	if err := fs.Parse(args); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	if o.Kubeconfig == "" || o.ResourceMetricsPort == 0 || o.CustomMetricsPort == 0 {
		fmt.Fprintln(os.Stderr, "error: --kubeconfig, --resource-metrics-port and --custom-metrics-port are required")
		return 2
	}
	ctx, cancel := signalContext()
	defer cancel()
	if err := membermetrics.Run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
