package cli

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/app/metricsadapter"
)

func newMetricsAdapterCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "metrics-adapter",
		Short: "Serve the members' metrics on the control plane (Karmada's karmada-metrics-adapter)",
		Long: `Serve metrics.k8s.io, custom.metrics.k8s.io (v1beta1, v1beta2) and
external.metrics.k8s.io for the control plane, answered from the member
clusters: register it there as those APIServices. Pod and node metrics ask only
the members that hold matching pods, in parallel, and carry the annotation
resource.karmada.io/query-from-cluster; custom metrics are summed per object
across members; external metrics are the members' series together. A member
that does not answer within --cluster-timeout is left out and logged.

FederatedHPA and 'kubectl top' on the control plane use it. 'flotilla up'
runs one and registers it when the stack has members that are not bare.`,
		Example: `  flotilla metrics-adapter --kubeconfig ~/.flotilla/clusters/control-plane/admin.kubeconfig \
    --secure-port=6443 --tls-cert-file=serving.crt --tls-private-key-file=serving.key

  # Then, on the control plane
  kubectl top pods -A
  kubectl get --raw /apis/custom.metrics.k8s.io/v1beta2/namespaces/default/pods/*/http_requests_per_second`,
		Args: cobra.NoArgs,
	}
	a := metricsadapter.NewAdapter(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return a.Run(klog.NewContext(ctx, klog.Background()))
	}
	return cmd
}
