package search

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// CachedFromClusterAnnotation names, on every object the search cache serves,
// the member cluster it was read from: Karmada's
// resource.karmada.io/cached-from-cluster.
const CachedFromClusterAnnotation = "resource.karmada.io/cached-from-cluster"

// memberCache is one informer: one kind of one member cluster, over all
// namespaces or one.
type memberCache struct {
	cluster    string
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
	namespace  string           // the informer's namespace; "" for all
	allowed    sets.Set[string] // namespaces served; nil for all
	member     *registry.Member // the connection it was started on
	informer   cache.SharedIndexInformer
	history    *history
	stop       chan struct{}
}

func (m *memberCache) synced() bool { return m.informer.HasSynced() }

// cacheKey identifies a memberCache.
type cacheKey struct {
	cluster string
	gvr     schema.GroupVersionResource
}

// want is what the ResourceRegistries ask of one (cluster, kind).
type want struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	member     *registry.Member
	namespaces sets.Set[string] // "" in it means all namespaces
}

// Cache holds the member caches the ResourceRegistries name, keyed by cluster
// and resource, and the clusters' readiness (a cluster that is not Ready is
// left out of answers, with a warning).
type Cache struct {
	mu       sync.RWMutex
	caches   map[cacheKey]*memberCache
	notReady map[string]string // cluster → why its items are left out
}

// NewCache returns an empty Cache.
func NewCache() *Cache {
	return &Cache{caches: map[cacheKey]*memberCache{}, notReady: map[string]string{}}
}

// registryOutcome is what one sync found for one ResourceRegistry.
type registryOutcome struct {
	unknown    []string // "Kind apiVersion" no selected cluster serves
	unreached  []string // "cluster: why"
	keys       []cacheKey
	noClusters bool
	notJoined  []string // clusterNames with no Cluster
	invalid    string   // spec.targetCluster does not compile
}

// Sync makes the caches match the ResourceRegistries over the given clusters:
// it starts an informer for each (cluster, kind) some registry selects, with
// the member's discovery resolving the kind, and stops the others. It returns
// each registry's Ready condition. Objects are cached compact, without
// managedFields (see cachedObject).
func (c *Cache) Sync(ctx context.Context, regs []searchv1alpha1.ResourceRegistry, clusters []clusterv1alpha1.Cluster, members func(*clusterv1alpha1.Cluster) (*registry.Member, error)) map[string]metav1.Condition {
	wants, outcomes, notReady := plan(regs, clusters, members)

	c.mu.Lock()
	c.notReady = notReady
	for k, mc := range c.caches {
		w, ok := wants[k]
		if !ok || w.member != mc.member || !sameNamespaces(mc, w) {
			close(mc.stop)
			go mc.history.stopWatchers()
			delete(c.caches, k)
			klog.FromContext(ctx).V(2).Info("Stopped a member cache", "cluster", k.cluster, "resource", k.gvr.String())
		}
	}
	for k, w := range wants {
		if _, ok := c.caches[k]; ok {
			continue
		}
		c.caches[k] = startMemberCache(k, w)
		klog.FromContext(ctx).V(2).Info("Started a member cache", "cluster", k.cluster, "resource", k.gvr.String(), "namespaces", sets.List(w.namespaces))
	}
	caches := c.caches
	c.mu.Unlock()

	conds := map[string]metav1.Condition{}
	for i := range regs {
		reg := &regs[i]
		conds[reg.Name] = readyCondition(reg, outcomes[reg.Name], caches)
	}
	return conds
}

