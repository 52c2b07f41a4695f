// Package scheduling runs Flotilla's scheduler as a controller: for every
// ResourceBinding and ClusterResourceBinding whose schedulerName is the
// default one, it computes spec.clusters from the binding's placement and
// the member clusters (internal/core/scheduler), and reports the Scheduled
// condition, with the reason each cluster was rejected when nothing fits.
package scheduling

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/core/scheduler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// Reconciler schedules bindings of one kind (namespaced or cluster-scoped).
type Reconciler struct {
	Client client.Client
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// BornScheduled leaves the Scheduled condition of a binding born
	// scheduled to the status controller's first write, for
	// BornScheduledGrace (fastpath.Options.BornScheduled).
	BornScheduled bool
	// Events, if set, gets Karmada's ScheduleBindingSucceed and
	// ScheduleBindingFailed events on the binding and its template when the
	// outcome changes.
	Events *eventrecord.Recorder
	// Gate, if set, is touched by every placement write (see
	// statusgate.Gate), and holds back a Scheduled condition that only
	// records a newer generation while propagation is busy.
	Gate *statusgate.Gate
	// TaintManagerEvicts leaves clusters that hold a binding and get an
	// untolerated NoExecute taint to the taint manager, which evicts
	// gracefully (scheduler.Input.TaintManagerEvicts).
	TaintManagerEvicts bool
	// Capacity is what the capacity estimates draw on (resource models, the
	// node-level estimator, overcommit protection), shared with the
	// detector's Prescheduler; nil is the general estimator with models.
	Capacity *Capacity
	// Quotas, if set, enforces FederatedResourceQuotas on placements
	// (FederatedQuotaEnforcement), shared with the Prescheduler; a quota's
	// change retries the bindings it refused.
	Quotas *Quotas
	// Clock tells a binding's age against BornScheduledGrace; nil is the real clock.
	Clock clock.PassiveClock

	wakeup statusgate.Wakeup
	queues *queues
}

func (r *Reconciler) newBinding() binding.Object {
	return r.Kind.Empty()
}

// SetupWithManager registers the controller; cluster changes that can alter
// feasibility (readiness, labels, spec, served APIs, deletion) reschedule
// every binding of this kind.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.wakeup = statusgate.NewWakeup()
	var err error
	if r.queues, err = newQueues(mgr); err != nil {
		return err
	}
	opts := queue.Options(mgr, 4)
	opts.RateLimiter = rateLimiter()
	if err := r.Capacity.watch(mgr, r.Kind); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName("scheduler")).
		Watches(r.newBinding(), byPriority{}, builder.WithPredicates(countIncoming)).
		WatchesRawSource(r.wakeup.Source()).
		WatchesRawSource(r.queues.source()).
		Watches(&clusterv1alpha1.Cluster{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.Kind.EnqueueAll(ctx, r.Client, q)
			},
			UpdateFunc: func(ctx context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				o, n := e.ObjectOld.(*clusterv1alpha1.Cluster), e.ObjectNew.(*clusterv1alpha1.Cluster)
				if !feasibilityChanged(o, n) {
					// Beyond Karmada, whose unschedulable bindings wait up to 5
					// minutes whatever the clusters do: new free resources try
					// the bindings that found no room at once.
					if !equality.Semantic.DeepEqual(o.Status.ResourceSummary, n.Status.ResourceSummary) {
						for _, req := range r.queues.unschedulableRequests() {
							q.Add(req)
						}
					}
					return
				}
				if ready(o) && !ready(n) {
					q = countedQueue{q, metrics.EventClusterNotReady}
				}
				r.Kind.EnqueueAll(ctx, r.Client, q)
			},
			DeleteFunc: func(ctx context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.Kind.EnqueueAll(ctx, r.Client, q)
			},
		}, builder.WithPredicates(queue.NotInitialList)).
		Watches(&policyv1alpha1.FederatedResourceQuota{}, handler.Funcs{
			CreateFunc: func(_ context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.retryUnschedulable(q)
			},
			UpdateFunc: func(_ context.Context, _ event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.retryUnschedulable(q)
			},
			DeleteFunc: func(_ context.Context, _ event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				r.retryUnschedulable(q)
			},
		}, builder.WithPredicates(queue.NotInitialList)).
		WithOptions(opts).
		Complete(r)
}

