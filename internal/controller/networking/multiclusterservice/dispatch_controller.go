package multiclusterservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// DispatchControllerName is the dispatcher's name in --controllers:
// Karmada's.
const DispatchControllerName = "endpointsliceDispatch"

// Dispatcher sends the slices collected for a CrossCluster
// MultiClusterService to its consumers: for each collected slice of
// provider P and each consumer C other than P, a Work in C's execution
// namespace holds the EndpointSlice "<P>-<slice>", labelled
// kubernetes.io/service-name=<service> and managed by
// endpointslice-dispatch-controller.karmada.io (so the consumer's own
// EndpointSlice controller leaves it alone, kube-proxy serves it, and no
// collector takes it for a local one), annotated with the provision
// cluster. The key is the MultiClusterService: every dispatched Work is
// derived from the collected ones, so the reconcile is level-based and
// needs no finalizer.
type Dispatcher struct {
	Client client.Client
	// Events gets DispatchEndpointSliceSucceed and
	// DispatchEndpointSliceFailed, and APIIncompatible for consumers, when
	// the outcome changes.
	Events *eventrecord.Recorder
}

var dispatchSlices = eventrecord.Operation{Succeed: events.DispatchEndpointSliceSucceed, Failed: events.DispatchEndpointSliceFailed}

// SetupWithManager registers the dispatcher on MultiClusterServices, the
// Works of their slices (collected and dispatched) and Clusters (a consumer
// that joins).
func (d *Dispatcher) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(DispatchControllerName).
		For(&networkingv1alpha1.MultiClusterService{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha1.Work{}, worksOf(mcs.Collected, mcs.Dispatched), labelled).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(queue.All(mgr.GetClient(), mcsList)), builder.WithPredicates(clusterSetChanged())).
		WithOptions(queue.Options(mgr, 4)).
		Complete(d)
}

// Reconcile makes the dispatched Works of one MultiClusterService match its
// collected slices and consumers.
func (d *Dispatcher) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &networkingv1alpha1.MultiClusterService{}
	err := d.Client.Get(ctx, req.NamespacedName, m)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	active := err == nil && m.DeletionTimestamp.IsZero() && mcs.Has(m, networkingv1alpha1.ExposureTypeCrossCluster)
	desired := map[types.NamespacedName]*workv1alpha1.Work{}
	var consumers []string
	collectedAny := false
	if active {
		clusters, err := clusterNames(ctx, d.Client)
		if err != nil {
			return ctrl.Result{}, err
		}
		consumers, _ = mcs.Consumers(m, clusters)
		// A consumer without EndpointSlices gets none, as Karmada skips
		// it, and a Warning says why.
		lacking, err := withoutEndpointSlices(ctx, d.Client, consumers)
		if err != nil {
			return ctrl.Result{}, err
		}
		d.Events.Outcome(consumersIncompatible, incompatibility("consumer", lacking, "no EndpointSlice is dispatched to them"), "", m)
		consumers = without(consumers, lacking)
		collected, err := works(ctx, d.Client, req.NamespacedName, mcs.Collected)
		if err != nil {
			return ctrl.Result{}, err
		}
		for _, w := range collected {
			if !w.DeletionTimestamp.IsZero() {
				continue
			}
			collectedAny = true
			for _, dw := range dispatched(w, m, consumers) {
				desired[client.ObjectKeyFromObject(dw)] = dw
			}
		}
	}
	existing, err := works(ctx, d.Client, req.NamespacedName, mcs.Dispatched)
	if err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	for _, w := range existing {
		want := desired[client.ObjectKeyFromObject(w)]
		if want == nil {
			if w.DeletionTimestamp.IsZero() {
				if err := d.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
					errs = append(errs, fmt.Errorf("withdraw %s from %s: %w", w.Name, w.Namespace, err))
				}
			}
			continue
		}
		delete(desired, client.ObjectKeyFromObject(w))
		if !w.DeletionTimestamp.IsZero() {
			errs = append(errs, errRetry) // made again once it is gone
			continue
		}
		if equality.Semantic.DeepEqual(w.Spec.Workload, want.Spec.Workload) && maps.Equal(w.Labels, want.Labels) {
			continue
		}
		w.Labels, w.Spec.Workload = want.Labels, want.Spec.Workload
		if err := d.Client.Update(ctx, w); err != nil {
			errs = append(errs, fmt.Errorf("update %s/%s: %w", w.Namespace, w.Name, err))
		}
	}
	for _, w := range desired {
		if err := d.Client.Create(ctx, w); err != nil {
			if apierrors.IsNotFound(err) {
				continue // the consumer's execution namespace is not there yet: it is still joining
			}
			errs = append(errs, fmt.Errorf("dispatch to %s: %w", strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix), err))
		}
	}
	outcome := errors.Join(errs...)
	if outcome == nil && active {
		outcome = d.unapplied(ctx, m, existing, collectedAny)
	}
	if active && !errors.Is(outcome, errRetry) && !apierrors.IsConflict(outcome) && !apierrors.IsAlreadyExists(outcome) {
		cond := metav1.Condition{Type: networkingv1alpha1.EndpointSliceDispatched, Status: metav1.ConditionTrue,
			Reason: events.EndpointSliceDispatchedSucceed, Message: "EndpointSlices are dispatched to " + orNone(consumers) + "."}
		if outcome != nil {
			cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, events.EndpointSliceDispatchedFailed, outcome.Error()
		}
		if !errors.As(outcome, new(notCollected)) {
			// (Not yet collected is the usual state of a new
			// MultiClusterService for a moment: the condition says it, no
			// Warning.)
			d.Events.Outcome(dispatchSlices, outcome, "EndpointSlices are dispatched successfully.", m)
		}
		if err := mcs.UpdateStatus(ctx, d.Client, req.NamespacedName, func(s *corev1.ServiceStatus) {
			meta.SetStatusCondition(&s.Conditions, cond)
		}); err != nil {
			errs = append(errs, err)
		}
	}
	return result(errors.Join(errs...))
}

