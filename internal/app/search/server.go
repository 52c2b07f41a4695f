// Package search is `flotilla search`, Karmada's karmada-search: an
// aggregated API server that the control plane registers as the APIService
// v1alpha1.search.karmada.io. It stores ResourceRegistries in etcd (as
// karmada-search does, under --etcd-prefix), caches the kinds they name from
// the member clusters they select (one informer per cluster and kind, objects
// kept as compact JSON without managedFields), and answers
// GET /apis/search.karmada.io/v1alpha1/search/cache/<Kubernetes path> from
// those caches, each item annotated resource.karmada.io/cached-from-cluster.
// A cluster that is not Ready is left out of answers with a warning. Every
// replica caches and serves; the holder of a Lease writes the registries'
// status.
package search

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"strings"

	"github.com/spf13/pflag"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apimachinery/pkg/util/uuid"
	openapinamer "k8s.io/apiserver/pkg/endpoints/openapi"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	genericapiserver "k8s.io/apiserver/pkg/server"
	genericfilters "k8s.io/apiserver/pkg/server/filters"
	genericoptions "k8s.io/apiserver/pkg/server/options"
	"k8s.io/apiserver/pkg/util/compatibility"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
	openapicommon "k8s.io/kube-openapi/pkg/common"
	openapispec "k8s.io/kube-openapi/pkg/validation/spec"
	kubeopenapi "k8s.io/kubernetes/pkg/generated/openapi"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/election"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// CredentialsNamespace holds the Secrets the Clusters' spec.secretRef name:
// the only Secrets the search server caches.
const CredentialsNamespace = "karmada-cluster"

// DefaultEtcdPrefix is where ResourceRegistries are kept in etcd
// (--etcd-prefix): /registry/search.karmada.io/resourceregistries/<name>.
const DefaultEtcdPrefix = "/registry"

// openAPIDefinitions are the search types' (generated in
// api/search/v1alpha1) and Kubernetes' own, which they refer to. Kubernetes
// names its definitions by model name (io.k8s.api.core.v1.X), the generated
// search types by Go path (k8s.io/api/core/v1.X): references are translated.
func openAPIDefinitions(ref openapicommon.ReferenceCallback) map[string]openapicommon.OpenAPIDefinition {
	defs := kubeopenapi.GetOpenAPIDefinitions(ref)
	translated := func(name string) openapispec.Ref { return ref(kubeModelName(name)) }
	for k, v := range searchv1alpha1.GetOpenAPIDefinitions(translated) {
		for i, d := range v.Dependencies {
			v.Dependencies[i] = kubeModelName(d)
		}
		defs[k] = v
	}
	return defs
}

// kubeModelName turns a Kubernetes type's Go path (k8s.io/api/core/v1.Pod)
// into its OpenAPI model name (io.k8s.api.core.v1.Pod); other names are
// returned as they are.
func kubeModelName(name string) string {
	if !strings.HasPrefix(name, "k8s.io/") {
		return name
	}
	return "io.k8s." + strings.ReplaceAll(strings.TrimPrefix(name, "k8s.io/"), "/", ".")
}

// Server is `flotilla search` and its flags.
type Server struct {
	// Options are the generic API server's: --secure-port, --tls-cert-file,
	// --etcd-servers, --etcd-prefix, --authentication-kubeconfig,
	// --kubeconfig (the control plane), ...
	Options *genericoptions.RecommendedOptions
}

// NewServer returns a Server whose flags are on fs.
func NewServer(fs *pflag.FlagSet) *Server {
	o := genericoptions.NewRecommendedOptions(DefaultEtcdPrefix, codecs.LegacyCodec(searchv1alpha1.SchemeGroupVersion))
	// ResourceRegistries are admitted by their own validation; no webhooks.
	o.Admission = nil
	o.AddFlags(fs)
	return &Server{Options: o}
}

