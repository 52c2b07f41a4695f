// Package cluster implements the cluster controller: for every Cluster it
// keeps the execution namespace karmada-es-<cluster> and the status Karmada
// users read with `kubectl get clusters` (Ready condition,
// kubernetesVersion, apiEnablements, nodeSummary, resourceSummary).
package cluster

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/component-base/featuregate"
	"k8s.io/utils/clock"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/capacity"
	"github.com/flotilla-io/flotilla/internal/member/join"
	"github.com/flotilla-io/flotilla/internal/member/register"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// Finalizer holds a Cluster until its execution namespace, and with it every
// Work and every object Flotilla created in the member, is gone.
const Finalizer = "karmada.io/cluster-controller"

// DefaultStatusUpdateFrequency is how often a member is probed unless
// Reconciler.StatusUpdateFrequency says otherwise (Karmada's
// --cluster-status-update-frequency default).
const DefaultStatusUpdateFrequency = 10 * time.Second

// DefaultConcurrentSyncs is Karmada's --concurrent-cluster-syncs default.
const DefaultConcurrentSyncs = 5

// ProbeTimeout bounds one /readyz probe of a member.
const ProbeTimeout = 5 * time.Second

// DefaultFailureThreshold and DefaultSuccessThreshold are Karmada's
// --cluster-failure-threshold and --cluster-success-threshold defaults.
const (
	DefaultFailureThreshold = 30 * time.Second
	DefaultSuccessThreshold = 30 * time.Second
)

// ControllerName is Karmada's name of the cluster controller, the source of
// its events.
const ControllerName = "cluster-controller"

// Reconciler is the cluster controller.
type Reconciler struct {
	Client  client.Client
	Members *registry.Registry
	// Events, if set, gets Karmada's CreateExecutionSpace*,
	// RemoveExecutionSpace* and TaintCluster* events on the Cluster (not in
	// an agent, which does none of these).
	Events *eventrecord.Recorder
	// StatusUpdateFrequency is how often each member is probed; 0 means
	// DefaultStatusUpdateFrequency.
	StatusUpdateFrequency time.Duration
	// Workers is how many Clusters are probed at once (Karmada's
	// --concurrent-cluster-syncs); 0 means DefaultConcurrentSyncs. A probe
	// is a few round trips, so with a hundred members one worker would
	// be busy all the time and every probe late.
	Workers int
	// FailureThreshold is how long a Ready cluster must keep failing its
	// probes before Ready turns False (--cluster-failure-threshold), and
	// SuccessThreshold how long a not-Ready cluster must keep passing them
	// before Ready turns True (--cluster-success-threshold). A blip shorter
	// than the threshold changes nothing. 0 means the default; a negative
	// value flips at once.
	FailureThreshold, SuccessThreshold time.Duration
	// Agent, when set, makes this the cluster status controller of the
	// Pull-mode agent of that one cluster (Karmada's karmada-agent): it
	// probes the member, renews the cluster's Lease and writes its status,
	// and leaves the finalizer, the execution namespace and the taints to
	// the control plane's controller. Unset (the control plane), Pull-mode
	// clusters are not probed: their Ready condition is the agent's, turned
	// Unknown when the agent stops renewing the Lease.
	Agent string
	// Clock tells the time; nil is the real clock (controllermanager.Options.Clock).
	Clock clock.PassiveClock
	// Gate holds the feature gates; nil is every gate at its default. With
	// CustomizedClusterResourceModeling the status counts the member's
	// nodes per resource model grade.
	Gate featuregate.FeatureGate
	// OnGone, in an agent, is called when the agent's Cluster no longer
	// exists on the control plane (unjoined or unregistered).
	OnGone func()

	// pending remembers, per cluster, a Ready status the probes report
	// that differs from the recorded one, and since when.
	mu      sync.Mutex
	pending map[string]pendingReady
}

