package multiclusteringress

import (
	"context"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// ExportsName is the name of the part that exports backend Services (the
// serviceexport-propagation controller of Karmada's
// multicluster-cloud-provider); it runs with the multiClusterIngress
// controller when a provider is configured.
const ExportsName = "multiClusterIngressServiceExport"

// ExportPolicyName is the PropagationPolicy that takes the ServiceExport of
// Service svc to its clusters: Karmada's "propagate-service-<svc>".
func ExportPolicyName(svc string) string { return "propagate-service-" + svc }

// Exports exports every backend Service of a MultiClusterIngress of the
// provider's class, so that its endpoints in each member are imported onto
// the control plane (where the provider reads them): a ServiceExport of the
// same name, and a PropagationPolicy ExportPolicyName that places it in the
// clusters of the Service's binding (spec.clusters and spec.requiredBy),
// both owned by the Service. When no such MultiClusterIngress names the
// Service any more, both go; a ServiceExport or policy the Service does not
// own (one the user made) is never touched.
type Exports struct {
	// Client reads Services, MultiClusterIngresses, IngressClasses and
	// ResourceBindings and writes ServiceExports and PropagationPolicies.
	Client client.Client
	// IngressClass is the provider's IngressClass controller
	// (--provider-ingress-class).
	IngressClass string
}

var _ reconcile.Reconciler = &Exports{}

// SetupWithManager reconciles a Service on its changes, its binding's, and
// those of the MultiClusterIngresses that name it (before and after an
// update) and of IngressClasses.
func (e *Exports) SetupWithManager(mgr ctrl.Manager) error {
	backends := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			if mci, ok := o.(*networkingv1alpha1.MultiClusterIngress); ok {
				for _, svc := range BackendServices(mci) {
					q.Add(reconcile.Request{NamespacedName: client.ObjectKey{Namespace: mci.Namespace, Name: svc}})
				}
			}
		}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ExportsName).
		For(&corev1.Service{}).
		Watches(&networkingv1alpha1.MultiClusterIngress{}, handler.Funcs{
			CreateFunc: func(_ context.Context, ev event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				backends(q, ev.Object)
			},
			UpdateFunc: func(_ context.Context, ev event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				backends(q, ev.ObjectOld, ev.ObjectNew)
			},
			DeleteFunc: func(_ context.Context, ev event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				backends(q, ev.Object)
			},
		}).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []reconcile.Request {
			rb, ok := o.(*workv1alpha2.ResourceBinding)
			if !ok || rb.Spec.Resource.APIVersion != "v1" || rb.Spec.Resource.Kind != "Service" {
				return nil
			}
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: rb.Namespace, Name: rb.Spec.Resource.Name}}}
		})).
		Watches(&networkingv1.IngressClass{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []reconcile.Request {
			list := &networkingv1alpha1.MultiClusterIngressList{}
			if err := e.Client.List(ctx, list); err != nil {
				return nil
			}
			var out []reconcile.Request
			for i := range list.Items {
				for _, svc := range BackendServices(&list.Items[i]) {
					out = append(out, reconcile.Request{NamespacedName: client.ObjectKey{Namespace: list.Items[i].Namespace, Name: svc}})
				}
			}
			return out
		})).
		WithOptions(queue.Options(mgr, 2)).
		Complete(e)
}

// Reconcile exports the Service req, or withdraws its export. Errors are
// retried.
func (e *Exports) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	svc := &corev1.Service{}
	if err := e.Client.Get(ctx, req.NamespacedName, svc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err) // what it owned goes with it
	}
	if !svc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	needed, known, err := e.needed(ctx, svc)
	if err != nil || !known { // an IngressClass change brings it back
		return ctrl.Result{}, err
	}
	if !needed {
		return ctrl.Result{}, e.withdraw(ctx, svc)
	}
	return ctrl.Result{}, e.export(ctx, svc)
}