// retryUnschedulable queues again the bindings that found no room (or no
// quota) at their last attempt.
func (r *Reconciler) retryUnschedulable(q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	if r.Quotas == nil {
		return
	}
	for _, req := range r.queues.unschedulableRequests() {
		q.Add(req)
	}
}

// byPriority queues a binding at its spec.schedulePriority.priority
// (Karmada's PriorityBasedScheduling): the queue hands out higher
// priorities first, in arrival order within one. What an informer's first
// list finds stays at handler.LowPriority, below every binding's priority,
// which is raised above it when lower.
type byPriority struct{}

var _ handler.TypedEventHandler[client.Object, reconcile.Request] = byPriority{}

// Priority is the queue priority of binding b (0 without a schedulePriority).
func Priority(b client.Object) int {
	bo, ok := b.(binding.Object)
	if !ok || binding.Spec(bo).SchedulePriority == nil {
		return 0
	}
	return max(int(binding.Spec(bo).SchedulePriority.Priority), handler.LowPriority+1)
}

func (byPriority) add(q workqueue.TypedRateLimitingInterface[reconcile.Request], o client.Object, initial bool) {
	req := reconcile.Request{NamespacedName: client.ObjectKeyFromObject(o)}
	pq, ok := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if !ok {
		q.Add(req)
		return
	}
	prio := Priority(o)
	if initial {
		prio = handler.LowPriority
	}
	pq.AddWithOpts(priorityqueue.AddOpts{Priority: &prio}, req)
}

func (h byPriority) Create(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.add(q, e.Object, e.IsInInitialList)
}

func (h byPriority) Update(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.add(q, e.ObjectNew, false)
}

func (h byPriority) Delete(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.add(q, e.Object, false)
}

func (h byPriority) Generic(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	h.add(q, e.Object, false)
}

func feasibilityChanged(o, n *clusterv1alpha1.Cluster) bool {
	return !equality.Semantic.DeepEqual(o.Spec, n.Spec) ||
		!equality.Semantic.DeepEqual(o.Labels, n.Labels) ||
		!o.DeletionTimestamp.Equal(n.DeletionTimestamp) ||
		ready(o) != ready(n) ||
		!equality.Semantic.DeepEqual(o.Status.APIEnablements, n.Status.APIEnablements)
}