// notCollected: no provider slice to dispatch yet.
type notCollected string

func (e notCollected) Error() string { return string(e) }

// unapplied reports what is not dispatched yet although nothing failed
// here: no slice collected from any provider (the Service is missing or
// not propagated there yet), or dispatched Works a consumer has not applied
// (the execution controller's Applied condition False: a consumer that
// cannot be reached, for one).
func (d *Dispatcher) unapplied(ctx context.Context, m *networkingv1alpha1.MultiClusterService, existing []*workv1alpha1.Work, collectedAny bool) error {
	if !collectedAny {
		clusters, err := clusterNames(ctx, d.Client)
		if err != nil {
			return err
		}
		providers, _ := mcs.Providers(m, clusters)
		return notCollected(fmt.Sprintf("no EndpointSlice of Service %s/%s has been collected from the providers (%s) yet: the Service must exist on the control plane and be running there",
			m.Namespace, m.Name, orNone(providers)))
	}
	failed := map[string]string{}
	for _, w := range existing {
		if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied); c != nil && c.Status == metav1.ConditionFalse {
			failed[strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)] = c.Message
		}
	}
	if len(failed) == 0 {
		return nil
	}
	var parts []string
	for _, c := range slices.Sorted(maps.Keys(failed)) {
		parts = append(parts, c+": "+failed[c])
	}
	return fmt.Errorf("EndpointSlices not applied in %s", strings.Join(parts, "; "))
}

// dispatched are the Works that send collected Work w's slice to each
// consumer other than its provider.
func dispatched(w *workv1alpha1.Work, m *networkingv1alpha1.MultiClusterService, consumers []string) []*workv1alpha1.Work {
	provider := strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)
	if len(w.Spec.Workload.Manifests) != 1 {
		return nil
	}
	src := &discoveryv1.EndpointSlice{}
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, src); err != nil {
		return nil
	}
	name := mcs.DispatchedSliceName(provider, src.Name)
	slice := &discoveryv1.EndpointSlice{
		TypeMeta: metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: name,
			Labels:      map[string]string{mcs.ServiceNameLabel: m.Name, mcs.SliceManagedByLabel: mcs.DispatchedSliceManager},
			Annotations: map[string]string{mcs.ProvisionClusterAnnotation: provider}},
		AddressType: src.AddressType, Ports: src.Ports,
	}
	for _, e := range src.Endpoints {
		// The provider's nodes and pods are not the consumer's.
		e.NodeName, e.TargetRef = nil, nil
		slice.Endpoints = append(slice.Endpoints, e)
	}
	obj, err := runtime.DefaultUnstructuredConverter.ToUnstructured(slice)
	if err != nil {
		return nil
	}
	unstructured.RemoveNestedField(obj, "metadata", "creationTimestamp")
	var out []*workv1alpha1.Work
	for _, c := range consumers {
		if c == provider {
			continue
		}
		// Marked as the execution controller's, for this Work.
		u := &unstructured.Unstructured{Object: runtime.DeepCopyJSON(obj)}
		ns, workName := clusterv1alpha1.ExecutionNamespace(c), binding.WorkName("EndpointSlice", m.Namespace, name)
		// The name is the dispatcher's ("<provider>-<slice>"): a slice of
		// that name in the consumer (left by an earlier install) is taken
		// over.
		ann := binding.MarkManaged(u, registry.ManagedLabel, ns, workName)
		ann[policymatch.ConflictResolutionAnnotation] = policymatch.ConflictResolutionOverwrite
		u.SetAnnotations(ann)
		raw, err := u.MarshalJSON()
		if err != nil {
			return nil
		}
		out = append(out, &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: workName,
				Labels:      map[string]string{mcs.MCSNamespaceLabel: m.Namespace, mcs.MCSNameLabel: m.Name},
				Annotations: map[string]string{mcs.ProvisionClusterAnnotation: provider},
				Finalizers:  []string{binding.ExecutionFinalizer}},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
		})
	}
	return out
}