// needed reports whether a live MultiClusterIngress of the provider's class
// names svc as a backend; known is false while that cannot be told (several
// default IngressClasses), and then nothing changes.
func (e *Exports) needed(ctx context.Context, svc *corev1.Service) (needed, known bool, err error) {
	list := &networkingv1alpha1.MultiClusterIngressList{}
	if err := e.Client.List(ctx, list, client.InNamespace(svc.Namespace)); err != nil {
		return false, false, err
	}
	known = true
	for i := range list.Items {
		mci := &list.Items[i]
		if !mci.DeletionTimestamp.IsZero() || !slices.Contains(BackendServices(mci), svc.Name) {
			continue
		}
		v, _, err := ClassOf(ctx, e.Client, mci, e.IngressClass)
		switch {
		case err != nil:
			return false, false, err
		case v == Ours:
			return true, true, nil
		case v == Unknown:
			known = false
		}
	}
	return false, known, nil
}

func ownerRef(svc *corev1.Service) []metav1.OwnerReference {
	return []metav1.OwnerReference{*metav1.NewControllerRef(svc, corev1.SchemeGroupVersion.WithKind("Service"))}
}

// export makes the ServiceExport of svc and keeps its policy on the
// clusters of svc's binding (none while it has no binding).
func (e *Exports) export(ctx context.Context, svc *corev1.Service) error {
	se := &unstructured.Unstructured{}
	se.SetGroupVersionKind(mcs.ServiceExportGVK)
	se.SetNamespace(svc.Namespace)
	se.SetName(svc.Name)
	se.SetOwnerReferences(ownerRef(svc))
	if err := e.Client.Create(ctx, se); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create ServiceExport %s/%s: %w", svc.Namespace, svc.Name, err)
	}
	rb := &workv1alpha2.ResourceBinding{}
	if err := e.Client.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: binding.Name(svc.Name, "Service")}, rb); err != nil {
		return client.IgnoreNotFound(err) // a binding event brings it back
	}
	clusters := Clusters(rb)
	if len(clusters) == 0 {
		return nil
	}
	pp := &policyv1alpha1.PropagationPolicy{}
	key := client.ObjectKey{Namespace: svc.Namespace, Name: ExportPolicyName(svc.Name)}
	err := e.Client.Get(ctx, key, pp)
	if apierrors.IsNotFound(err) {
		pp = &policyv1alpha1.PropagationPolicy{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, OwnerReferences: ownerRef(svc)},
			Spec: policyv1alpha1.PropagationSpec{
				ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: mcs.ServiceExportGVK.GroupVersion().String(), Kind: mcs.ServiceExportGVK.Kind, Name: svc.Name}},
				Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: clusters}},
			},
		}
		if err := e.Client.Create(ctx, pp); err != nil && !apierrors.IsAlreadyExists(err) {
			return fmt.Errorf("create PropagationPolicy %s/%s: %w", key.Namespace, key.Name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !metav1.IsControlledBy(pp, svc) || pp.Spec.Placement.ClusterAffinity == nil || slices.Equal(pp.Spec.Placement.ClusterAffinity.ClusterNames, clusters) {
		return nil // the user's own policy, or up to date
	}
	pp.Spec.Placement.ClusterAffinity.ClusterNames = clusters
	return e.Client.Update(ctx, pp)
}

// withdraw deletes the ServiceExport and policy svc owns, if any.
func (e *Exports) withdraw(ctx context.Context, svc *corev1.Service) error {
	pp := &policyv1alpha1.PropagationPolicy{}
	err := e.Client.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: ExportPolicyName(svc.Name)}, pp)
	if err == nil && metav1.IsControlledBy(pp, svc) {
		err = e.Client.Delete(ctx, pp)
	}
	if client.IgnoreNotFound(err) != nil {
		return err
	}
	se := &unstructured.Unstructured{}
	se.SetGroupVersionKind(mcs.ServiceExportGVK)
	err = e.Client.Get(ctx, client.ObjectKey{Namespace: svc.Namespace, Name: svc.Name}, se)
	if err == nil && metav1.IsControlledBy(se, svc) {
		err = e.Client.Delete(ctx, se)
	}
	return client.IgnoreNotFound(err)
}