func ready(c *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// countIncoming counts the binding events that queue a binding, in
// karmada_scheduler_queue_incoming_bindings_total: BindingAdd,
// PolicyChanged (a new spec.placement) and BindingUpdate (any other
// change). It filters nothing.
var countIncoming = predicate.Funcs{
	CreateFunc: func(event.CreateEvent) bool {
		metrics.CountIncomingBindings(metrics.EventBindingAdd, 1)
		return true
	},
	UpdateFunc: func(e event.UpdateEvent) bool {
		ev := metrics.EventBindingUpdate
		if e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() {
			o, ok1 := e.ObjectOld.(binding.Object)
			n, ok2 := e.ObjectNew.(binding.Object)
			// Placement holds no Quantity or Time: reflect's DeepEqual is
			// exact here, and allocates nothing (Semantic's does).
			if ok1 && ok2 && !reflect.DeepEqual(binding.Spec(o).Placement, binding.Spec(n).Placement) {
				ev = metrics.EventPolicyChanged
			}
		}
		metrics.CountIncomingBindings(ev, 1)
		return true
	},
}

// countedQueue counts every binding it queues under event.
type countedQueue struct {
	workqueue.TypedRateLimitingInterface[reconcile.Request]
	event string
}

func (q countedQueue) Add(r reconcile.Request) {
	metrics.CountIncomingBindings(q.event, 1)
	q.TypedRateLimitingInterface.Add(r)
}

// Reconcile schedules one binding. A decision that changes spec.clusters is
// one spec patch; the Scheduled condition is written only when it changes.
// When no cluster fits any more, spec.clusters is emptied, as Karmada does,
// so the binding controller removes the copies from the clusters that no
// longer fit; other failures (a transient error, too little capacity for
// the replicas) keep the last placement. Whatever the scheduler, a cluster
// that no longer exists is removed from spec.clusters.
//
// As in Karmada, a binding whose attempt returns an error is tried again after a back-off
// (1 s doubling to 10 s), and one that finds no placement after at most 5 minutes, or as
// soon as it or a cluster changes, a cluster's free resources included (see queues).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	unschedulable := false
	if r.queues != nil {
		r.queues.taken(req)
	}
	defer func() {
		if err != nil {
			metrics.CountIncomingBindings(metrics.EventScheduleAttemptFailure, 1) // retried with back-off
		}
		if r.queues != nil {
			res = r.queues.settle(req, res, err, unschedulable)
		}
	}()
	b := r.newBinding()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	start := time.Now()
	if !b.GetDeletionTimestamp().IsZero() {
		r.Events.Forget(b)
		return ctrl.Result{}, nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	if err := r.dropVanished(ctx, b, clusters.Items); err != nil {
		return ctrl.Result{}, err
	}
	spec := binding.Spec(b)
	if !ours(spec) {
		return ctrl.Result{}, nil
	}
	placement := binding.AppliedPlacement(spec)
	kind := scheduleType(b, placement)
	decision, schedErr := decide(ctx, r.Client, b, live(clusters.Items), r.TaintManagerEvicts, r.Capacity, r.Quotas)
	unschedulable = schedErr != nil
	cond := metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue, Reason: workv1alpha2.BindingReasonSuccess,
		Message: "Binding has been scheduled successfully."}
	var noFit *scheduler.NoClusterFitError
	switch {
	case schedErr == nil:
	case errors.As(schedErr, &noFit):
		decision.Clusters = nil // nothing fits: the old placement goes
		fallthrough
	default:
		cond = metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionFalse,
			Reason: scheduler.ConditionReason(schedErr), Message: schedErr.Error()}
	}
	if (schedErr == nil || noFit != nil) && (!equality.Semantic.DeepEqual(decision.Clusters, spec.Clusters) || b.GetAnnotations()[binding.AppliedPlacementAnnotation] != placement) {
		patch := client.MergeFrom(b.DeepCopyObject().(client.Object))
		recordDecision(b, decision.Clusters, placement)
		done := r.Gate.Write()
		err := r.Client.Patch(ctx, b, patch)
		done()
		if err != nil {
			err = fmt.Errorf("write placement of binding %s: %w", req, err)
			metrics.ObserveScheduleAttempt(kind, err, time.Since(start))
			return ctrl.Result{}, err
		}
		log.FromContext(ctx).V(1).Info("scheduled", "binding", klog.KObj(b), "clusters", targetNames(decision.Clusters), "reason", cond.Reason)
	}
	metrics.ObserveScheduleAttempt(kind, schedErr, time.Since(start))
	r.Events.Outcome(scheduleBinding, schedErr, "Binding has been scheduled successfully.", b, binding.TemplateRef(spec))
	if schedErr == nil && r.BornScheduled && binding.BornScheduled(b) {
		if age := reconciler.Now(r.Clock).Sub(b.GetCreationTimestamp().Time); age < BornScheduledGrace {
			// The status controller's first write carries the Scheduled
			// condition of a binding born scheduled (one status write
			// fewer per template); it is written here only if that has
			// not happened within the grace.
			return ctrl.Result{RequeueAfter: BornScheduledGrace - age}, nil
		}
	}
	if _, generationOnly := scheduledChange(b, cond, decision.AffinityName, schedErr == nil); generationOnly && r.Gate.Park("scheduled/"+req.String(), r.wakeup.Release(r.keyOnly(b))) {
		return ctrl.Result{}, nil
	}
	if err := r.writeStatus(ctx, b, cond, decision.AffinityName, schedErr == nil); err != nil {
		return reconciler.Result(ctrl.Result{}, fmt.Errorf("write Scheduled condition of binding %s: %w", req, err))
	}
	return ctrl.Result{}, nil
}

