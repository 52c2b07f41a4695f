// Package gracefuleviction is Karmada's graceful eviction controller: it
// clears a binding's spec.gracefulEvictionTasks, which lets the binding
// controller remove the evicted cluster's copy, once the replacement is
// healthy or the task's grace period is over.
//
// Unlike Karmada, every task is cleared in the end: when the replacement
// can never report health (kinds without a health rule read Healthy here)
// or when no other cluster fits (nothing to wait for), the task still ends
// at its timeout; a task whose cluster is gone ends at once. And a task
// that evicted a cluster for the cluster's sake (a taint, not an
// application failure) ends as soon as that cluster has recovered (Ready,
// no NoExecute taint the binding does not tolerate) if no other cluster
// took its replicas over: the scheduler then places the workload there
// again at once, where Karmada leaves it placed nowhere until the timeout
// while the cluster still runs it.
package gracefuleviction

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "gracefulEviction"

// DefaultTimeout is Karmada's --graceful-eviction-timeout.
const DefaultTimeout = 10 * time.Minute

// Settle is how long the replacement must stay ready, as this controller
// sees it, before a task ends on that account: right after an eviction the
// remaining clusters still report the health of their copies from before
// the new placement reached them.
const Settle = 5 * time.Second

// Reconciler clears the graceful eviction tasks of one binding kind.
type Reconciler struct {
	Client client.Client
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// Timeout is how long a task waits for a healthy replacement when it
	// names no gracePeriodSeconds (--graceful-eviction-timeout).
	Timeout time.Duration
	// Clock tells the time; nil is the real clock (controllermanager.Options.Clock).
	Clock clock.PassiveClock

	// readySince remembers when each binding's replacement was first seen
	// ready (binding key); in memory, so a restart waits Settle again.
	mu         sync.Mutex
	readySince map[string]time.Time
}

// settled reports whether the binding's replacement has been ready for
// Settle, and how long until it will have been.
func (r *Reconciler) settled(key string, ready bool, now time.Time) (bool, time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.readySince == nil {
		r.readySince = map[string]time.Time{}
	}
	if !ready {
		delete(r.readySince, key)
		return false, 0
	}
	since, ok := r.readySince[key]
	if !ok {
		since = now
		r.readySince[key] = now
	}
	if left := since.Add(Settle).Sub(now); left > 0 {
		return false, left
	}
	return true, 0
}

// SetupWithManager reconciles bindings that have tasks.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	hasTasks := predicate.NewPredicateFuncs(func(o client.Object) bool {
		b, ok := o.(binding.Object)
		return ok && len(binding.Spec(b).GracefulEvictionTasks) > 0
	})
	// A cluster that recovers (Ready again, or a NoExecute taint gone) may
	// end the tasks that evicted it: its bindings are looked at again.
	recovery := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return true },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			return ok1 && ok2 && (Recovered(o, nil) != Recovered(n, nil) || !equality.Semantic.DeepEqual(o.Spec.Taints, n.Spec.Taints))
		},
	}
	return ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName(ControllerName)).
		For(r.Kind.Empty(), builder.WithPredicates(hasTasks, predicate.Funcs{DeleteFunc: func(event.DeleteEvent) bool { return false }})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.evictedFrom), builder.WithPredicates(recovery)).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// evictedFrom lists the bindings with a graceful eviction task from the
// cluster o.
func (r *Reconciler) evictedFrom(ctx context.Context, o client.Object) []ctrl.Request {
	return r.Kind.RequestsWhere(ctx, r.Client, "", func(b binding.Object) bool {
		return binding.EvictingClusters(binding.Spec(b))[o.GetName()]
	})
}

