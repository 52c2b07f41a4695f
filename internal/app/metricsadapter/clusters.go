package metricsadapter

import (
	"context"
	"sort"
	"sync"
	"time"

	apimeta "k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/discovery/cached/memory"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/restmapper"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/metrics/pkg/client/custom_metrics"
	"k8s.io/metrics/pkg/client/external_metrics"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// member is what the adapter keeps per member cluster: metadata-only caches
// of its pods and nodes (to know which clusters to ask), and clients of its
// three metrics APIs whose every request gives up after the cluster timeout.
type member struct {
	name string
	conn *registry.Member // the registry's connection these were built from

	pods, nodes cache.SharedIndexInformer
	stop        chan struct{}

	resource  versioned.Interface
	custom    custom_metrics.CustomMetricsClient
	external  external_metrics.ExternalMetricsClient
	discovery discovery.DiscoveryInterface
	mapper    apimeta.RESTMapper

	mu          sync.Mutex
	customInfo  []metav1.APIResource // custom.metrics.k8s.io resources, last discovered
	externalRes []metav1.APIResource
}

// clusterSet keeps a member per Ready Cluster of the control plane.
type clusterSet struct {
	reader   client.Reader // Clusters and their Secrets (a cache)
	registry *registry.Registry
	timeout  time.Duration

	mu      sync.Mutex
	members map[string]*member
	// left logs the members left out of the answers (once each).
	left leftOut
}

func newClusterSet(reader client.Reader, timeout time.Duration) *clusterSet {
	return &clusterSet{
		reader:   reader,
		registry: &registry.Registry{Reader: reader},
		timeout:  timeout,
		members:  map[string]*member{},
	}
}

// ready returns the members of the Clusters whose Ready condition is not
// False, sorted by name, building (and starting the caches of) those it has
// not met yet. A Cluster it cannot connect to is logged and left out.
func (s *clusterSet) ready(ctx context.Context) []*member {
	list := &clusterv1alpha1.ClusterList{}
	if err := s.reader.List(ctx, list); err != nil {
		klog.FromContext(ctx).Error(err, "List Clusters")
		return nil
	}
	var out []*member
	seen := map[string]bool{}
	for i := range list.Items {
		c := &list.Items[i]
		seen[c.Name] = true
		if !c.DeletionTimestamp.IsZero() || apimeta.IsStatusConditionFalse(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
			continue
		}
		m, err := s.member(ctx, c)
		if err != nil {
			klog.FromContext(ctx).V(2).Info("Cluster left out of metrics queries", "cluster", c.Name, "err", err)
			continue
		}
		out = append(out, m)
	}
	s.mu.Lock()
	for name, m := range s.members {
		if !seen[name] {
			close(m.stop)
			delete(s.members, name)
			s.registry.Forget(name)
		}
	}
	s.mu.Unlock()
	sort.Slice(out, func(i, j int) bool { return out[i].name < out[j].name })
	return out
}

// readyByName is ready, keyed by cluster name.
func (s *clusterSet) readyByName(ctx context.Context) map[string]*member {
	out := map[string]*member{}
	for _, m := range s.ready(ctx) {
		out[m.name] = m
	}
	return out
}

// known returns the members built so far, whatever their readiness now,
// without reading the Clusters: for answers that take no context and must
// not wait (the metric lists).
func (s *clusterSet) known() []*member {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]*member, 0, len(s.members))
	for _, m := range s.members {
		out = append(out, m)
	}
	return out
}

func (s *clusterSet) member(ctx context.Context, c *clusterv1alpha1.Cluster) (*member, error) {
	conn, err := s.registry.ForCluster(ctx, c)
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if m, ok := s.members[c.Name]; ok && m.conn == conn {
		return m, nil
	} else if ok {
		close(m.stop)
	}
	m, err := s.newMember(c.Name, conn)
	if err != nil {
		return nil, err
	}
	s.members[c.Name] = m
	return m, nil
}

