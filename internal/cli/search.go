package cli

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/app/search"
)

func newSearchCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "search",
		Short: "Serve search.karmada.io on the control plane: a cache of the members' objects (Karmada's karmada-search)",
		Long: `Serve the search.karmada.io/v1alpha1 API for the control plane: register it
there as the APIService v1alpha1.search.karmada.io. ResourceRegistries are kept
in etcd (--etcd-servers, under --etcd-prefix; the control plane's own etcd will
do). Each names kinds (apiVersion, kind, optionally a namespace) and the member
clusters to cache them from (targetCluster, a ClusterAffinity); the server
keeps one informer per cluster and kind and answers

  GET /apis/search.karmada.io/v1alpha1/search/cache/<Kubernetes path>

from those caches, every item annotated resource.karmada.io/cached-from-cluster,
with label and field selectors, limit and continue. A cluster that is not Ready
is left out of an answer, with a warning. A registry's Ready condition says
what it caches or why it cannot.

'flotilla up' runs one and registers it.`,
		Example: `  flotilla search --kubeconfig ~/.flotilla/clusters/control-plane/admin.kubeconfig \
    --etcd-servers=http://127.0.0.1:2379 \
    --secure-port=6443 --tls-cert-file=serving.crt --tls-private-key-file=serving.key

  # Then, on the control plane
  kubectl get --raw /apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/deployments`,
		Args: cobra.NoArgs,
	}
	s := search.NewServer(cmd.Flags())
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
		defer stop()
		return s.Run(klog.NewContext(ctx, klog.Background()))
	}
	return cmd
}