// Reconcile drops each task that is done (see Done) and comes back when the
// next one's time is up.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.Kind.Empty()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			r.settled(req.String(), false, time.Time{}) // forget it
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	spec := binding.Spec(b)
	if !b.GetDeletionTimestamp().IsZero() || len(spec.GracefulEvictionTasks) == 0 {
		r.settled(req.String(), false, time.Time{}) // forget it
		return ctrl.Result{}, nil
	}
	var clusters clusterv1alpha1.ClusterList
	if err := r.Client.List(ctx, &clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	exists, recovered := map[string]bool{}, map[string]bool{}
	for i := range clusters.Items {
		c := &clusters.Items[i]
		exists[c.Name] = c.DeletionTimestamp.IsZero()
		recovered[c.Name] = exists[c.Name] && Recovered(c, placementTolerations(spec))
	}
	replaced := Replaced(spec)
	// The scheduler has looked at the current generation, whether or not
	// anything fit (schedulerObservedGeneration records successes only).
	looked := binding.Status(b).SchedulerObservedGeneration >= b.GetGeneration()
	if c := meta.FindStatusCondition(binding.Status(b).Conditions, workv1alpha2.Scheduled); c != nil && c.ObservedGeneration >= b.GetGeneration() {
		looked = true
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	now := reconciler.Now(r.Clock)
	ready, settleWait := r.settled(req.String(), ReplacementReady(b), now)
	scheduled := binding.Status(b).SchedulerObservedGeneration >= b.GetGeneration()
	var keep []workv1alpha2.GracefulEvictionTask
	var after time.Duration
	var done []string
	for _, t := range spec.GracefulEvictionTasks {
		finished, wait, why := Done(t, ready, scheduled, exists[t.FromCluster], timeout, now)
		if !finished && looked && !replaced && recovered[t.FromCluster] && t.Reason != binding.EvictionReasonApplicationFailure &&
			policyv1alpha1.NormalizePurgeMode(t.PurgeMode) == policyv1alpha1.PurgeModeGracefully && t.SuppressDeletion == nil {
			finished, why = true, "the cluster recovered and no other cluster took its replicas"
		}
		if finished {
			done = append(done, t.FromCluster+" ("+why+")")
			continue
		}
		keep = append(keep, t)
		if wait > 0 && (after == 0 || wait < after) {
			after = wait
		}
	}
	if settleWait > 0 && (after == 0 || settleWait < after) {
		after = settleWait
	}
	if len(done) == 0 {
		return ctrl.Result{RequeueAfter: after}, nil
	}
	patch := client.MergeFromWithOptions(b.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	spec.GracefulEvictionTasks = keep
	if err := r.Client.Patch(ctx, b, patch); apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	} else if err != nil {
		return ctrl.Result{}, fmt.Errorf("clear graceful eviction tasks of binding %s: %w", req, err)
	}
	log.FromContext(ctx).Info("Graceful eviction done", "binding", klog.KObj(b), "clusters", done)
	return ctrl.Result{RequeueAfter: after}, nil
}

// Done says whether task t is over: its cluster is gone; its purge mode is
// Directly (or Immediately) and the scheduler has placed the binding since
// (so the cluster is not chosen again in the meantime); it is not suppressed (purge mode Never keeps
// the old copy until someone sets suppressDeletion false) and either the
// replacement is ready or its grace period (gracePeriodSeconds, else
// timeout, from its creationTimestamp) is over. Otherwise it says how long
// until the grace period ends, and why it ended when it did.
func Done(t workv1alpha2.GracefulEvictionTask, replacementReady, scheduled, clusterExists bool, timeout time.Duration, now time.Time) (bool, time.Duration, string) {
	if !clusterExists {
		return true, 0, "the cluster is gone"
	}
	switch policyv1alpha1.NormalizePurgeMode(t.PurgeMode) {
	case policyv1alpha1.PurgeModeDirectly:
		return scheduled, 0, "purge mode Directly"
	case policyv1alpha1.PurgeModeNever:
		if t.SuppressDeletion == nil || *t.SuppressDeletion {
			return false, 0, ""
		}
		return true, 0, "deletion no longer suppressed"
	}
	if t.SuppressDeletion != nil {
		if *t.SuppressDeletion {
			return false, 0, ""
		}
		return true, 0, "deletion no longer suppressed"
	}
	if replacementReady {
		return true, 0, "the replacement is healthy"
	}
	if t.GracePeriodSeconds != nil {
		timeout = time.Duration(*t.GracePeriodSeconds) * time.Second
	}
	created := now
	if t.CreationTimestamp != nil {
		created = t.CreationTimestamp.Time
	}
	left := created.Add(timeout).Sub(now)
	if left <= 0 {
		return true, 0, "the grace period of " + timeout.String() + " is over"
	}
	return false, left, ""
}

// Recovered reports whether cluster c is fit to run the binding again: its
// Ready condition is True and it has no NoExecute taint that tolerations
// do not tolerate.
func Recovered(c *clusterv1alpha1.Cluster, tolerations []corev1.Toleration) bool {
	if !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		return false
	}
	for i := range c.Spec.Taints {
		t := &c.Spec.Taints[i]
		if t.Effect == corev1.TaintEffectNoExecute &&
			!slices.ContainsFunc(tolerations, func(tol corev1.Toleration) bool { return tol.ToleratesTaint(klog.Logger{}, t, false) }) {
			return false
		}
	}
	return true
}

// Replaced reports whether other clusters took over the binding: it is
// placed somewhere, and when it has replicas, all of them are assigned.
func Replaced(spec *workv1alpha2.ResourceBindingSpec) bool {
	if len(spec.Clusters) == 0 {
		return false
	}
	if spec.Replicas == 0 {
		return true
	}
	var sum int32
	for _, tc := range spec.Clusters {
		sum += tc.Replicas
	}
	return sum >= spec.Replicas || allZero(spec.Clusters)
}

// allZero reports a placement without per-cluster replicas (Duplicated
// writes none): every listed cluster runs all of them.
func allZero(tcs []workv1alpha2.TargetCluster) bool {
	for _, tc := range tcs {
		if tc.Replicas != 0 {
			return false
		}
	}
	return true
}

func placementTolerations(spec *workv1alpha2.ResourceBindingSpec) []corev1.Toleration {
	if spec.Placement == nil {
		return nil
	}
	return spec.Placement.ClusterTolerations
}

// ReplacementReady reports whether the scheduler has placed the binding's
// current generation somewhere, and every cluster of spec.clusters reports
// the resource applied and Healthy. A binding that fits nowhere has no
// replacement to wait for.
func ReplacementReady(b binding.Object) bool {
	spec, status := binding.Spec(b), binding.Status(b)
	if len(spec.Clusters) == 0 || status.SchedulerObservedGeneration < b.GetGeneration() {
		return false
	}
	if c := meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled); c == nil || c.Status != "True" {
		return false
	}
	for _, tc := range spec.Clusters {
		ok := false
		for _, item := range status.AggregatedStatus {
			if item.ClusterName == tc.Name {
				ok = item.Applied && item.Health == workv1alpha2.ResourceHealthy
			}
		}
		if !ok {
			return false
		}
	}
	return true
}