// scheduleBinding is the operation whose outcome the scheduler reports.
var scheduleBinding = eventrecord.Operation{Succeed: events.ScheduleBindingSucceed, Failed: events.ScheduleBindingFailed}

// dropVanished removes from spec.clusters every cluster that no longer
// exists (deleted or unjoined), whichever scheduler placed it: a binding
// never points at a cluster that is not there.
func (r *Reconciler) dropVanished(ctx context.Context, b binding.Object, clusters []clusterv1alpha1.Cluster) error {
	exists := make(map[string]bool, len(clusters))
	for i := range clusters {
		exists[clusters[i].Name] = true
	}
	spec := binding.Spec(b)
	kept := slices.DeleteFunc(slices.Clone(spec.Clusters), func(tc workv1alpha2.TargetCluster) bool { return !exists[tc.Name] })
	if len(kept) == len(spec.Clusters) {
		return nil
	}
	patch := client.MergeFrom(b.DeepCopyObject().(client.Object))
	spec.Clusters = kept
	if len(kept) == 0 {
		spec.Clusters = nil
	}
	done := r.Gate.Write()
	defer done()
	if err := r.Client.Patch(ctx, b, patch); err != nil {
		return fmt.Errorf("remove vanished clusters from binding %s: %w", b.GetName(), err)
	}
	return nil
}

func targetNames(tcs []workv1alpha2.TargetCluster) []string {
	names := make([]string, 0, len(tcs))
	for _, tc := range tcs {
		names = append(names, tc.Name)
	}
	return names
}

// Preschedule fills a new binding's spec.clusters (and the applied-placement
// annotation) before it is created, so a binding is born scheduled: one
// write and one controller hop fewer on the propagation path. It leaves an
// unschedulable binding empty; the controller then reports why. Only for
// the default scheduler, and only when it runs in this process.
//
// The detector calls it too before it writes a changed binding (new
// replicas, a new placement): the decision is the one this controller would
// make a moment later from the same binding and clusters (input), so it
// goes into the detector's write and the scheduler then has nothing to
// change. A binding that points at a cluster that is gone, or that cannot
// be scheduled, is left for the controller, which handles and reports it.
func Preschedule(ctx context.Context, c client.Reader, b binding.Object) error {
	return Prescheduler{}.Preschedule(ctx, c, b)
}

// Prescheduler is Preschedule with the scheduler's options.
type Prescheduler struct {
	// TaintManagerEvicts is Reconciler.TaintManagerEvicts.
	TaintManagerEvicts bool
	// Capacity is Reconciler.Capacity.
	Capacity *Capacity
	// Quotas is Reconciler.Quotas.
	Quotas *Quotas
}

// Preschedule is the package's Preschedule with p's options.
func (p Prescheduler) Preschedule(ctx context.Context, c client.Reader, b binding.Object) error {
	spec := binding.Spec(b)
	if !ours(spec) {
		return nil
	}
	live, err := liveClusters(ctx, c)
	if err != nil {
		return err
	}
	names := make(map[string]bool, len(live))
	for _, cl := range live {
		names[cl.Name] = true
	}
	for _, tc := range spec.Clusters {
		if !names[tc.Name] {
			return nil
		}
	}
	start := time.Now()
	placement := binding.AppliedPlacement(spec)
	kind := scheduleType(b, placement)
	decision, err := decide(ctx, c, b, live, p.TaintManagerEvicts, p.Capacity, p.Quotas)
	if err != nil {
		return nil // the controller's attempt, which follows, is the one counted
	}
	recordDecision(b, decision.Clusters, placement)
	metrics.ObserveScheduleAttempt(kind, nil, time.Since(start))
	return nil
}

