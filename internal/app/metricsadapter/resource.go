package metricsadapter

import (
	"context"
	"fmt"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	corelisters "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"
	"k8s.io/metrics/pkg/apis/metrics"
	metricsv1beta1 "k8s.io/metrics/pkg/apis/metrics/v1beta1"

	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// QueryFromClusterAnnotation names, on every PodMetrics and NodeMetrics the
// adapter returns, the member cluster the item came from (karmadactl top
// reads it).
const QueryFromClusterAnnotation = registry.QueryFromClusterAnnotation

// selectorAnnotation carries, on the pod metadata the lister hands the
// getter (never on anything served), the label selector of the list, so the
// getter asks each member with one List instead of a Get per pod.
const selectorAnnotation = "internal.flotilla.io/selector"

var (
	podsGVR  = schema.GroupVersionResource{Version: "v1", Resource: "pods"}
	nodesGVR = schema.GroupVersionResource{Version: "v1", Resource: "nodes"}
)

// resourceMetrics serves metrics.k8s.io across the members: its pod and
// node listers read the members' metadata caches (so only the clusters that
// hold matching pods are asked) and its getter asks those members' own
// metrics.k8s.io, in parallel, and merges the answers.
type resourceMetrics struct {
	clusters *clusterSet
}

// annotated returns a copy of o carrying cluster (and selector when not
// empty) in its annotations.
func annotated(o *metav1.PartialObjectMetadata, cluster, selector string) *metav1.PartialObjectMetadata {
	c := &metav1.PartialObjectMetadata{TypeMeta: o.TypeMeta, ObjectMeta: o.ObjectMeta}
	c.Annotations = map[string]string{QueryFromClusterAnnotation: cluster}
	if selector != "" {
		c.Annotations[selectorAnnotation] = selector
	}
	return c
}

// podLister is a cache.GenericLister of pod metadata across the members.
type podLister struct {
	r         *resourceMetrics
	namespace string
}

func (l podLister) List(selector labels.Selector) ([]runtime.Object, error) {
	var out []runtime.Object
	sel := ""
	if selector != nil && !selector.Empty() {
		sel = selector.String()
	}
	for _, m := range l.r.clusters.ready(context.Background()) {
		for _, o := range objects(m.pods, l.namespace) {
			p := o.(*metav1.PartialObjectMetadata)
			if selector == nil || selector.Matches(labels.Set(p.Labels)) {
				out = append(out, annotated(p, m.name, sel))
			}
		}
	}
	return out, nil
}

func (l podLister) Get(name string) (runtime.Object, error) {
	var found *metav1.PartialObjectMetadata
	var in []string
	for _, m := range l.r.clusters.ready(context.Background()) {
		key := name
		if l.namespace != "" {
			key = l.namespace + "/" + name
		}
		obj, ok, _ := m.pods.GetStore().GetByKey(key)
		if !ok {
			continue
		}
		if p, ok := obj.(*metav1.PartialObjectMetadata); ok && p.DeletionTimestamp == nil {
			found = annotated(p, m.name, "")
			in = append(in, m.name)
		}
	}
	switch len(in) {
	case 0:
		return nil, apierrors.NewNotFound(corev1.Resource("pods"), name)
	case 1:
		return found, nil
	default:
		return nil, apierrors.NewConflict(corev1.Resource("pods"), name,
			fmt.Errorf("pod %s/%s runs in several member clusters (%s): list by label selector instead", l.namespace, name, strings.Join(in, ", ")))
	}
}

func (l podLister) ByNamespace(namespace string) cache.GenericNamespaceLister {
	return podLister{r: l.r, namespace: namespace}
}

// nodeLister is a NodeLister of node metadata across the members (the
// nodes carry nothing but their metadata and the cluster annotation).
type nodeLister struct{ r *resourceMetrics }

func (l nodeLister) nodes(match func(*metav1.PartialObjectMetadata) bool) []*corev1.Node {
	var out []*corev1.Node
	for _, m := range l.r.clusters.ready(context.Background()) {
		for _, o := range objects(m.nodes, "") {
			p := o.(*metav1.PartialObjectMetadata)
			if match(p) {
				out = append(out, &corev1.Node{ObjectMeta: annotated(p, m.name, "").ObjectMeta})
			}
		}
	}
	return out
}

func (l nodeLister) List(selector labels.Selector) ([]*corev1.Node, error) {
	return l.nodes(func(p *metav1.PartialObjectMetadata) bool {
		return selector == nil || selector.Matches(labels.Set(p.Labels))
	}), nil
}

func (l nodeLister) Get(name string) (*corev1.Node, error) {
	nodes := l.nodes(func(p *metav1.PartialObjectMetadata) bool { return p.Name == name })
	if len(nodes) == 0 {
		return nil, apierrors.NewNotFound(corev1.Resource("nodes"), name)
	}
	return nodes[0], nil
}

var _ corelisters.NodeLister = nodeLister{}

// leftOut logs, once per member cluster and not on every query, that the
// cluster was left out of the adapter's answers, and once that it answers
// again: a member that lacks an API or cannot be reached would otherwise
// log on every sync of every FederatedHPA.
//
// The zero value is ready to use; each clusterSet has one.
type leftOut struct {
	mu  sync.Mutex
	out map[string]string // cluster -> the query it was first left out of
}

// failed records that cluster did not answer query.
func (l *leftOut) failed(cluster, query string, err error) {
	l.mu.Lock()
	_, known := l.out[cluster]
	if !known {
		if l.out == nil {
			l.out = map[string]string{}
		}
		l.out[cluster] = query
	}
	l.mu.Unlock()
	if !known {
		klog.InfoS("Left a member cluster out of the metrics answers; the other members' answer stands (logged once until it answers again)", "cluster", cluster, "query", query, "err", err)
	}
}

// answered records that cluster answered.
func (l *leftOut) answered(cluster string) {
	l.mu.Lock()
	_, was := l.out[cluster]
	delete(l.out, cluster)
	l.mu.Unlock()
	if was {
		klog.InfoS("A member cluster answers metrics queries again", "cluster", cluster)
	}
}

// fanOut runs query for every cluster in clusters in parallel and returns
// the answers of those that answered. A cluster that fails or passes the
// timeout is left out and logged (once, see leftOut); so is a member that
// does not serve the API (NotFound counts as an answer: query decides).
func fanOut[T any](left *leftOut, clusters []string, what string, query func(ctx context.Context, cluster string) (T, error)) map[string]T {
	return run(left, clusters, what, query, true)
}

// run is fanOut; track says whether the answers are noted in left (ask
// notes them itself: its query always answers, with the error inside).
func run[T any](left *leftOut, clusters []string, what string, query func(ctx context.Context, cluster string) (T, error), track bool) map[string]T {
	var mu sync.Mutex
	out := make(map[string]T, len(clusters))
	var wg sync.WaitGroup
	for _, c := range clusters {
		wg.Add(1)
		go func() {
			defer wg.Done()
			v, err := query(context.Background(), c)
			if err != nil {
				if track {
					left.failed(c, what, err)
				}
				return
			}
			if track {
				left.answered(c)
			}
			mu.Lock()
			out[c] = v
			mu.Unlock()
		}()
	}
	wg.Wait()
	return out
}

// GetPodMetrics asks each cluster that holds some of pods for their
// metrics (one List by namespace and selector per cluster, or a Get for a
// single pod) and returns those of pods, each annotated with its cluster.
// Pods a member has no metrics for yet are left out, as metrics-server does.
func (r *resourceMetrics) GetPodMetrics(pods ...*metav1.PartialObjectMetadata) ([]metrics.PodMetrics, error) {
	type want struct {
		names     map[types.NamespacedName]bool
		namespace string // "" when the pods span namespaces
		selector  string
	}
	byCluster := map[string]*want{}
	var clusters []string
	for _, p := range pods {
		c := p.Annotations[QueryFromClusterAnnotation]
		w, ok := byCluster[c]
		if !ok {
			w = &want{names: map[types.NamespacedName]bool{}, namespace: p.Namespace, selector: p.Annotations[selectorAnnotation]}
			byCluster[c] = w
			clusters = append(clusters, c)
		}
		if w.namespace != p.Namespace {
			w.namespace = ""
		}
		w.names[types.NamespacedName{Namespace: p.Namespace, Name: p.Name}] = true
	}
	members := r.clusters.readyByName(context.Background())
	answers := fanOut(&r.clusters.left, clusters, "pod metrics", func(ctx context.Context, c string) ([]metrics.PodMetrics, error) {
		m, ok := members[c]
		if !ok {
			return nil, fmt.Errorf("cluster is gone or not Ready")
		}
		w := byCluster[c]
		var items []metricsv1beta1.PodMetrics
		if len(w.names) == 1 {
			for k := range w.names {
				pm, err := m.resource.MetricsV1beta1().PodMetricses(k.Namespace).Get(ctx, k.Name, metav1.GetOptions{})
				if apierrors.IsNotFound(err) {
					return nil, nil
				} else if err != nil {
					return nil, err
				}
				items = append(items, *pm)
			}
		} else {
			list, err := m.resource.MetricsV1beta1().PodMetricses(w.namespace).List(ctx, metav1.ListOptions{LabelSelector: w.selector})
			if err != nil {
				return nil, err
			}
			items = list.Items
		}
		var out []metrics.PodMetrics
		for i := range items {
			if !w.names[types.NamespacedName{Namespace: items[i].Namespace, Name: items[i].Name}] {
				continue
			}
			var pm metrics.PodMetrics
			if err := metricsv1beta1.Convert_v1beta1_PodMetrics_To_metrics_PodMetrics(&items[i], &pm, nil); err != nil {
				return nil, err
			}
			pm.Annotations = withCluster(pm.Annotations, c)
			out = append(out, pm)
		}
		return out, nil
	})
	var out []metrics.PodMetrics
	for _, c := range clusters {
		out = append(out, answers[c]...)
	}
	return out, nil
}

// GetNodeMetrics asks each cluster that holds some of nodes for their
// metrics and returns them, each annotated with its cluster.
func (r *resourceMetrics) GetNodeMetrics(nodes ...*corev1.Node) ([]metrics.NodeMetrics, error) {
	names := map[string]map[string]bool{}
	var clusters []string
	for _, n := range nodes {
		c := n.Annotations[QueryFromClusterAnnotation]
		if names[c] == nil {
			names[c] = map[string]bool{}
			clusters = append(clusters, c)
		}
		names[c][n.Name] = true
	}
	members := r.clusters.readyByName(context.Background())
	answers := fanOut(&r.clusters.left, clusters, "node metrics", func(ctx context.Context, c string) ([]metrics.NodeMetrics, error) {
		m, ok := members[c]
		if !ok {
			return nil, fmt.Errorf("cluster is gone or not Ready")
		}
		list, err := m.resource.MetricsV1beta1().NodeMetricses().List(ctx, metav1.ListOptions{})
		if err != nil {
			return nil, err
		}
		var out []metrics.NodeMetrics
		for i := range list.Items {
			if !names[c][list.Items[i].Name] {
				continue
			}
			var nm metrics.NodeMetrics
			if err := metricsv1beta1.Convert_v1beta1_NodeMetrics_To_metrics_NodeMetrics(&list.Items[i], &nm, nil); err != nil {
				return nil, err
			}
			nm.Annotations = withCluster(nm.Annotations, c)
			out = append(out, nm)
		}
		return out, nil
	})
	var out []metrics.NodeMetrics
	for _, c := range clusters {
		out = append(out, answers[c]...)
	}
	return out, nil
}

func withCluster(a map[string]string, cluster string) map[string]string {
	if a == nil {
		a = map[string]string{}
	}
	a[QueryFromClusterAnnotation] = cluster
	return a
}
