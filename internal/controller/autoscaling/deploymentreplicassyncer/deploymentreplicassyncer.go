// Package deploymentreplicassyncer is Karmada's deploymentReplicasSyncer
// controller (off by default; --controllers=*,deploymentReplicasSyncer):
// a Deployment template labelled resourcetemplate.karmada.io/retain-replicas
// and divided between clusters, whose members' HPAs scale their own copies,
// gets the sum of the members' replicas as its spec.replicas, so that the
// control plane shows, and the scheduler divides, what really runs.
package deploymentreplicassyncer

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers, as Karmada's.
const ControllerName = "deploymentReplicasSyncer"

// StatusWait is how soon a Deployment whose members' status has not all
// been collected yet is looked at again.
const StatusWait = time.Second

// Reconciler writes the members' replicas into the template's spec.replicas.
type Reconciler struct {
	Client client.Client
}

// retained reports the retain-replicas label.
func retained(o client.Object) bool { return o.GetLabels()[native.RetainReplicasLabel] == "true" }

// SetupWithManager reconciles a labelled Deployment template when its label
// appears or its spec or status replicas change (Karmada's predicate).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	changed := predicate.Funcs{
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*appsv1.Deployment), e.ObjectNew.(*appsv1.Deployment)
			if !retained(n) {
				return false
			}
			return !retained(o) || !ptrEq(o.Spec.Replicas, n.Spec.Replicas) || o.Status.Replicas != n.Status.Replicas
		},
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&appsv1.Deployment{}, builder.WithPredicates(changed)).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

func ptrEq(a, b *int32) bool { return (a == nil) == (b == nil) && (a == nil || *a == *b) }

// Reconcile sets the template's spec.replicas to its status.replicas, the
// members' sum, once that status reflects the current division: the
// binding has the template's replicas, is scheduled at its generation,
// and every target cluster has reported a copy with replicas.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: binding.Name(req.Name, "Deployment")}, rb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if p := rb.Spec.Placement; p == nil || p.ReplicaScheduling == nil || p.ReplicaScheduling.ReplicaSchedulingType != policyv1alpha1.ReplicaSchedulingTypeDivided {
		return ctrl.Result{}, nil // each member runs the whole count: nothing to add up
	}
	d := &appsv1.Deployment{}
	if err := r.Client.Get(ctx, req.NamespacedName, d); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !retained(d) || d.Spec.Replicas == nil || *d.Spec.Replicas == d.Status.Replicas {
		return ctrl.Result{}, nil
	}
	if !collected(d, rb) {
		return ctrl.Result{RequeueAfter: StatusWait}, nil
	}
	from := *d.Spec.Replicas
	d.Spec.Replicas = new(d.Status.Replicas)
	if err := r.Client.Update(ctx, d); err != nil {
		if apierrors.IsConflict(err) {
			return ctrl.Result{RequeueAfter: StatusWait}, nil
		}
		return ctrl.Result{}, fmt.Errorf("update replicas of Deployment %s: %w", req, err)
	}
	klog.FromContext(ctx).Info("Synced the template's replicas to its members'", "deployment", klog.KObj(d), "from", from, "to", d.Status.Replicas)
	return ctrl.Result{}, nil
}

// collected reports whether d's status.replicas is the members' sum for its
// current spec.replicas (Karmada's checks).
func collected(d *appsv1.Deployment, rb *workv1alpha2.ResourceBinding) bool {
	if rb.Spec.Replicas != *d.Spec.Replicas || rb.Status.SchedulerObservedGeneration < rb.Generation ||
		len(rb.Status.AggregatedStatus) != len(rb.Spec.Clusters) {
		return false
	}
	var sum int32
	for _, item := range rb.Status.AggregatedStatus {
		if item.Status == nil {
			return false
		}
		var st appsv1.DeploymentStatus
		if err := json.Unmarshal(item.Status.Raw, &st); err != nil || st.Replicas <= 0 {
			return false // a member's HPA keeps at least one replica: not reported yet
		}
		sum += st.Replicas
	}
	return d.Status.Replicas == sum
}