// plan works out what the registries ask of the clusters: the caches wanted
// per (cluster, kind), what each registry found, and the clusters that are
// not Ready with why. It reads the members' discovery (through members) and
// nothing of the Cache.
func plan(regs []searchv1alpha1.ResourceRegistry, clusters []clusterv1alpha1.Cluster, members func(*clusterv1alpha1.Cluster) (*registry.Member, error)) (map[cacheKey]*want, map[string]*registryOutcome, map[string]string) {
	wants := map[cacheKey]*want{}
	outcomes := map[string]*registryOutcome{}
	notReady := map[string]string{}
	for i := range clusters {
		if r := meta.FindStatusCondition(clusters[i].Status.Conditions, clusterv1alpha1.ClusterConditionReady); r == nil || r.Status != metav1.ConditionTrue {
			why := "its Ready condition is not True"
			if r != nil && r.Message != "" {
				why = fmt.Sprintf("it is not Ready (%s)", r.Message)
			}
			notReady[clusters[i].Name] = why
		}
	}
	memberOf := map[string]*registry.Member{}
	memberErr := map[string]error{}
	for i := range regs {
		reg := &regs[i]
		out := &registryOutcome{}
		outcomes[reg.Name] = out
		matcher, err := clusteraffinity.Compile("spec.targetCluster", &reg.Spec.TargetCluster)
		if err != nil {
			// Refused at admission; a registry stored before that rule.
			out.invalid = err.Error()
			continue
		}
		selected := 0
		for j := range clusters {
			cl := &clusters[j]
			if !cl.DeletionTimestamp.IsZero() || !matcher.Match(cl) {
				continue
			}
			selected++
			m, seen := memberOf[cl.Name]
			if !seen && memberErr[cl.Name] == nil {
				if m, err = members(cl); err != nil {
					memberErr[cl.Name] = err
				} else {
					memberOf[cl.Name] = m
				}
			}
			if err := memberErr[cl.Name]; err != nil {
				out.unreached = append(out.unreached, fmt.Sprintf("%s: %v", cl.Name, err))
				continue
			}
			for _, s := range reg.Spec.ResourceSelectors {
				gv, err := schema.ParseGroupVersion(s.APIVersion)
				if err != nil {
					continue
				}
				mapping, err := m.Mapper.RESTMapping(gv.WithKind(s.Kind).GroupKind(), gv.Version)
				if err != nil {
					if meta.IsNoMatchError(err) {
						m.Mapper.Reset()
					}
					continue
				}
				k := cacheKey{cluster: cl.Name, gvr: mapping.Resource}
				w := wants[k]
				if w == nil {
					w = &want{gvk: mapping.GroupVersionKind, member: m, namespaces: sets.New[string](),
						namespaced: mapping.Scope.Name() == meta.RESTScopeNameNamespace}
					wants[k] = w
				}
				ns := s.Namespace
				if mapping.Scope.Name() != meta.RESTScopeNameNamespace {
					ns = ""
				}
				w.namespaces.Insert(ns)
				out.keys = append(out.keys, k)
			}
		}
		out.noClusters = selected == 0
		// A kind is unknown when no selected, reachable cluster serves it.
		for _, s := range reg.Spec.ResourceSelectors {
			gv, err := schema.ParseGroupVersion(s.APIVersion)
			found := false
			if err == nil {
				for _, k := range out.keys {
					if k.gvr.Group == gv.Group && k.gvr.Version == gv.Version && wants[k].gvk.Kind == s.Kind {
						found = true
						break
					}
				}
			}
			if !found && len(out.unreached) < selected {
				out.unknown = append(out.unknown, fmt.Sprintf("%s %s", s.Kind, s.APIVersion))
			}
		}
		// Names in spec.targetCluster.clusterNames that no Cluster has.
		for _, n := range reg.Spec.TargetCluster.ClusterNames {
			if !slices.ContainsFunc(clusters, func(cl clusterv1alpha1.Cluster) bool { return cl.Name == n }) {
				out.notJoined = append(out.notJoined, n)
			}
		}
	}
	return wants, outcomes, notReady
}

func sameNamespaces(mc *memberCache, w *want) bool {
	ns, allowed := informerNamespaces(w.namespaces)
	return mc.namespace == ns && mc.allowed.Equal(allowed)
}

// informerNamespaces chooses the informer's namespace ("" for all) and the
// namespaces served (nil for all) from what the registries ask.
func informerNamespaces(asked sets.Set[string]) (string, sets.Set[string]) {
	if asked.Has("") {
		return "", nil
	}
	if asked.Len() == 1 {
		ns := sets.List(asked)[0]
		return ns, nil
	}
	return "", asked.Clone()
}

func startMemberCache(k cacheKey, w *want) *memberCache {
	ns, allowed := informerNamespaces(w.namespaces)
	factory := dynamicinformer.NewFilteredDynamicSharedInformerFactory(w.member.Dynamic, 0, ns, nil)
	inf := factory.ForResource(k.gvr).Informer()
	_ = inf.SetTransform(compactFor(k.cluster))
	mc := &memberCache{cluster: k.cluster, gvr: k.gvr, gvk: w.gvk, namespaced: w.namespaced, namespace: ns, allowed: allowed,
		member: w.member, informer: inf, stop: make(chan struct{})}
	mc.history = newHistory(mc)
	_, _ = inf.AddEventHandler(mc.history.handler(inf))
	go inf.Run(mc.stop)
	go func() {
		if cache.WaitForCacheSync(mc.stop, inf.HasSynced) {
			mc.history.synced(inf.LastSyncResourceVersion())
		}
	}()
	return mc
}