type pendingReady struct {
	status metav1.ConditionStatus
	since  time.Time
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	// Its own status writes come back as updates; reacting to them would
	// probe the member again at once instead of every StatusUpdateFrequency.
	// A Pull-mode cluster's status is written by its agent; the control
	// plane follows its Ready condition with the taints.
	pullReady := predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		if !ok1 || !ok2 || r.Agent != "" || n.Spec.SyncMode != clusterv1alpha1.Pull {
			return false
		}
		was, now := readyOf(o.Status), readyOf(n.Status)
		return (was == nil) != (now == nil) || (was != nil && now != nil && was.Status != now.Status)
	}}
	b := ctrl.NewControllerManagedBy(mgr).Named("cluster")
	preds := []predicate.Predicate{predicate.Or(predicate.GenerationChangedPredicate{},
		predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}, pullReady)}
	if r.Agent != "" {
		b = b.Named("cluster-status")
		preds = append(preds, predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetName() == r.Agent }))
	}
	workers := r.Workers
	if workers <= 0 {
		workers = DefaultConcurrentSyncs
	}
	return b.For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(preds...)).WithOptions(queue.Options(mgr, workers)).Complete(r)
}

// Reconcile converges one Cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		if r.Agent != "" {
			if req.Name == r.Agent {
				metrics.ForgetCluster(req.Name)
				if r.OnGone != nil {
					r.OnGone()
				}
			}
			return ctrl.Result{}, nil
		}
		metrics.ForgetCluster(req.Name)
		r.Members.Forget(req.Name)
		r.mu.Lock()
		delete(r.pending, req.Name)
		r.mu.Unlock()
		// A Pull-mode cluster's agent loses its rights with its Cluster
		// (nothing to do for other clusters: the objects do not exist).
		for _, obj := range register.ClusterRBAC(req.Name) {
			if obj.GetNamespace() == clusterv1alpha1.ExecutionNamespace(req.Name) {
				continue // gone with the execution namespace
			}
			if err := r.Client.Delete(ctx, obj); client.IgnoreNotFound(err) != nil {
				return ctrl.Result{}, fmt.Errorf("delete the agent RBAC of cluster %s: %w", req.Name, err)
			}
		}
		return ctrl.Result{}, nil
	}
	if r.Agent != "" {
		if cluster.Name != r.Agent || !cluster.DeletionTimestamp.IsZero() {
			return ctrl.Result{}, nil
		}
		return r.report(ctx, cluster)
	}
	esName := clusterv1alpha1.ExecutionNamespace(cluster.Name)
	if !cluster.DeletionTimestamp.IsZero() {
		return r.finalize(ctx, cluster, esName)
	}
	if controllerutil.AddFinalizer(cluster, Finalizer) {
		if err := r.Client.Update(ctx, cluster); err != nil {
			return ctrl.Result{}, fmt.Errorf("update Cluster %s: %w", cluster.Name, err)
		}
	}
	if err := r.ensureExecutionSpace(ctx, cluster, esName); err != nil {
		return ctrl.Result{}, err
	}
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return r.followAgent(ctx, cluster)
	}
	return r.report(ctx, cluster)
}

// Karmada's operations on a Cluster whose outcomes are raised as events.
var (
	createExecutionSpace = eventrecord.Operation{Succeed: events.CreateExecutionSpaceSucceed, Failed: events.CreateExecutionSpaceFailed}
	removeExecutionSpace = eventrecord.Operation{Succeed: events.RemoveExecutionSpaceSucceed, Failed: events.RemoveExecutionSpaceFailed}
	taintCluster         = eventrecord.Operation{Succeed: events.TaintClusterSucceed, Failed: events.TaintClusterFailed}
)

