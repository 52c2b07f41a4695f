// Package clustertaintpolicy is Karmada's cluster taint policy controller: it
// adds and removes the taints of ClusterTaintPolicies (policy.karmada.io) on
// Cluster.spec.taints when a cluster's status conditions match the policy's
// addOnConditions or removeOnConditions. It is how a NotReady cluster gets
// a NoExecute taint, which the taint manager turns into eviction.
package clustertaintpolicy

import (
	"context"
	"fmt"
	"slices"
	"sort"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "clusterTaintPolicy"

// EventSource is the source of the controller's events: Karmada's name of
// the controller.
const EventSource = "cluster-taint-policy-controller"

// Reconciler keeps each Cluster's policy taints in line with its conditions.
type Reconciler struct {
	Client client.Client
	// Clock tells the time taints are added at; nil is the real clock
	// (controllermanager.Options.Clock).
	Clock clock.PassiveClock
	// Events, if set, gets Karmada's TaintClusterSucceed (each change of a
	// cluster's taints) and TaintClusterFailed on the Cluster.
	Events *eventrecord.Recorder
}

// taintCluster is the operation whose outcomes are raised on the Cluster.
var taintCluster = eventrecord.Operation{Succeed: events.TaintClusterSucceed, Failed: events.TaintClusterFailed}

// SetupWithManager reconciles a Cluster when it changes and every Cluster
// when a ClusterTaintPolicy changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := func(ctx context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		var list clusterv1alpha1.ClusterList
		if r.Client.List(ctx, &list) != nil {
			return
		}
		for _, c := range list.Items {
			q.Add(reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&c)})
		}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}).
		Watches(&policyv1alpha1.ClusterTaintPolicy{}, handler.Funcs{
			CreateFunc: func(ctx context.Context, _ event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				all(ctx, q)
			},
			UpdateFunc: func(ctx context.Context, _ event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				all(ctx, q)
			},
		}).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// Reconcile applies every ClusterTaintPolicy that targets the cluster, in
// name order: when all of a policy's addOnConditions match, its taints are
// added (a taint is one key and effect; its value is brought in line);
// then, when all of its removeOnConditions match, they are removed. Taints
// nobody's policy names are left alone, and deleting a policy removes
// nothing, as in Karmada.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	var policies policyv1alpha1.ClusterTaintPolicyList
	if err := r.Client.List(ctx, &policies); err != nil {
		return ctrl.Result{}, fmt.Errorf("list ClusterTaintPolicies: %w", err)
	}
	sort.Slice(policies.Items, func(i, j int) bool { return policies.Items[i].Name < policies.Items[j].Name })
	taints := slices.Clone(cluster.Spec.Taints)
	changed := false
	now := metav1.NewTime(reconciler.Now(r.Clock))
	for i := range policies.Items {
		p := &policies.Items[i].Spec
		if p.TargetClusters != nil && !clusteraffinity.Matches(cluster, p.TargetClusters) {
			continue
		}
		if len(p.AddOnConditions) > 0 && Match(cluster.Status.Conditions, p.AddOnConditions) {
			for _, t := range p.Taints {
				var c bool
				taints, c = add(taints, t, now)
				changed = changed || c
			}
		}
		if len(p.RemoveOnConditions) > 0 && Match(cluster.Status.Conditions, p.RemoveOnConditions) {
			for _, t := range p.Taints {
				n := len(taints)
				taints = slices.DeleteFunc(taints, func(ct corev1.Taint) bool { return ct.Key == t.Key && ct.Effect == t.Effect })
				changed = changed || len(taints) != n
			}
		}
	}
	if !changed {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFromWithOptions(cluster.DeepCopy(), client.MergeFromWithOptimisticLock{})
	cluster.Spec.Taints = taints
	if err := r.Client.Patch(ctx, cluster, patch); apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	} else if err != nil {
		err = fmt.Errorf("update the taints of Cluster %s: %w", cluster.Name, err)
		r.Events.Happened(taintCluster, err, "", cluster)
		return ctrl.Result{}, err
	}
	log.FromContext(ctx).Info("Cluster taints changed by ClusterTaintPolicy", "cluster", cluster.Name, "taints", taints)
	r.Events.Happened(taintCluster, nil, fmt.Sprintf("ClusterTaintPolicies changed the taints of cluster %s; they are now: %s.",
		cluster.Name, eventrecord.Taints(taints)), cluster)
	return ctrl.Result{}, nil
}

// add puts t on taints unless a taint of its key and effect is there with
// its value; a new taint records when it was added (for tolerationSeconds).
func add(taints []corev1.Taint, t policyv1alpha1.Taint, now metav1.Time) ([]corev1.Taint, bool) {
	for i := range taints {
		if taints[i].Key == t.Key && taints[i].Effect == t.Effect {
			if taints[i].Value == t.Value {
				return taints, false
			}
			taints[i].Value = t.Value
			return taints, true
		}
	}
	return append(taints, corev1.Taint{Key: t.Key, Value: t.Value, Effect: t.Effect, TimeAdded: &now}), true
}

// Match reports whether every condition matches: the cluster has a
// condition of that type whose status is In (or NotIn) the values. A
// missing condition reads as status Unknown.
func Match(conditions []metav1.Condition, match []policyv1alpha1.MatchCondition) bool {
	for _, m := range match {
		status := metav1.ConditionUnknown
		if c := meta.FindStatusCondition(conditions, m.ConditionType); c != nil {
			status = c.Status
		}
		in := slices.Contains(m.StatusValues, status)
		switch m.Operator {
		case policyv1alpha1.MatchConditionOpIn:
			if !in {
				return false
			}
		case policyv1alpha1.MatchConditionOpNotIn:
			if in {
				return false
			}
		default:
			return false
		}
	}
	return true
}
