// Package endpointslice implements Karmada's endpointSlice controller: each
// EndpointSlice collected from a member for an exported Service (a Work in
// the member's execution namespace, labelled by the serviceExport
// controller) becomes an EndpointSlice on the control plane,
// "imported-<cluster>-<slice>", labelled for the derived Service
// "derived-<service>". A ServiceImport's policy then takes it to the
// consumer clusters as a dependency of the ServiceImport. When the Work
// goes, so does the slice.
package endpointslice

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// ControllerName is the controller's name in --controllers: Karmada's.
const ControllerName = "endpointSlice"

// Reconciler turns collected Works into control-plane EndpointSlices.
type Reconciler struct {
	Client client.Client
}

// SetupWithManager registers the controller on the Works that hold a
// collected EndpointSlice (or held one: a Work that loses the label, or
// is being deleted, still carries the finalizer).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	collected := predicate.NewPredicateFuncs(func(o client.Object) bool {
		return o.GetLabels()[mcs.EndpointSliceNameLabel] != "" || controllerutil.ContainsFinalizer(o, mcs.CollectedFinalizer)
	})
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&workv1alpha1.Work{}, builder.WithPredicates(collected)).
		WithOptions(queue.Options(mgr, 4)).
		Complete(r)
}

// Reconcile writes or withdraws the control-plane slice of one Work.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, w); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	id := w.Labels[mcs.WorkIDLabel]
	if !w.DeletionTimestamp.IsZero() || w.Labels[mcs.EndpointSliceNameLabel] == "" {
		if err := r.withdraw(ctx, w, id); err != nil {
			return ctrl.Result{}, err
		}
		if controllerutil.RemoveFinalizer(w, mcs.CollectedFinalizer) {
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, w))
		}
		return ctrl.Result{}, nil
	}
	if controllerutil.AddFinalizer(w, mcs.CollectedFinalizer) {
		if err := r.Client.Update(ctx, w); err != nil {
			return ctrl.Result{}, err
		}
	}
	if len(w.Spec.Workload.Manifests) != 1 {
		return ctrl.Result{}, nil // not one of ours
	}
	member := &discoveryv1.EndpointSlice{}
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, member); err != nil {
		return ctrl.Result{}, nil // cannot be fixed by a retry; the next collection rewrites it
	}
	cluster := strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)
	svc := w.Labels[mcs.EndpointSliceNameLabel]
	desired := &discoveryv1.EndpointSlice{
		ObjectMeta: metav1.ObjectMeta{
			Namespace: member.Namespace, Name: mcs.ImportedSliceName(cluster, member.Name),
			Labels: map[string]string{
				mcs.ServiceNameLabel:    mcs.DerivedServiceName(svc),
				mcs.SliceManagedByLabel: mcs.ImportedSliceManager,
				mcs.WorkIDLabel:         id,
			},
			Annotations: map[string]string{binding.WorkNamespaceAnnotation: w.Namespace, binding.WorkNameAnnotation: w.Name},
		},
		AddressType: member.AddressType,
		Endpoints:   member.Endpoints,
		Ports:       member.Ports,
	}
	current := &discoveryv1.EndpointSlice{}
	err := r.Client.Get(ctx, client.ObjectKeyFromObject(desired), current)
	if apierrors.IsNotFound(err) {
		if err := r.Client.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
			return ctrl.Result{}, fmt.Errorf("create EndpointSlice %s/%s: %w", desired.Namespace, desired.Name, err)
		}
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if equality.Semantic.DeepEqual(current.Labels, desired.Labels) && equality.Semantic.DeepEqual(current.Annotations, desired.Annotations) &&
		current.AddressType == desired.AddressType && equality.Semantic.DeepEqual(current.Endpoints, desired.Endpoints) &&
		equality.Semantic.DeepEqual(current.Ports, desired.Ports) {
		return ctrl.Result{}, nil
	}
	if current.AddressType != desired.AddressType {
		// addressType is immutable: make the slice again.
		if err := r.Client.Delete(ctx, current); err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil
	}
	current.Labels, current.Annotations = desired.Labels, desired.Annotations
	current.Endpoints, current.Ports = desired.Endpoints, desired.Ports
	if err := r.Client.Update(ctx, current); err != nil {
		return ctrl.Result{}, fmt.Errorf("update EndpointSlice %s/%s: %w", current.Namespace, current.Name, err)
	}
	return ctrl.Result{}, nil
}

// withdraw deletes the control-plane slices made from Work w (permanent id
// id, which the serviceExport controller gives every Work it creates).
func (r *Reconciler) withdraw(ctx context.Context, w *workv1alpha1.Work, id string) error {
	if id == "" {
		return nil // not made by the serviceExport controller: nothing of ours
	}
	list := &discoveryv1.EndpointSliceList{}
	if err := r.Client.List(ctx, list, client.MatchingLabels{mcs.SliceManagedByLabel: mcs.ImportedSliceManager, mcs.WorkIDLabel: id}); err != nil {
		return fmt.Errorf("list the EndpointSlices made from Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	for i := range list.Items {
		s := &list.Items[i]
		if err := r.Client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete EndpointSlice %s/%s: %w", s.Namespace, s.Name, err)
		}
	}
	return nil
}