// ensureExecutionSpace creates the execution namespace esName of cluster
// when it does not exist, raising CreateExecutionSpaceSucceed when it
// creates it and CreateExecutionSpaceFailed when it cannot read or create
// it (once per distinct error). Errors: the API server's.
func (r *Reconciler) ensureExecutionSpace(ctx context.Context, cluster *clusterv1alpha1.Cluster, esName string) error {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: esName}}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(ns), ns)
	if err == nil {
		return nil
	}
	if apierrors.IsNotFound(err) {
		err = r.Client.Create(ctx, ns)
		if err == nil {
			r.Events.Happened(createExecutionSpace, nil, fmt.Sprintf("Execution namespace %s of cluster %s is created.", esName, cluster.Name), cluster)
			return nil
		}
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		err = fmt.Errorf("create execution namespace %s: %w", esName, err)
	} else {
		err = fmt.Errorf("read execution namespace %s: %w", esName, err)
	}
	r.Events.Happened(createExecutionSpace, err, "", cluster)
	return err
}

// report probes the member and writes what it found: the Lease, the
// Ready condition held behind the thresholds, the condition taints (not
// in an agent) and the status.
func (r *Reconciler) report(ctx context.Context, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	start := time.Now()
	defer func() { metrics.ObserveClusterSyncStatus(cluster.Name, time.Since(start)) }()
	status := r.observe(ctx, cluster)
	if c := readyOf(status); c != nil && c.Status == metav1.ConditionTrue {
		if err := r.renewLease(ctx, cluster); err != nil {
			log.FromContext(ctx).Error(err, "Renew the cluster lease", "cluster", cluster.Name)
		}
	}
	if was, now := readyOf(cluster.Status), readyOf(status); was != nil && now != nil && was.Status != now.Status {
		log.FromContext(ctx).Info("Probe disagrees with the recorded Ready condition", "recorded", was.Status, "observed", now.Status, "reason", now.Reason, "message", now.Message)
	}
	r.holdReady(cluster, &status, reconciler.Now(r.Clock))
	if was, now := readyOf(cluster.Status), readyOf(status); was != nil && now != nil && was.Status != now.Status {
		log.FromContext(ctx).Info("Ready condition changes after the threshold", "from", was.Status, "to", now.Status)
	}
	every := r.StatusUpdateFrequency
	if every <= 0 {
		every = DefaultStatusUpdateFrequency
	}
	if res, err := r.write(ctx, cluster, status); err != nil && r.Agent != "" {
		// An agent that cannot reach the control plane tries again at its
		// usual pace, not after an ever longer back-off: it must renew
		// the Lease as soon as the control plane is back.
		log.FromContext(ctx).Error(err, "Report the cluster's status")
		return ctrl.Result{RequeueAfter: every}, nil
	} else if err != nil || !res.IsZero() {
		return res, err
	}
	// Jitter keeps the members' probes from landing together.
	return ctrl.Result{RequeueAfter: wait.Jitter(every, 0.1)}, nil
}

