package search

import (
	"context"
	"fmt"
	"maps"
	"sync/atomic"
	"time"

	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/election"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// controller keeps the Cache in step with the ResourceRegistries and the
// Clusters, and writes each registry's Ready condition. Every change of
// either (and a resync every 30 s) re-reads everything: there are few
// registries and few clusters, and one pass decides the whole set of caches.
//
// Every replica keeps its own caches, but only the one holding the Lease
// karmada-system/flotilla-search writes the registries' status, so that
// replicas whose caches fill at different speeds do not flip a condition
// back and forth.
type controller struct {
	cache   *Cache
	reader  client.Reader
	members *registry.Registry
	// lease is the status writers' lock; nil writes always (one replica).
	lease   resourcelock.Interface
	leading atomic.Bool
}

// elect takes part in the election for the status Lease until ctx ends;
// wake is called when this replica starts to lead.
func (c *controller) elect(ctx context.Context, wake func()) {
	if c.lease == nil {
		c.leading.Store(true)
		return
	}
	log := klog.FromContext(ctx)
	for ctx.Err() == nil {
		leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
			Lock: c.lease, ReleaseOnCancel: true, Name: election.SearchLease,
			LeaseDuration: 15 * time.Second, RenewDeadline: 10 * time.Second, RetryPeriod: 2 * time.Second,
			Callbacks: leaderelection.LeaderCallbacks{
				OnStartedLeading: func(context.Context) {
					log.Info("Writing the ResourceRegistries' status", "lease", election.DefaultNamespace+"/"+election.SearchLease)
					c.leading.Store(true)
					wake()
				},
				OnStoppedLeading: func() { c.leading.Store(false) },
			},
		})
	}
}

var registriesGVR = searchv1alpha1.SchemeGroupVersion.WithResource(searchv1alpha1.ResourcePluralResourceRegistry)

const syncKey = "all"

func (c *controller) run(ctx context.Context, cp crcache.Cache, loopback *rest.Config) error {
	log := klog.FromContext(ctx).WithName("search-cache")
	queue := workqueue.NewTypedRateLimitingQueueWithConfig(workqueue.DefaultTypedControllerRateLimiter[string](),
		workqueue.TypedRateLimitingQueueConfig[string]{Name: "search-cache"})
	defer queue.ShutDown()
	defer c.cache.Stop()
	enqueue := toolscache.ResourceEventHandlerFuncs{
		AddFunc:    func(any) { queue.Add(syncKey) },
		UpdateFunc: func(any, any) { queue.Add(syncKey) },
		DeleteFunc: func(any) { queue.Add(syncKey) },
	}
	inf, err := cp.GetInformer(ctx, &clusterv1alpha1.Cluster{})
	if err != nil {
		return fmt.Errorf("watch Clusters (are the Karmada CRDs installed?): %w", err)
	}
	clusterEvents := enqueue
	clusterEvents.UpdateFunc = func(old, cur any) {
		if o, ok := old.(*clusterv1alpha1.Cluster); !ok || clusterChanged(o, cur.(*clusterv1alpha1.Cluster)) {
			queue.Add(syncKey)
		}
	}
	if _, err := inf.AddEventHandler(clusterEvents); err != nil {
		return err
	}
	go func() { _ = cp.Start(ctx) }()
	if !cp.WaitForCacheSync(ctx) {
		return fmt.Errorf("the Cluster cache did not sync: %w", ctx.Err())
	}
	dyn, err := dynamic.NewForConfig(loopback)
	if err != nil {
		return err
	}
	regs := dynamicinformer.NewDynamicSharedInformerFactory(dyn, 0).ForResource(registriesGVR).Informer()
	if _, err := regs.AddEventHandler(enqueue); err != nil {
		return err
	}
	go regs.Run(ctx.Done())
	if !toolscache.WaitForCacheSync(ctx.Done(), regs.HasSynced) {
		return fmt.Errorf("the ResourceRegistry cache did not sync: %w", ctx.Err())
	}
	go func() {
		t := time.NewTicker(resyncEvery)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				queue.Add(syncKey)
			}
		}
	}()
	go func() { <-ctx.Done(); queue.ShutDown() }()
	go c.elect(ctx, func() { queue.Add(syncKey) })
	queue.Add(syncKey)
	for {
		key, shutdown := queue.Get()
		if shutdown {
			return nil
		}
		again, err := c.sync(ctx, regs.GetStore(), dyn)
		switch {
		case err != nil:
			log.Error(err, "Sync failed; retrying")
			queue.AddRateLimited(key)
		case again:
			queue.Forget(key)
			queue.AddAfter(key, 2*time.Second)
		default:
			queue.Forget(key)
		}
		queue.Done(key)
	}
}

// clusterChanged says whether a Cluster update can change the caches: its
// labels or spec (what targetCluster selects on, and its credentials), its
// deletion, its Ready status or the APIs it serves. The status heartbeat
// alone does not.
func clusterChanged(old, cur *clusterv1alpha1.Cluster) bool {
	ready := func(c *clusterv1alpha1.Cluster) metav1.ConditionStatus {
		if r := meta.FindStatusCondition(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady); r != nil {
			return r.Status
		}
		return metav1.ConditionUnknown
	}
	return old.Generation != cur.Generation || !maps.Equal(old.Labels, cur.Labels) ||
		!old.DeletionTimestamp.Equal(cur.DeletionTimestamp) || ready(old) != ready(cur) ||
		!apiequality.Semantic.DeepEqual(old.Spec, cur.Spec) ||
		!apiequality.Semantic.DeepEqual(old.Status.APIEnablements, cur.Status.APIEnablements)
}

// sync makes the caches match and writes the registries' conditions. again
// is true while some cache is still listing, so the condition follows it.
func (c *controller) sync(ctx context.Context, store toolscache.Store, dyn dynamic.Interface) (again bool, err error) {
	var regs []searchv1alpha1.ResourceRegistry
	for _, obj := range store.List() {
		r := searchv1alpha1.ResourceRegistry{}
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj.(*unstructured.Unstructured).Object, &r); err != nil {
			klog.FromContext(ctx).Error(err, "Unreadable ResourceRegistry", "name", obj.(*unstructured.Unstructured).GetName())
			continue
		}
		regs = append(regs, r)
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := c.reader.List(ctx, clusters); err != nil {
		return false, err
	}
	conds := c.cache.Sync(ctx, regs, clusters.Items, func(cl *clusterv1alpha1.Cluster) (*registry.Member, error) {
		return c.members.ForCluster(ctx, cl)
	})
	var firstErr error
	if !c.leading.Load() {
		return again, nil
	}
	for i := range regs {
		reg := &regs[i]
		cond := conds[reg.Name]
		if cond.Reason == searchv1alpha1.ReasonCacheNotSynced {
			again = true
		}
		if !meta.SetStatusCondition(&reg.Status.Conditions, cond) {
			continue
		}
		obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(reg)
		if err != nil {
			return again, err
		}
		u := &unstructured.Unstructured{Object: obj}
		u.SetAPIVersion(searchv1alpha1.SchemeGroupVersion.String())
		u.SetKind(searchv1alpha1.ResourceKindResourceRegistry)
		if _, err := dyn.Resource(registriesGVR).UpdateStatus(ctx, u, metav1.UpdateOptions{}); err != nil && firstErr == nil {
			firstErr = fmt.Errorf("write the status of ResourceRegistry %s: %w", reg.Name, err)
		}
	}
	return again, firstErr
}
