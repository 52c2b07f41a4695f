// Package registry is the one place Flotilla connects to member
// clusters: it builds clients from a Cluster's spec.apiEndpoint and the
// credentials Secret its spec.secretRef names (keys caBundle and token, as in
// Karmada), and keeps per-member informers on the objects Flotilla manages
// there, so control-plane memory grows with what Flotilla owns, not with the
// size of the members.
package registry

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// ManagedLabel marks every object Flotilla creates in a member cluster
// (Karmada's karmada.io/managed label), so informers can watch only those.
const ManagedLabel = "karmada.io/managed"

// QueryFromClusterAnnotation names, on an object read from a member for a
// fleet-wide answer (the metrics adapter's PodMetrics and NodeMetrics,
// `flotilla get -o yaml`), the member cluster it came from: Karmada's
// resource.karmada.io/query-from-cluster, which karmadactl reads too.
const QueryFromClusterAnnotation = "resource.karmada.io/query-from-cluster"

// Member is a connection to one member cluster.
type Member struct {
	Name    string
	Config  *rest.Config
	Kube    kubernetes.Interface
	Dynamic dynamic.Interface
	// Mapper maps kinds to resources using the member's discovery, cached
	// and reset on a miss.
	Mapper *restmapper.DeferredDiscoveryRESTMapper

	fingerprint string
	checked     time.Time // when the Cluster and its Secret were last read (under Registry.mu)
	factory     dynamicinformer.DynamicSharedInformerFactory
	stop        chan struct{}

	mu       sync.Mutex
	watching map[schema.GroupVersionResource]cache.SharedIndexInformer
	nodes    *Nodes // started by the first Nodes call
}

// Registry holds a Member per registered cluster, built lazily and rebuilt
// when the Cluster's endpoint or credentials change.
type Registry struct {
	// Reader reads Clusters and Secrets on the control plane (normally a cache).
	Reader client.Reader
	// OnManagedObjectChange is called for every add, update or delete of a
	// managed object in any member, with the member name and the object;
	// initial is true for the adds of an informer's first list, which only
	// say what already exists (a consumer may give them a lower priority).
	OnManagedObjectChange func(cluster string, gvr schema.GroupVersionResource, obj metav1.Object, initial bool)
	// Local holds the connections of clusters reached without the control
	// plane's credentials: the member a Pull-mode agent runs beside, by
	// cluster name. Their Cluster objects and Secrets are not read.
	Local map[string]*rest.Config

	mu      sync.Mutex
	members map[string]*Member
}

// Recheck is how long Get trusts a connection before reading the Cluster and
// its Secret again. Every Work reconcile asks for its member; reading and
// copying the Cluster each time was the controller manager's largest
// allocation. A changed endpoint or credential is picked up within Recheck
// (and at once by ForCluster, which the cluster controller calls on every
// probe); a deleted cluster is forgotten by the cluster controller at once.
const Recheck = 5 * time.Second

// Get returns the connection to cluster name. Errors: the Cluster or its
// Secret does not exist, the Secret lacks a token, or the config is invalid.
func (r *Registry) Get(ctx context.Context, name string) (*Member, error) {
	r.mu.Lock()
	m, ok := r.members[name]
	fresh := ok && time.Since(m.checked) < Recheck
	r.mu.Unlock()
	if fresh {
		return m, nil
	}
	if _, ok := r.Local[name]; ok {
		return r.ForCluster(ctx, &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name}})
	}
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
		return nil, fmt.Errorf("get Cluster %s: %w", name, err)
	}
	return r.ForCluster(ctx, cluster)
}

// ForCluster is Get for a Cluster already at hand.
func (r *Registry) ForCluster(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*Member, error) {
	cfg, err := r.restConfig(ctx, cluster)
	if err != nil {
		return nil, err
	}
	fp := fingerprint(cfg)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.members == nil {
		r.members = map[string]*Member{}
	}
	if m, ok := r.members[cluster.Name]; ok && m.fingerprint == fp {
		m.checked = time.Now()
		return m, nil
	} else if ok {
		close(m.stop)
	}
	m, err := r.newMember(cluster.Name, cfg, fp)
	if err != nil {
		return nil, err
	}
	m.checked = time.Now()
	r.members[cluster.Name] = m
	return m, nil
}

// Forget drops the connection to a cluster and stops its informers.
func (r *Registry) Forget(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if m, ok := r.members[name]; ok {
		close(m.stop)
		delete(r.members, name)
	}
}