// scheduleType classifies an attempt to schedule b, whose current placement
// (binding.AppliedPlacement) is placement, for the scheduler's metrics:
// FirstSchedule when b has no decision yet (no applied placement recorded,
// no clusters), ReconcileSchedule when its placement changed or a
// reschedule was requested since, ScaleSchedule when only its replicas
// changed (the clusters hold another total), and ReconcileSchedule
// otherwise (clusters changed, a retry).
func scheduleType(b binding.Object, placement string) metrics.ScheduleType {
	spec, status := binding.Spec(b), binding.Status(b)
	applied, decided := b.GetAnnotations()[binding.AppliedPlacementAnnotation]
	switch {
	case !decided && len(spec.Clusters) == 0:
		return metrics.FirstSchedule
	case applied != placement || rescheduleRequested(spec, status):
		return metrics.ReconcileSchedule
	case replicasChanged(spec):
		return metrics.ScaleSchedule
	}
	return metrics.ReconcileSchedule
}

// rescheduleRequested reports a spec.rescheduleTriggeredAt after the last
// decision (a WorkloadRebalancer, or anyone, asked for a fresh start).
func rescheduleRequested(spec *workv1alpha2.ResourceBindingSpec, status *workv1alpha2.ResourceBindingStatus) bool {
	t := spec.RescheduleTriggeredAt
	return t != nil && (status.LastScheduledTime == nil || t.After(status.LastScheduledTime.Time))
}

// replicasChanged reports that spec.clusters was decided for another
// spec.replicas: a Duplicated cluster holds another count, or the Divided
// clusters hold another total.
func replicasChanged(spec *workv1alpha2.ResourceBindingSpec) bool {
	if len(spec.Clusters) == 0 {
		return false
	}
	rs := spec.Placement.ReplicaScheduling
	if rs == nil || rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDuplicated {
		for _, tc := range spec.Clusters {
			if tc.Replicas != spec.Replicas {
				return true
			}
		}
		return false
	}
	var sum int32
	for _, tc := range spec.Clusters {
		sum += tc.Replicas
	}
	return sum != spec.Replicas
}

// ours reports a binding this scheduler places now: it has a placement (an
// attached binding, which exists only for the bindings that require it,
// has none), the default scheduler names it, and its scheduling is not
// suspended.
func ours(spec *workv1alpha2.ResourceBindingSpec) bool {
	if spec.Placement == nil {
		return false // an attached binding goes where the bindings that require it go
	}
	if spec.SchedulerName != "" && spec.SchedulerName != binding.DefaultSchedulerName {
		return false
	}
	return spec.Suspension == nil || spec.Suspension.Scheduling == nil || !*spec.Suspension.Scheduling
}

// input is what the scheduler decides a binding's placement from. A
// binding whose placement changed since its last decision (the
// applied-placement annotation) is scheduled afresh; only a changed world
// (clusters, replicas) is scheduled incrementally from spec.clusters.
func input(b binding.Object, clusters []*clusterv1alpha1.Cluster, taintManagerEvicts bool) scheduler.Input {
	spec, status := binding.Spec(b), binding.Status(b)
	in := scheduler.Input{
		Clusters: clusters,
		Resource: spec.Resource, Placement: spec.Placement, Replicas: spec.Replicas,
		ReplicaRequirements: spec.ReplicaRequirements, Previous: spec.Clusters, Components: spec.Components,
		ObservedAffinityName: status.SchedulerObservedAffinityName,
		TaintManagerEvicts:   taintManagerEvicts,
		StepTimer:            metrics.ObserveScheduleStep,
	}
	for c := range binding.EvictingClusters(spec) {
		in.Evicting = append(in.Evicting, c)
	}
	if b.GetAnnotations()[binding.AppliedPlacementAnnotation] != binding.AppliedPlacement(spec) {
		in.Previous, in.ObservedAffinityName = nil, ""
	}
	// A WorkloadRebalancer (or anyone) asked for a fresh start after the
	// last decision was recorded.
	if rescheduleRequested(spec, status) {
		in.Previous, in.ObservedAffinityName = nil, ""
	}
	return in
}