func readyCondition(reg *searchv1alpha1.ResourceRegistry, out *registryOutcome, caches map[cacheKey]*memberCache) metav1.Condition {
	cond := metav1.Condition{Type: searchv1alpha1.ConditionReady, Status: metav1.ConditionFalse, ObservedGeneration: reg.Generation}
	var syncing []string
	for _, k := range out.keys {
		if mc := caches[k]; mc != nil && !mc.synced() {
			syncing = append(syncing, k.gvr.Resource+" in "+k.cluster)
		}
	}
	backend := ""
	if reg.Spec.BackendStore != nil && reg.Spec.BackendStore.OpenSearch != nil {
		backend = " spec.backendStore is not used: items are kept in memory only."
	}
	notJoined := ""
	if len(out.notJoined) > 0 {
		notJoined = " No cluster is named " + strings.Join(out.notJoined, ", ") + " (kubectl get clusters lists them)."
	}
	switch {
	case out.invalid != "":
		cond.Reason = searchv1alpha1.ReasonNoCluster
		cond.Message = out.invalid + "." + backend
	case len(out.unknown) > 0:
		cond.Reason = searchv1alpha1.ReasonUnknownKind
		cond.Message = "no selected cluster serves " + strings.Join(out.unknown, ", ") + ": check apiVersion and kind (kubectl api-resources in a member)." + backend
	case out.noClusters:
		cond.Reason = searchv1alpha1.ReasonNoCluster
		cond.Message = "spec.targetCluster selects no cluster." + notJoined + backend
	case len(out.unreached) > 0 || len(syncing) > 0:
		cond.Reason = searchv1alpha1.ReasonCacheNotSynced
		var parts []string
		if len(out.unreached) > 0 {
			sort.Strings(out.unreached)
			parts = append(parts, "cannot reach "+strings.Join(out.unreached, "; "))
		}
		if len(syncing) > 0 {
			sort.Strings(syncing)
			parts = append(parts, "still listing "+strings.Join(syncing, ", "))
		}
		cond.Message = strings.Join(parts, "; ") + "." + notJoined + backend
	default:
		cond.Status = metav1.ConditionTrue
		cond.Reason = searchv1alpha1.ReasonCached
		cond.Message = fmt.Sprintf("%d caches (kind × cluster) synced.%s%s", len(sets.New(out.keys...)), notJoined, backend)
	}
	return cond
}

// Stop stops every member cache.
func (c *Cache) Stop() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for k, mc := range c.caches {
		close(mc.stop)
		go mc.history.stopWatchers()
		delete(c.caches, k)
	}
}

// view is what one request reads: the synced caches of one resource, by
// cluster name, and the clusters left out with why.
type view struct {
	gvr        schema.GroupVersionResource
	gvk        schema.GroupVersionKind
	namespaced bool
	caches     []*memberCache // sorted by cluster
	skipped    []string       // "cluster: why"
}

// Resource returns the caches of gvr that can answer now. It returns a
// NotFound error, saying what to do, when no ResourceRegistry caches gvr.
func (c *Cache) Resource(gvr schema.GroupVersionResource) (*view, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	v := &view{gvr: gvr}
	registered := false
	for k, mc := range c.caches {
		if k.gvr != gvr {
			continue
		}
		registered = true
		v.gvk, v.namespaced = mc.gvk, mc.namespaced
		if why, bad := c.notReady[k.cluster]; bad {
			v.skipped = append(v.skipped, fmt.Sprintf("cluster %s is left out: %s", k.cluster, why))
			continue
		}
		if !mc.synced() {
			v.skipped = append(v.skipped, fmt.Sprintf("cluster %s is left out: its cache of %s is still listing", k.cluster, gvr.Resource))
			continue
		}
		v.caches = append(v.caches, mc)
	}
	if !registered {
		return nil, &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: 404, Reason: metav1.StatusReasonNotFound,
			Details: &metav1.StatusDetails{Group: gvr.Group, Kind: gvr.Resource},
			Message: fmt.Sprintf("%s (%s) is not cached: no ResourceRegistry names its kind for a Ready cluster; create one (kubectl get resourceregistries lists them)", gvr.GroupResource(), gvr.Version),
		}}
	}
	sort.Slice(v.caches, func(i, j int) bool { return v.caches[i].cluster < v.caches[j].cluster })
	sort.Strings(v.skipped)
	return v, nil
}

// resyncEvery is how often the search controller re-reads everything even
// without a change, so that a member that becomes reachable, or starts to
// serve a kind, is picked up.
const resyncEvery = 30 * time.Second