// stripPodMetadata keeps what the adapter reads of a pod or node: its name,
// namespace, labels and deletion time.
func stripPodMetadata(obj any) (any, error) {
	p, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: p.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Name: p.Name, Namespace: p.Namespace, Labels: p.Labels, UID: p.UID,
		ResourceVersion: p.ResourceVersion, DeletionTimestamp: p.DeletionTimestamp, CreationTimestamp: p.CreationTimestamp,
	}}, nil
}

func (s *clusterSet) newMember(name string, conn *registry.Member) (*member, error) {
	// Every metrics request to a member gives up after the cluster timeout,
	// so a stopped or slow member cannot hold a query up.
	cfg := rest.CopyConfig(conn.Config)
	cfg.Timeout = s.timeout
	meta, err := metadata.NewForConfig(conn.Config)
	if err != nil {
		return nil, err
	}
	resource, err := versioned.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, err
	}
	mapper := restmapper.NewDeferredDiscoveryRESTMapper(memory.NewMemCacheClient(disc))
	custom := custom_metrics.NewForConfig(cfg, mapper, custom_metrics.NewAvailableAPIsGetter(disc))
	external, err := external_metrics.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	m := &member{name: name, conn: conn, stop: make(chan struct{}),
		resource: resource, custom: custom, external: external, discovery: disc, mapper: mapper}
	factory := metadatainformer.NewSharedInformerFactory(meta, 0)
	m.pods = factory.ForResource(podsGVR).Informer()
	m.nodes = factory.ForResource(nodesGVR).Informer()
	for _, inf := range []cache.SharedIndexInformer{m.pods, m.nodes} {
		_ = inf.SetTransform(stripPodMetadata)
	}
	_ = m.pods.AddIndexers(cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc})
	factory.Start(m.stop)
	// The first query waits (at most the cluster timeout) for the caches.
	ctx, cancel := context.WithTimeout(context.Background(), s.timeout)
	defer cancel()
	cache.WaitForCacheSync(ctx.Done(), m.pods.HasSynced, m.nodes.HasSynced)
	return m, nil
}

// objects returns the cached objects of inf in namespace ("" for all).
func objects(inf cache.SharedIndexInformer, namespace string) []runtime.Object {
	var items []any
	if namespace == "" {
		items = inf.GetStore().List()
	} else {
		items, _ = inf.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	}
	out := make([]runtime.Object, 0, len(items))
	for _, it := range items {
		if o, ok := it.(*metav1.PartialObjectMetadata); ok && o.DeletionTimestamp == nil {
			out = append(out, o)
		}
	}
	return out
}

// refresh re-reads every member's custom and external metrics discovery,
// for ListAllMetrics and ListAllExternalMetrics (which take no context and
// must answer at once).
func (s *clusterSet) refresh(ctx context.Context) {
	for _, m := range s.ready(ctx) {
		custom := discoverResources(m.discovery, "custom.metrics.k8s.io", "v1beta2", "v1beta1")
		external := discoverResources(m.discovery, "external.metrics.k8s.io", "v1beta1")
		m.mu.Lock()
		m.customInfo, m.externalRes = custom, external
		m.mu.Unlock()
	}
}

// discoverResources returns the resources of the first version of group the
// member serves; nil when it serves none.
func discoverResources(d discovery.DiscoveryInterface, group string, versions ...string) []metav1.APIResource {
	for _, v := range versions {
		list, err := d.ServerResourcesForGroupVersion(group + "/" + v)
		if err == nil && list != nil {
			return list.APIResources
		}
	}
	return nil
}

// run starts the caches of every Ready member at once and keeps discovery
// fresh, every period, until ctx ends.
func (s *clusterSet) run(ctx context.Context, period time.Duration) {
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		s.refresh(ctx)
		select {
		case <-ctx.Done():
			s.mu.Lock()
			for name, m := range s.members {
				close(m.stop)
				delete(s.members, name)
			}
			s.mu.Unlock()
			return
		case <-t.C:
		}
	}
}