// liveClusters lists the Clusters a binding may be scheduled to: every one
// not being deleted.
func liveClusters(ctx context.Context, c client.Reader) ([]*clusterv1alpha1.Cluster, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list clusters: %w", err)
	}
	return live(list.Items), nil
}

// live returns pointers to the clusters not being deleted.
func live(clusters []clusterv1alpha1.Cluster) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, 0, len(clusters))
	for i := range clusters {
		if clusters[i].DeletionTimestamp.IsZero() {
			out = append(out, &clusters[i])
		}
	}
	return out
}

// recordDecision sets spec.clusters and the placement they were computed
// from, which are written together.
func recordDecision(b binding.Object, clusters []workv1alpha2.TargetCluster, placement string) {
	binding.Spec(b).Clusters = clusters
	ann := b.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[binding.AppliedPlacementAnnotation] = placement
	b.SetAnnotations(ann)
}

func (r *Reconciler) writeStatus(ctx context.Context, b binding.Object, cond metav1.Condition, affinity string, ok bool) error {
	status := binding.Status(b)
	// The status controller writes other conditions of the same list; the
	// optimistic lock turns a stale read into a retry instead of dropping
	// its condition.
	patch := client.MergeFromWithOptions(b.DeepCopyObject().(client.Object), client.MergeFromWithOptimisticLock{})
	cond.ObservedGeneration = b.GetGeneration()
	if changed, _ := scheduledChange(b, cond, affinity, ok); !changed {
		return nil
	}
	if ok {
		binding.SetScheduled(status, b.GetGeneration(), affinity)
	} else {
		meta.SetStatusCondition(&status.Conditions, cond)
	}
	return r.Client.Status().Patch(ctx, b, patch)
}

// scheduledChange says whether writing the Scheduled condition cond (and,
// for a successful decision, ok, the observed affinity) changes b's status,
// and whether all it changes is the generation it records. A successful
// decision on a newer generation is recorded too:
// schedulerObservedGeneration == generation is how users and tools (kubectl
// wait, GitOps health checks) tell scheduling has caught up. Nothing else
// reads it, so a generation-only change is a report and waits behind the
// status gate; any other change is written at once.
func scheduledChange(b binding.Object, cond metav1.Condition, affinity string, ok bool) (changed, generationOnly bool) {
	status := binding.Status(b)
	old := meta.FindStatusCondition(status.Conditions, cond.Type)
	if old == nil || old.Status != cond.Status || old.Reason != cond.Reason || old.Message != cond.Message ||
		(ok && status.SchedulerObservedAffinityName != affinity) {
		return true, false
	}
	stale := ok && (status.SchedulerObservedGeneration != b.GetGeneration() || old.ObservedGeneration != b.GetGeneration())
	return stale, stale
}

// keyOnly is a binding of r's kind with only b's name and namespace, for a
// gate release.
func (r *Reconciler) keyOnly(b binding.Object) binding.Object {
	k := r.newBinding()
	k.SetNamespace(b.GetNamespace())
	k.SetName(b.GetName())
	return k
}

// BornScheduledGrace is how long the scheduler leaves the Scheduled
// condition of a binding born scheduled to the status controller.
// It outlasts the longest the status controller may defer its first write
// while propagation is busy (statusgate.StatusMaxDefer).
const BornScheduledGrace = statusgate.StatusMaxDefer + 10*time.Second
