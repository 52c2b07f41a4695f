// Package remedy is Karmada's remedy controller: it writes, for every
// Cluster, the actions the Remedies (remedy.karmada.io/v1alpha1) ask of it
// into Cluster.status.remedyActions. A Remedy applies to a cluster when its
// spec.clusterAffinity is absent (every cluster) or lists the cluster's name,
// and when its spec.decisionMatches is empty or any of them matches one of
// the cluster's conditions (Equal: the condition is there with that status;
// NotEqual: it is there with another; a condition the cluster lacks matches
// neither). The field is the sorted union of the applying Remedies'
// actions, and is emptied when none applies. The MultiClusterIngress and
// MultiClusterService providers read it: TrafficControl takes the cluster out
// of their traffic.
package remedy

import (
	"context"
	"slices"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "remedy"

// Reconciler keeps one Cluster's status.remedyActions.
type Reconciler struct {
	// Client reads Clusters and Remedies (cached) and patches Cluster status.
	Client client.Client
}

var _ reconcile.Reconciler = &Reconciler{}

// SetupWithManager reconciles a Cluster when it is created, when its
// conditions or remedyActions change, and every Cluster when a Remedy
// changes.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(clusterChanged)).
		Watches(&remedyv1alpha1.Remedy{}, handler.EnqueueRequestsFromMapFunc(queue.All(r.Client, func() client.ObjectList { return &clusterv1alpha1.ClusterList{} }))).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// clusterChanged passes a Cluster update that can change its actions: its
// conditions' statuses, or remedyActions itself (someone wrote over it).
var clusterChanged = predicate.Funcs{
	UpdateFunc: func(e event.UpdateEvent) bool {
		o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
		n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
		if !ok1 || !ok2 {
			return true
		}
		return !conditionStatusesEqual(o, n) || !slices.Equal(o.Status.RemedyActions, n.Status.RemedyActions)
	},
}

// conditionStatusesEqual compares what a decision match reads: each
// condition's type and status.
func conditionStatusesEqual(a, b *clusterv1alpha1.Cluster) bool {
	if len(a.Status.Conditions) != len(b.Status.Conditions) {
		return false
	}
	for _, c := range a.Status.Conditions {
		d := meta.FindStatusCondition(b.Status.Conditions, c.Type)
		if d == nil || d.Status != c.Status {
			return false
		}
	}
	return true
}

// Reconcile writes the actions of the Remedies that apply to the Cluster
// req names into its status.remedyActions (a merge patch of that field
// alone, so the cluster status controller's fields are left as they are).
// A Cluster that is gone or being deleted is left alone. Errors are retried.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	remedies := &remedyv1alpha1.RemedyList{}
	if err := r.Client.List(ctx, remedies); err != nil {
		return ctrl.Result{}, err
	}
	actions := Actions(remedies.Items, cluster)
	if slices.Equal(actions, cluster.Status.RemedyActions) {
		return ctrl.Result{}, nil
	}
	patch := client.MergeFrom(cluster.DeepCopy())
	cluster.Status.RemedyActions = actions
	ctrl.LoggerFrom(ctx).V(2).Info("Remedy actions changed", "cluster", cluster.Name, "actions", actions)
	return reconciler.Result(ctrl.Result{}, r.Client.Status().Patch(ctx, cluster, patch))
}

// Actions is the sorted union of the actions of the remedies that apply to
// cluster (see the package comment), or nil when none does.
func Actions(remedies []remedyv1alpha1.Remedy, cluster *clusterv1alpha1.Cluster) []string {
	out := sets.New[string]()
	for i := range remedies {
		if applies(&remedies[i], cluster) {
			for _, a := range remedies[i].Spec.Actions {
				out.Insert(string(a))
			}
		}
	}
	if out.Len() == 0 {
		return nil
	}
	return sets.List(out)
}

func applies(r *remedyv1alpha1.Remedy, cluster *clusterv1alpha1.Cluster) bool {
	if a := r.Spec.ClusterAffinity; a != nil && !slices.Contains(a.ClusterNames, cluster.Name) {
		return false
	}
	if len(r.Spec.DecisionMatches) == 0 {
		return true
	}
	for _, m := range r.Spec.DecisionMatches {
		req := m.ClusterConditionMatch
		if req == nil {
			continue
		}
		c := meta.FindStatusCondition(cluster.Status.Conditions, string(req.ConditionType))
		if c == nil {
			continue
		}
		switch req.Operator {
		case remedyv1alpha1.ClusterConditionEqual:
			if string(c.Status) == req.ConditionStatus {
				return true
			}
		case remedyv1alpha1.ClusterConditionNotEqual:
			if string(c.Status) != req.ConditionStatus {
				return true
			}
		}
	}
	return false
}