func (r *Registry) restConfig(ctx context.Context, cluster *clusterv1alpha1.Cluster) (*rest.Config, error) {
	if cfg, ok := r.Local[cluster.Name]; ok {
		cfg = rest.CopyConfig(cfg)
		cfg.QPS, cfg.Burst = 500, 1000
		return cfg, nil
	}
	if cluster.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %s has no spec.apiEndpoint", cluster.Name)
	}
	ref := cluster.Spec.SecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %s has no spec.secretRef", cluster.Name)
	}
	secret := &corev1.Secret{}
	if err := r.Reader.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("get credentials Secret %s/%s of cluster %s: %w", ref.Namespace, ref.Name, cluster.Name, err)
	}
	token := secret.Data[clusterv1alpha1.SecretTokenKey]
	if len(token) == 0 {
		return nil, fmt.Errorf("credentials Secret %s/%s of cluster %s has no %q key", ref.Namespace, ref.Name, cluster.Name, clusterv1alpha1.SecretTokenKey)
	}
	cfg := &rest.Config{
		Host:        cluster.Spec.APIEndpoint,
		BearerToken: string(token),
		TLSClientConfig: rest.TLSClientConfig{
			CAData:   secret.Data[clusterv1alpha1.SecretCADataKey],
			Insecure: cluster.Spec.InsecureSkipTLSVerification,
		},
		// Flotilla is the members' main writer; the client-go default of
		// 5 QPS would make propagation crawl.
		QPS:     500,
		Burst:   1000,
		Timeout: 30 * time.Second,
	}
	if cfg.Insecure {
		cfg.CAData = nil
	}
	return cfg, nil
}

func fingerprint(cfg *rest.Config) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s|%s|%x|%v|%s|%s|%x", cfg.Host, cfg.BearerToken, cfg.CAData, cfg.Insecure, cfg.CertFile, cfg.CAFile, cfg.CertData)
	return fmt.Sprintf("%x", h.Sum(nil))
}

func (r *Registry) newMember(name string, cfg *rest.Config, fp string) (*Member, error) {
	kube, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	m := &Member{
		Name: name, Config: cfg, Kube: kube, Dynamic: dyn,
		Mapper:      restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc)),
		fingerprint: fp,
		stop:        make(chan struct{}),
		watching:    map[schema.GroupVersionResource]cache.SharedIndexInformer{},
	}
	m.factory = dynamicinformer.NewFilteredDynamicSharedInformerFactory(dyn, 0, metav1.NamespaceAll, func(o *metav1.ListOptions) {
		o.LabelSelector = ManagedLabel + "=true"
	})
	return m, nil
}

// Watch makes sure the member's managed objects of gvr are watched, calling
// the registry's OnManagedObjectChange on every change. It returns the
// informer so callers can read from its cache once synced.
func (r *Registry) Watch(m *Member, gvr schema.GroupVersionResource) cache.SharedIndexInformer {
	m.mu.Lock()
	defer m.mu.Unlock()
	if inf, ok := m.watching[gvr]; ok {
		return inf
	}
	inf := m.factory.ForResource(gvr).Informer()
	// managedFields are never read; dropping them saves a large share of
	// each cached member object. Updates sent without them keep the
	// member's own (the API server treats an absent list as unchanged).
	_ = inf.SetTransform(crcache.TransformStripManagedFields())
	notify := func(obj any, initial bool) {
		if r.OnManagedObjectChange == nil {
			return
		}
		if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		if o, ok := obj.(metav1.Object); ok {
			r.OnManagedObjectChange(m.Name, gvr, o, initial)
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc:    notify,
		UpdateFunc: func(_, n any) { notify(n, false) },
		DeleteFunc: func(obj any) { notify(obj, false) },
	})
	m.watching[gvr] = inf
	m.factory.Start(m.stop)
	return inf
}

// SyncModes follows every Cluster's spec.syncMode from an informer, so the
// controllers that act on members can tell, without reading the Cluster,
// whether the control plane reaches a cluster itself (Push) or leaves it to
// the cluster's agent (Pull).
type SyncModes struct {
	mu   sync.RWMutex
	pull map[string]bool
}

// Track keeps s in step with the Clusters of inf (an informer of
// clusterv1alpha1.Cluster). Errors: the handler cannot be added.
func (s *SyncModes) Track(inf interface {
	AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
}) error {
	set := func(obj any) {
		if c, ok := obj.(*clusterv1alpha1.Cluster); ok {
			s.mu.Lock()
			if s.pull == nil {
				s.pull = map[string]bool{}
			}
			s.pull[c.Name] = c.Spec.SyncMode == clusterv1alpha1.Pull
			s.mu.Unlock()
		}
	}
	_, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, n any) { set(n) },
		DeleteFunc: func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			if c, ok := obj.(*clusterv1alpha1.Cluster); ok {
				s.mu.Lock()
				delete(s.pull, c.Name)
				s.mu.Unlock()
			}
		},
	})
	return err
}

// Pull reports whether cluster name is in Pull mode (false for a cluster
// not seen).
func (s *SyncModes) Pull(name string) bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.pull[name]
}