// write records status and, on the control plane, the condition taints
// that follow from it. Both writes carry the resourceVersion read: a
// decision made on a stale cached Cluster (one that does not show the last
// Ready change yet) must not undo that change; a conflict requeues. The
// cluster's gauges (cluster_ready_state, ...) follow what was written.
func (r *Reconciler) write(ctx context.Context, cluster *clusterv1alpha1.Cluster, status clusterv1alpha1.ClusterStatus) (ctrl.Result, error) {
	if r.Agent == "" {
		if err := r.taint(ctx, cluster, &status); apierrors.IsConflict(err) {
			return reconciler.Result(ctrl.Result{}, err)
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	if !equality.Semantic.DeepEqual(status, cluster.Status) {
		patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
		cluster.Status = status
		if err := r.Client.Status().Patch(ctx, cluster, patch); apierrors.IsConflict(err) {
			return reconciler.Result(ctrl.Result{}, err)
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("write status of Cluster %s: %w", cluster.Name, err)
		}
	}
	metrics.RecordClusterStatus(cluster.Name, &cluster.Status)
	return ctrl.Result{}, nil
}

// followAgent is the control plane's part for a Pull-mode cluster, whose
// agent probes the member and writes the status: while the agent renews
// the cluster's Lease the agent's Ready condition stands and the taints
// follow it; once the Lease has run out, Ready turns Unknown
// (ClusterStatusUnknown), as Karmada's cluster controller does when an
// agent stops reporting. It looks again when the Lease would run out.
func (r *Reconciler) followAgent(ctx context.Context, cluster *clusterv1alpha1.Cluster) (ctrl.Result, error) {
	status := *cluster.Status.DeepCopy()
	now := reconciler.Now(r.Clock)
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: LeaseNamespace, Name: cluster.Name}, lease)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	var expires time.Time
	if err == nil && lease.Spec.RenewTime != nil {
		d := LeaseDuration
		if lease.Spec.LeaseDurationSeconds != nil {
			d = time.Duration(*lease.Spec.LeaseDurationSeconds) * time.Second
		}
		expires = lease.Spec.RenewTime.Add(d)
	}
	if c := readyOf(status); expires.Before(now) && (c == nil || c.Status != metav1.ConditionUnknown) {
		msg := "the cluster's agent has never renewed its Lease " + LeaseNamespace + "/" + cluster.Name + ": is 'flotilla agent' running for it?"
		if !expires.IsZero() {
			msg = fmt.Sprintf("the cluster's agent last renewed its Lease %s/%s at %s: is 'flotilla agent' running and able to reach the control plane?",
				LeaseNamespace, cluster.Name, lease.Spec.RenewTime.UTC().Format(time.RFC3339))
		}
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionUnknown,
			Reason: clusterv1alpha1.ClusterStatusUnknownReason, Message: msg, ObservedGeneration: cluster.Generation})
	}
	if res, err := r.write(ctx, cluster, status); err != nil || !res.IsZero() {
		return res, err
	}
	wait := expires.Sub(now) + time.Second
	if wait < time.Second {
		wait = DefaultStatusUpdateFrequency
	}
	return ctrl.Result{RequeueAfter: wait}, nil
}

// finalize deletes the Works of the execution namespace and waits for them
// to go (each is held by the execution controller's finalizer, or the
// agent's for a Pull-mode cluster, until its objects are removed from the
// member), then deletes the namespace and waits for it to disappear. The
// Works go first because the namespace holds the agent's RBAC: deleting
// it at once would leave an agent that was away for a moment unable to
// release its Works, and the Cluster deleting forever.
func (r *Reconciler) finalize(ctx context.Context, cluster *clusterv1alpha1.Cluster, esName string) (ctrl.Result, error) {
	var works workv1alpha1.WorkList
	if err := r.Client.List(ctx, &works, client.InNamespace(esName)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list the Works of cluster %s: %w", cluster.Name, err)
	}
	if len(works.Items) > 0 {
		for i := range works.Items {
			if w := &works.Items[i]; w.DeletionTimestamp.IsZero() {
				if err := r.Client.Delete(ctx, w); client.IgnoreNotFound(err) != nil {
					err = fmt.Errorf("delete Work %s/%s: %w", w.Namespace, w.Name, err)
					r.Events.Happened(removeExecutionSpace, err, "", cluster)
					return ctrl.Result{}, err
				}
			}
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: esName}, ns)
	if err == nil {
		if ns.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
				err = fmt.Errorf("delete execution namespace %s: %w", ns.Name, err)
				r.Events.Happened(removeExecutionSpace, err, "", cluster)
				return ctrl.Result{}, err
			}
			r.Events.Happened(removeExecutionSpace, nil, fmt.Sprintf("Execution namespace %s of cluster %s is being removed: its Works are gone.", esName, cluster.Name), cluster)
		}
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	lease := &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: LeaseNamespace, Name: cluster.Name}}
	if err := r.Client.Delete(ctx, lease); err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("delete the Lease of Cluster %s: %w", cluster.Name, err)
	}
	if controllerutil.RemoveFinalizer(cluster, Finalizer) {
		if err := r.Client.Update(ctx, cluster); err != nil {
			return ctrl.Result{}, fmt.Errorf("update Cluster %s: %w", cluster.Name, err)
		}
	}
	r.Members.Forget(cluster.Name)
	r.Events.Forget(cluster)
	return ctrl.Result{}, nil
}

