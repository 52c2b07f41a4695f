// Package metricsadapter is `flotilla metrics-adapter`, Karmada's
// karmada-metrics-adapter: an aggregated API server that the control plane
// registers as the APIServices of metrics.k8s.io, custom.metrics.k8s.io
// (v1beta1, v1beta2) and external.metrics.k8s.io, and that answers them from
// the member clusters. A FederatedHPA's metrics client, `kubectl top` and
// any HPA-style tool then query the control plane as they would one
// cluster.
//
// Resource metrics (pods and nodes) ask only the members whose pod (node)
// metadata cache holds a match, in parallel, and annotate every item with
// resource.karmada.io/query-from-cluster. Custom metrics fan out the same
// way and merge (see customMetrics). External metrics work too (Karmada's
// adapter answers them with "not implemented"). A member that fails or
// passes --cluster-timeout is left out of the answer and logged.
package metricsadapter

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/klog/v2"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	cmapiserver "sigs.k8s.io/custom-metrics-apiserver/pkg/apiserver"
	basecmd "sigs.k8s.io/custom-metrics-apiserver/pkg/cmd"
	generatedcore "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/core"
	generatedcustommetrics "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/custommetrics"
	generatedexternalmetrics "sigs.k8s.io/custom-metrics-apiserver/pkg/generated/openapi/externalmetrics"
	msapi "sigs.k8s.io/metrics-server/pkg/api"
	generatedmetrics "sigs.k8s.io/metrics-server/pkg/api/generated/openapi"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// DefaultClusterTimeout is how long one member may take to answer before
// it is left out of a query (--cluster-timeout).
const DefaultClusterTimeout = 5 * time.Second

// CredentialsNamespace holds the Secrets the Clusters' spec.secretRef name
// (the only Secrets the adapter caches), as in Karmada.
const CredentialsNamespace = "karmada-cluster"

// Adapter is the metrics adapter's server and its flags.
type Adapter struct {
	basecmd.AdapterBase
	// Kubeconfig is the control plane's kubeconfig (--kubeconfig); the
	// delegated authentication and authorization use it too unless their
	// own flags say otherwise.
	Kubeconfig string
	// ClusterTimeout is --cluster-timeout.
	ClusterTimeout time.Duration
	// DiscoveryRefresh is how often the members' custom and external
	// metrics lists are read again (--member-discovery-interval).
	DiscoveryRefresh time.Duration
}

// NewAdapter returns an Adapter whose flags (the generic API server's:
// --secure-port, --tls-cert-file, --authentication-kubeconfig, ...; and
// --kubeconfig, --cluster-timeout, --member-discovery-interval) are on fs.
func NewAdapter(fs *pflag.FlagSet) *Adapter {
	a := &Adapter{ClusterTimeout: DefaultClusterTimeout, DiscoveryRefresh: 30 * time.Second}
	a.Name = "flotilla-metrics-adapter"
	a.FlagSet = fs
	a.InstallFlags()
	fs.StringVar(&a.Kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (also used for delegated authentication and authorization unless their flags are set)")
	fs.DurationVar(&a.ClusterTimeout, "cluster-timeout", a.ClusterTimeout, "how long a member cluster may take to answer one query before it is left out of the answer")
	fs.DurationVar(&a.DiscoveryRefresh, "member-discovery-interval", a.DiscoveryRefresh, "how often the members' custom and external metric lists (discovery) are read again")
	return a
}

func definitions(getters ...openapicommon.GetOpenAPIDefinitions) openapicommon.GetOpenAPIDefinitions {
	return func(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
		all := map[string]openapicommon.OpenAPIDefinition{}
		for _, g := range getters {
			for k, v := range g(ref) {
				all[k] = v
			}
		}
		return all
	}
}

// Run serves until ctx ends. Errors: bad flags or kubeconfig, the control
// plane unreachable at start, or the serving port taken.
func (a *Adapter) Run(ctx context.Context) error {
	if a.Kubeconfig != "" {
		if a.RemoteKubeConfigFile == "" {
			a.RemoteKubeConfigFile = a.Kubeconfig
		}
		o := a.CustomMetricsAdapterServerOptions
		if o.Authentication.RemoteKubeConfigFile == "" {
			o.Authentication.RemoteKubeConfigFile = a.Kubeconfig
		}
		if o.Authorization.RemoteKubeConfigFile == "" {
			o.Authorization.RemoteKubeConfigFile = a.Kubeconfig
		}
	}
	if a.ClusterTimeout <= 0 {
		return fmt.Errorf("--cluster-timeout must be positive, got %s", a.ClusterTimeout)
	}
	cfg, err := a.ClientConfig()
	if err != nil {
		return fmt.Errorf("control plane kubeconfig: %w", err)
	}
	defs := definitions(generatedcore.GetOpenAPIDefinitions, generatedcustommetrics.GetOpenAPIDefinitions,
		generatedexternalmetrics.GetOpenAPIDefinitions, generatedmetrics.GetOpenAPIDefinitions)
	a.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(defs, openapinamer.NewDefinitionNamer(cmapiserver.Scheme))
	a.OpenAPIConfig.Info.Title, a.OpenAPIConfig.Info.Version = a.Name, "1.0.0"
	a.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(defs, openapinamer.NewDefinitionNamer(cmapiserver.Scheme))
	a.OpenAPIV3Config.Info.Title, a.OpenAPIV3Config.Info.Version = a.Name, "1.0.0"

	// Clusters, and only the member credentials among Secrets.
	c, err := cache.New(cfg, cache.Options{
		Scheme: controlplane.NewScheme(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{CredentialsNamespace: {}}, Field: fields.Everything()},
		},
	})
	if err != nil {
		return err
	}
	if _, err := c.GetInformer(ctx, &clusterv1alpha1.Cluster{}); err != nil {
		return fmt.Errorf("watch Clusters (are the Karmada CRDs installed?): %w", err)
	}
	if _, err := c.GetInformer(ctx, &corev1.Secret{}); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { _ = c.Start(ctx) }()
	if !c.WaitForCacheSync(ctx) {
		return fmt.Errorf("the Cluster cache did not sync: %w", ctx.Err())
	}

	clusters := newClusterSet(c, a.ClusterTimeout)
	rm := &resourceMetrics{clusters: clusters}
	cm := &customMetrics{clusters: clusters, pods: rm}
	a.WithCustomMetrics(cm)
	a.WithExternalMetrics(cm)
	srv, err := a.Server()
	if err != nil {
		return err
	}
	if err := msapi.Install(rm, podLister{r: rm}, nodeLister{r: rm}, srv.GenericAPIServer, nil); err != nil {
		return fmt.Errorf("install metrics.k8s.io: %w", err)
	}
	go clusters.run(ctx, a.DiscoveryRefresh)
	klog.FromContext(ctx).Info("Metrics adapter configured", "clusterTimeout", a.ClusterTimeout)
	return srv.GenericAPIServer.PrepareRun().RunWithContext(ctx)
}