// Run serves until ctx ends. Errors: bad flags, the control plane or etcd
// unreachable at start, or the serving port taken.
func (s *Server) Run(ctx context.Context) error {
	o := s.Options
	if kc := o.CoreAPI.CoreAPIKubeconfigPath; kc != "" {
		if o.Authentication.RemoteKubeConfigFile == "" {
			o.Authentication.RemoteKubeConfigFile = kc
		}
		if o.Authorization.RemoteKubeConfigFile == "" {
			o.Authorization.RemoteKubeConfigFile = kc
		}
	}
	if len(o.Etcd.StorageConfig.Transport.ServerList) == 0 {
		return fmt.Errorf("--etcd-servers is required: ResourceRegistries are kept in etcd (the control plane's own, under --etcd-prefix)")
	}
	if err := o.SecureServing.MaybeDefaultWithSelfSignedCerts("localhost", nil, []net.IP{net.ParseIP("127.0.0.1")}); err != nil {
		return fmt.Errorf("self-signed serving certificate: %w", err)
	}
	if errs := o.Validate(); len(errs) > 0 {
		return fmt.Errorf("%v", errs)
	}
	cfg := genericapiserver.NewRecommendedConfig(codecs)
	cfg.EffectiveVersion = compatibility.DefaultBuildEffectiveVersion()
	// A proxied request may be a watch, a log stream or an exec session.
	longRunning := genericfilters.BasicLongRunningRequestCheck(sets.NewString("watch"), sets.NewString())
	cfg.LongRunningFunc = func(r *http.Request, info *genericrequest.RequestInfo) bool {
		return info.Resource == "proxying" || longRunning(r, info)
	}
	namer := openapinamer.NewDefinitionNamer(scheme)
	cfg.OpenAPIConfig = genericapiserver.DefaultOpenAPIConfig(openAPIDefinitions, namer)
	cfg.OpenAPIConfig.Info.Title, cfg.OpenAPIConfig.Info.Version = "flotilla-search", "v1alpha1"
	cfg.OpenAPIV3Config = genericapiserver.DefaultOpenAPIV3Config(openAPIDefinitions, namer)
	cfg.OpenAPIV3Config.Info.Title, cfg.OpenAPIV3Config.Info.Version = "flotilla-search", "v1alpha1"
	if err := o.ApplyTo(cfg); err != nil {
		return err
	}
	server, err := cfg.Complete().New("flotilla-search", genericapiserver.NewEmptyDelegate())
	if err != nil {
		return err
	}
	storage, err := newRegistryStorage(cfg.RESTOptionsGetter)
	if err != nil {
		return err
	}
	kubeconfig, err := clientcmd.BuildConfigFromFlags("", o.CoreAPI.CoreAPIKubeconfigPath)
	if err != nil {
		return fmt.Errorf("control plane kubeconfig (--kubeconfig): %w", err)
	}
	// Clusters, and only the member credentials among Secrets.
	cpCache, err := cache.New(kubeconfig, cache.Options{
		Scheme: controlplane.NewScheme(),
		ByObject: map[client.Object]cache.ByObject{
			&corev1.Secret{}: {Namespaces: map[string]cache.Config{CredentialsNamespace: {}}, Field: fields.Everything()},
		},
	})
	if err != nil {
		return err
	}
	c := NewCache()
	registerCacheMetrics(c)
	group := genericapiserver.NewDefaultAPIGroupInfo(searchv1alpha1.GroupName, scheme, parameterCodec, codecs)
	group.VersionedResourcesStorageMap[searchv1alpha1.SchemeGroupVersion.Version] = map[string]rest.Storage{
		"resourceregistries":        storage.registry,
		"resourceregistries/status": storage.status,
		"search":                    &searchREST{cache: c},
		"proxying":                  &proxyingREST{proxy: &fleetProxy{cache: c, reader: cpCache, controlPlane: kubeconfig, authz: cfg.Authorization.Authorizer}},
	}
	if err := server.InstallAPIGroup(&group); err != nil {
		return fmt.Errorf("install search.karmada.io: %w", err)
	}

	cs, err := kubernetes.NewForConfig(kubeconfig)
	if err != nil {
		return err
	}
	host, _ := os.Hostname()
	lease, err := resourcelock.New(resourcelock.LeasesResourceLock, election.DefaultNamespace, election.SearchLease,
		cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: host + "_" + string(uuid.NewUUID())})
	if err != nil {
		return err
	}
	ctrl := &controller{cache: c, reader: cpCache, members: &registry.Registry{Reader: cpCache}, lease: lease}
	server.AddPostStartHookOrDie("search-cache-controller", func(hook genericapiserver.PostStartHookContext) error {
		go func() {
			if err := ctrl.run(hook, cpCache, hook.LoopbackClientConfig); err != nil {
				klog.FromContext(hook).Error(err, "The search cache controller stopped")
			}
		}()
		return nil
	})
	klog.FromContext(ctx).Info("Search server configured", "etcdPrefix", o.Etcd.StorageConfig.Prefix)
	return server.PrepareRun().RunWithContext(ctx)
}