// LeaseDuration is how long a cluster's Lease (karmada-cluster/<name>)
// stays valid after a successful probe renewed it (Karmada's
// --cluster-lease-duration default).
const LeaseDuration = 40 * time.Second

// renewLease records, as Karmada does, that the control plane reached the
// cluster just now: the Lease named after it in karmada-cluster, held by
// the cluster's name and owned by the Cluster (the garbage collector
// deletes it with the Cluster, whichever tool deleted that).
func (r *Reconciler) renewLease(ctx context.Context, cluster *clusterv1alpha1.Cluster) error {
	name := cluster.Name
	now := metav1.NewMicroTime(reconciler.Now(r.Clock))
	lease := &coordinationv1.Lease{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: LeaseNamespace, Name: name}, lease)
	if apierrors.IsNotFound(err) {
		lease = &coordinationv1.Lease{ObjectMeta: metav1.ObjectMeta{Namespace: LeaseNamespace, Name: name},
			Spec: coordinationv1.LeaseSpec{HolderIdentity: ptr.To(name), LeaseDurationSeconds: ptr.To(int32(LeaseDuration.Seconds())), RenewTime: &now}}
		lease.OwnerReferences = []metav1.OwnerReference{join.ClusterOwner(cluster)}
		return client.IgnoreAlreadyExists(r.Client.Create(ctx, lease))
	}
	if err != nil {
		return err
	}
	patch := client.MergeFrom(lease.DeepCopy())
	if !join.OwnedBy(lease, cluster) {
		lease.OwnerReferences = []metav1.OwnerReference{join.ClusterOwner(cluster)}
	}
	lease.Spec.HolderIdentity = ptr.To(name)
	lease.Spec.LeaseDurationSeconds = ptr.To(int32(LeaseDuration.Seconds()))
	lease.Spec.RenewTime = &now
	return r.Client.Patch(ctx, lease, patch)
}

// LeaseNamespace holds the clusters' Leases (and their credentials).
const LeaseNamespace = "karmada-cluster"

