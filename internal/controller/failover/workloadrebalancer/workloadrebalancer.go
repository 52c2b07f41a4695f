// Package workloadrebalancer is Karmada's WorkloadRebalancer controller
// (apps.karmada.io/v1alpha1): it asks the scheduler to place each listed
// workload afresh, by setting its binding's spec.rescheduleTriggeredAt to
// the rebalancer's creation time, and reports each workload's result in
// status.observedWorkloads. With ttlSecondsAfterFinished, a finished
// rebalancer is deleted after that many seconds.
package workloadrebalancer

import (
	"context"
	"fmt"
	"sort"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "workloadRebalancer"

// Reconciler runs WorkloadRebalancers.
type Reconciler struct {
	Client client.Client
	// Clock tells the time; nil is the real clock (controllermanager.Options.Clock).
	Clock clock.PassiveClock
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&appsv1alpha1.WorkloadRebalancer{}).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

func key(w appsv1alpha1.ObjectReference) string {
	return w.APIVersion + "/" + w.Kind + "/" + w.Namespace + "/" + w.Name
}

// Reconcile triggers the rescheduling of every listed workload that has no
// result yet (a workload whose binding is missing is retried on every
// change and reported Failed with ReferencedBindingNotFound), writes the
// results, and deletes a finished rebalancer once its TTL is over.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	wr := &appsv1alpha1.WorkloadRebalancer{}
	if err := r.Client.Get(ctx, req.NamespacedName, wr); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !wr.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	done := map[string]appsv1alpha1.ObservedWorkload{}
	for _, o := range wr.Status.ObservedWorkloads {
		if o.Result == appsv1alpha1.RebalanceSuccessful {
			done[key(o.Workload)] = o
		}
	}
	var observed []appsv1alpha1.ObservedWorkload
	for _, w := range wr.Spec.Workloads {
		if o, ok := done[key(w)]; ok {
			observed = append(observed, o)
			continue
		}
		o := appsv1alpha1.ObservedWorkload{Workload: w, Result: appsv1alpha1.RebalanceSuccessful}
		if err := r.trigger(ctx, w, wr.CreationTimestamp); apierrors.IsNotFound(err) {
			o.Result, o.Reason = appsv1alpha1.RebalanceFailed, appsv1alpha1.RebalanceObjectNotFound
		} else if err != nil {
			return ctrl.Result{}, err
		}
		observed = append(observed, o)
	}
	sort.Slice(observed, func(i, j int) bool { return key(observed[i].Workload) < key(observed[j].Workload) })
	status := appsv1alpha1.WorkloadRebalancerStatus{ObservedWorkloads: observed, ObservedGeneration: wr.Generation, FinishTime: wr.Status.FinishTime}
	if status.FinishTime == nil || wr.Status.ObservedGeneration != wr.Generation {
		t := metav1.NewTime(reconciler.Now(r.Clock))
		status.FinishTime = &t
	}
	if !equality.Semantic.DeepEqual(status, wr.Status) {
		patch := client.MergeFrom(wr.DeepCopy())
		wr.Status = status
		if err := r.Client.Status().Patch(ctx, wr, patch); err != nil {
			return ctrl.Result{}, fmt.Errorf("write the status of WorkloadRebalancer %s: %w", wr.Name, err)
		}
	}
	if ttl := wr.Spec.TTLSecondsAfterFinished; ttl != nil {
		left := wr.Status.FinishTime.Add(time.Duration(*ttl) * time.Second).Sub(reconciler.Now(r.Clock))
		if left > 0 {
			return ctrl.Result{RequeueAfter: left}, nil
		}
		if err := r.Client.Delete(ctx, wr); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		log.FromContext(ctx).Info("Deleted the finished WorkloadRebalancer", "name", wr.Name, "ttlSecondsAfterFinished", *ttl)
	}
	return ctrl.Result{}, nil
}

// trigger sets the workload's binding's spec.rescheduleTriggeredAt to at,
// unless it is already that late.
func (r *Reconciler) trigger(ctx context.Context, w appsv1alpha1.ObjectReference, at metav1.Time) error {
	kind := binding.Namespaced
	if w.Namespace == "" {
		kind = binding.ClusterScoped
	}
	gvk := schema.FromAPIVersionAndKind(w.APIVersion, w.Kind)
	b := kind.Empty()
	if err := r.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: binding.Name(w.Name, gvk.Kind)}, b); err != nil {
		return err
	}
	spec := binding.Spec(b)
	if spec.Resource.APIVersion != w.APIVersion || spec.Resource.Kind != w.Kind || spec.Resource.Name != w.Name {
		return apierrors.NewNotFound(schema.GroupResource{Group: gvk.Group, Resource: w.Kind}, w.Name)
	}
	if t := spec.RescheduleTriggeredAt; t != nil && !t.Before(&at) {
		return nil
	}
	patch := client.MergeFrom(b.DeepCopyObject().(client.Object))
	spec.RescheduleTriggeredAt = &at
	return r.Client.Patch(ctx, b, patch)
}