func readyOf(s clusterv1alpha1.ClusterStatus) *metav1.Condition {
	return meta.FindStatusCondition(s.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// holdReady keeps the recorded Ready condition until the probes have
// reported the other status for the failure (or success) threshold: the
// observed condition replaces the recorded one only then. A cluster with no
// Ready condition yet takes the observed one at once.
func (r *Reconciler) holdReady(cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus, now time.Time) {
	recorded := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
	observed := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady)
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pending == nil {
		r.pending = map[string]pendingReady{}
	}
	// The control plane marks a Pull-mode cluster Unknown when its agent's
	// Lease runs out (the agent or the control plane was away); the
	// agent's own probes did not fail, so what they see stands at once.
	agentAway := r.Agent != "" && recorded != nil && recorded.Reason == clusterv1alpha1.ClusterStatusUnknownReason
	if recorded == nil || observed == nil || recorded.Status == observed.Status || agentAway {
		delete(r.pending, cluster.Name)
		return
	}
	p, ok := r.pending[cluster.Name]
	if !ok || p.status != observed.Status {
		p = pendingReady{status: observed.Status, since: now}
		r.pending[cluster.Name] = p
	}
	threshold := r.FailureThreshold
	if threshold == 0 {
		threshold = DefaultFailureThreshold
	}
	if observed.Status == metav1.ConditionTrue {
		threshold = r.SuccessThreshold
		if threshold == 0 {
			threshold = DefaultSuccessThreshold
		}
	}
	if now.Sub(p.since) >= threshold {
		delete(r.pending, cluster.Name)
		return
	}
	// Not yet: the recorded condition stands.
	meta.SetStatusCondition(&status.Conditions, *recorded)
}

// taint keeps Karmada's condition taints on spec.taints in line with the
// Ready condition status will record: cluster.karmada.io/not-ready
// (NoSchedule) while Ready is False, cluster.karmada.io/unreachable
// (NoSchedule) while it is Unknown, neither while it is True. Other taints
// are left alone.
func (r *Reconciler) taint(ctx context.Context, cluster *clusterv1alpha1.Cluster, status *clusterv1alpha1.ClusterStatus) error {
	want := map[string]bool{}
	if c := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil {
		switch c.Status {
		case metav1.ConditionFalse:
			want[clusterv1alpha1.TaintClusterNotReady] = true
		case metav1.ConditionUnknown:
			want[clusterv1alpha1.TaintClusterUnreachable] = true
		}
	}
	var taints []corev1.Taint
	changed := false
	have := map[string]bool{}
	for _, t := range cluster.Spec.Taints {
		managed := t.Key == clusterv1alpha1.TaintClusterNotReady || t.Key == clusterv1alpha1.TaintClusterUnreachable
		if managed && t.Effect == corev1.TaintEffectNoSchedule {
			if !want[t.Key] {
				changed = true
				continue
			}
			have[t.Key] = true
		}
		taints = append(taints, t)
	}
	for _, key := range []string{clusterv1alpha1.TaintClusterNotReady, clusterv1alpha1.TaintClusterUnreachable} {
		if want[key] && !have[key] {
			now := metav1.NewTime(reconciler.Now(r.Clock))
			taints = append(taints, corev1.Taint{Key: key, Effect: corev1.TaintEffectNoSchedule, TimeAdded: &now})
			changed = true
		}
	}
	if !changed {
		return nil
	}
	patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cluster.Spec.Taints = taints
	if err := r.Client.Patch(ctx, cluster, patch); err != nil {
		err = fmt.Errorf("update the taints of Cluster %s: %w", cluster.Name, err)
		if !apierrors.IsConflict(err) {
			r.Events.Happened(taintCluster, err, "", cluster)
		}
		return err
	}
	ready := "none"
	if c := meta.FindStatusCondition(status.Conditions, clusterv1alpha1.ClusterConditionReady); c != nil {
		ready = string(c.Status)
	}
	r.Events.Happened(taintCluster, nil, fmt.Sprintf("Taints of cluster %s follow its Ready condition (%s); they are now: %s.",
		cluster.Name, ready, eventrecord.Taints(taints)), cluster)
	return nil
}

// observe probes the member and returns the status it should have. A member
// that cannot be reached keeps its last apiEnablements and summaries, with
// Ready=False explaining why.
func (r *Reconciler) observe(ctx context.Context, cluster *clusterv1alpha1.Cluster) clusterv1alpha1.ClusterStatus {
	status := *cluster.Status.DeepCopy()
	setReady := func(s metav1.ConditionStatus, reason, msg string) clusterv1alpha1.ClusterStatus {
		meta.SetStatusCondition(&status.Conditions, metav1.Condition{
			Type: clusterv1alpha1.ClusterConditionReady, Status: s, Reason: reason, Message: msg, ObservedGeneration: cluster.Generation,
		})
		return status
	}
	m, err := r.Members.ForCluster(ctx, cluster)
	if err != nil {
		return setReady(metav1.ConditionFalse, clusterv1alpha1.ClusterNotReachableReason, err.Error())
	}
	// A member that does not answer its health check within ProbeTimeout
	// is failing, whatever its client's own (longer) timeout.
	pctx, cancel := context.WithTimeout(ctx, ProbeTimeout)
	body, err := m.Kube.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(pctx)
	cancel()
	if err != nil {
		return setReady(metav1.ConditionFalse, clusterv1alpha1.ClusterNotReachableReason, fmt.Sprintf("cluster is not reachable: %v", err))
	}
	if strings.TrimSpace(string(body)) != "ok" {
		return setReady(metav1.ConditionFalse, clusterv1alpha1.ClusterNotReadyReason, "cluster's /readyz is not ok: "+string(body))
	}
	if v, err := m.Kube.Discovery().ServerVersion(); err == nil {
		status.KubernetesVersion = v.GitVersion
	}
	complete := metav1.ConditionTrue
	enablements, err := apiEnablements(m)
	if err != nil {
		complete = metav1.ConditionFalse
	}
	if len(enablements) > 0 {
		status.APIEnablements = enablements
	}
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{
		Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: complete,
		Reason:  map[metav1.ConditionStatus]string{metav1.ConditionTrue: "CompleteAPIEnablements", metav1.ConditionFalse: "IncompleteAPIEnablements"}[complete],
		Message: "", ObservedGeneration: cluster.Generation,
	})
	var models []clusterv1alpha1.ResourceModel
	if features.Or(r.Gate).Enabled(features.CustomizedClusterResourceModeling) {
		models = cluster.Spec.ResourceModels
	}
	if err := summarize(ctx, m, models, &status); err != nil {
		return setReady(metav1.ConditionFalse, clusterv1alpha1.ClusterNotReadyReason, fmt.Sprintf("cannot read nodes and pods: %v", err))
	}
	return setReady(metav1.ConditionTrue, clusterv1alpha1.ClusterReadyReason, "cluster is healthy and ready to accept workloads")
}

// apiEnablements lists every group version and kind the member serves,
// sorted, without subresources. A partial discovery failure still returns
// what was found, with an error.
func apiEnablements(m *registry.Member) ([]clusterv1alpha1.APIEnablement, error) {
	_, lists, err := m.Kube.Discovery().ServerGroupsAndResources()
	var out []clusterv1alpha1.APIEnablement
	for _, l := range lists {
		e := clusterv1alpha1.APIEnablement{GroupVersion: l.GroupVersion}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") {
				continue
			}
			e.Resources = append(e.Resources, clusterv1alpha1.APIResource{Name: r.Name, Kind: r.Kind})
		}
		sort.Slice(e.Resources, func(i, j int) bool { return e.Resources[i].Name < e.Resources[j].Name })
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].GroupVersion < out[j].GroupVersion })
	return out, err
}

// summarize fills nodeSummary and resourceSummary as Karmada's cluster
// status controller does, from the member's node and pod informers
// (registry.Nodes): allocatable sums Ready nodes; allocated sums the
// requests of pods that are bound to a node and not finished, allocating
// those of pods still waiting for one (pending: the scheduler's capacity
// estimate subtracts both), each with one "pods" per such pod. A pod's
// requests count its init containers and overhead as the kube-scheduler
// does (resourcehelper.PodRequests). With models (spec.resourceModels, in
// standard form), allocatableModelings counts the Ready nodes with room for
// a pod per grade of their free resources (capacity.CountModelings); without,
// it is left empty. Errors: the first lists do not arrive within
// ProbeTimeout.
func summarize(ctx context.Context, m *registry.Member, models []clusterv1alpha1.ResourceModel, status *clusterv1alpha1.ClusterStatus) error {
	nodes := m.Nodes()
	if !nodes.WaitSynced(ctx, ProbeTimeout) {
		return fmt.Errorf("list nodes and pods of cluster %s: not answered within %s", m.Name, ProbeTimeout)
	}
	s := nodes.Summary()
	status.NodeSummary = &s.Nodes
	summary := s.Resources
	summary.AllocatableModelings = capacity.CountModelings(models, s.Free)
	status.ResourceSummary = &summary
	return nil
}
