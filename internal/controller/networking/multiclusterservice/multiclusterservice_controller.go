// Package multiclusterservice implements Karmada's multiclusterservice and
// endpointsliceDispatch controllers (gate MultiClusterService) and, for
// type LoadBalancer, the part of Karmada's multicluster-cloud-provider that
// drives a load balancer.
//
// A MultiClusterService exposes the Service of the same name:
//
//   - CrossCluster: the Service goes to the provider and consumer clusters
//     (mcs.Providers, mcs.Consumers). It is an entry
//     "<name>-multiclusterservice" in the spec.requiredBy of the Service's
//     binding, so a policy of the Service's own keeps its placement and the
//     MultiClusterService adds only the clusters it needs; a Service no
//     policy claims gets an attached binding, as a dependency does. Each
//     provider gets a marker Work (never applied) that tells the
//     endpointsliceCollect controller to collect the Service's slices
//     there; the dispatcher (dispatch_controller.go) sends the collected
//     slices to every other consumer as "<provider>-<slice>".
//   - LoadBalancer: the clusters of the Service's own binding are marked
//     for collection, and the load balancer provider (package
//     loadbalancer) is given their ready pod addresses; the address it
//     returns is written to status.loadBalancer.
//
// A provider that is NotReady keeps its marker and so its collected
// slices: endpoints are not withdrawn from consumers for an unreachable
// provider.
package multiclusterservice

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controller/networking/loadbalancer"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// ControllerName is the controller's name in --controllers: Karmada's.
const ControllerName = "multiclusterservice"

// Templates reads Service templates and reports their changes (the
// detector).
type Templates interface {
	binding.TemplateGetter
	Subscribe(fn func(gvk schema.GroupVersionKind, namespace, name string))
}

// Reconciler acts on MultiClusterServices.
type Reconciler struct {
	Client    client.Client
	Templates Templates
	// LoadBalancer serves type LoadBalancer; nil leaves those waiting, with
	// a Warning event saying how to configure one.
	LoadBalancer loadbalancer.Provider
	// Events gets SyncServiceSucceed and SyncServiceFailed, MCSLoadBalance,
	// and APIIncompatible for providers, on the MultiClusterService when
	// the outcome changes.
	Events *eventrecord.Recorder
	// Recorder gets ClusterNotFound events.
	Recorder record.EventRecorder

	feed queue.Feed
}

var (
	syncService  = eventrecord.Operation{Succeed: events.SyncServiceSucceed, Failed: events.SyncServiceFailed}
	loadBalancer = eventrecord.Operation{Succeed: events.MCSLoadBalance, Failed: events.MCSLoadBalance}
)

// SetupWithManager registers the controller on MultiClusterServices, and
// maps to them: Clusters (a cluster that joins is a provider and consumer
// of those that list none), the Services' templates and bindings, and the
// Works that carry their labels (markers, and collected slices: a load
// balancer's backends).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.Templates.Subscribe(func(gvk schema.GroupVersionKind, namespace, name string) {
		if gvk == mcs.ServiceGVK {
			r.feed.Add(ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: name}})
		}
	})
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&networkingv1alpha1.MultiClusterService{}, builder.WithPredicates(specOrLifecycleChanged())).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(queue.All(mgr.GetClient(), mcsList)),
			builder.WithPredicates(clusterSetChanged())).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			res := o.(*workv1alpha2.ResourceBinding).Spec.Resource
			if res.APIVersion != "v1" || res.Kind != "Service" {
				return nil
			}
			return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: res.Name}}}
		})).
		Watches(&workv1alpha1.Work{}, worksOf(mcs.Marker, mcs.Collected), labelled).
		WatchesRawSource(r.feed.Source()).
		WithOptions(queue.Options(mgr, 4)).
		Complete(r)
}

// labelled passes the Works that carry a MultiClusterService's labels.
var labelled = builder.WithPredicates(predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[mcs.MCSNameLabel] != "" }))

// worksOf maps the Works of the given roles to their MultiClusterService.
func worksOf(roles ...mcs.Role) handler.EventHandler {
	return handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
		if !slices.Contains(roles, mcs.RoleOf(o)) {
			return nil
		}
		l := o.GetLabels()
		return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: l[mcs.MCSNamespaceLabel], Name: l[mcs.MCSNameLabel]}}}
	})
}

// specOrLifecycleChanged passes creations, deletions and updates of the
// spec, labels, finalizers or deletion state: not this controller's own
// status writes.
func specOrLifecycleChanged() predicate.Predicate {
	return predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			return !e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp()) ||
				!slices.Equal(e.ObjectNew.GetFinalizers(), e.ObjectOld.GetFinalizers())
		},
		CreateFunc:  func(event.CreateEvent) bool { return false },
		DeleteFunc:  func(event.DeleteEvent) bool { return false },
		GenericFunc: func(event.GenericEvent) bool { return false },
	})
}

// clusterSetChanged passes Clusters that join or leave (and a change of
// deletion state), and those that start or stop serving EndpointSlices
// (lacksEndpointSlices): the only Cluster changes that change who provides
// and consumes.
func clusterSetChanged() predicate.Predicate {
	return predicate.Funcs{
		UpdateFunc: func(e event.UpdateEvent) bool {
			if !e.ObjectNew.GetDeletionTimestamp().Equal(e.ObjectOld.GetDeletionTimestamp()) {
				return true
			}
			o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
			n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
			return ok1 && ok2 && lacksEndpointSlices(o) != lacksEndpointSlices(n)
		},
	}
}

func mcsList() client.ObjectList { return &networkingv1alpha1.MultiClusterServiceList{} }

// clusterNames lists the registered clusters (not being removed), sorted.
func clusterNames(ctx context.Context, c client.Reader) ([]string, error) {
	list := &clusterv1alpha1.ClusterList{}
	if err := c.List(ctx, list); err != nil {
		return nil, err
	}
	var out []string
	for _, cl := range list.Items {
		if cl.DeletionTimestamp.IsZero() {
			out = append(out, cl.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// errRetry asks for a quick retry without reporting a failure.
var errRetry = errors.New("retry")

// Reconcile brings what one MultiClusterService made in line with it.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	m := &networkingv1alpha1.MultiClusterService{}
	err := r.Client.Get(ctx, req.NamespacedName, m)
	if apierrors.IsNotFound(err) {
		// Gone without this controller (its finalizer was removed by
		// hand, or the controller was off): release what is left.
		return result(r.release(ctx, req.NamespacedName, nil))
	}
	if err != nil {
		return ctrl.Result{}, err
	}
	if !m.DeletionTimestamp.IsZero() {
		if !controllerutil.ContainsFinalizer(m, mcs.MCSFinalizer) {
			return ctrl.Result{}, nil
		}
		if err := r.release(ctx, req.NamespacedName, m); err != nil {
			return result(err)
		}
		controllerutil.RemoveFinalizer(m, mcs.MCSFinalizer)
		return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, m))
	}
	if controllerutil.AddFinalizer(m, mcs.MCSFinalizer) {
		if err := r.Client.Update(ctx, m); err != nil {
			return result(err)
		}
	}
	clusters, err := clusterNames(ctx, r.Client)
	if err != nil {
		return ctrl.Result{}, err
	}
	switch {
	case mcs.Has(m, networkingv1alpha1.ExposureTypeCrossCluster):
		return result(r.crossCluster(ctx, m, clusters))
	case mcs.Has(m, networkingv1alpha1.ExposureTypeLoadBalancer):
		return result(r.loadBalance(ctx, m))
	}
	return result(r.release(ctx, req.NamespacedName, nil))
}

// result turns a reconcile outcome into controller-runtime's.
func result(err error) (ctrl.Result, error) {
	switch {
	case err == nil:
		return ctrl.Result{}, nil
	case errors.Is(err, errRetry), errors.Is(err, binding.ErrTemplatesLoading):
		return ctrl.Result{RequeueAfter: time.Second}, nil
	case apierrors.IsAlreadyExists(err):
		// A create that lost a race with the cache: like a conflict.
		return ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil
	}
	return reconciler.Result(ctrl.Result{}, err)
}

// crossCluster sends the Service to the providers and consumers, marks the
// providers for collection, and reports ServiceApplied.
func (r *Reconciler) crossCluster(ctx context.Context, m *networkingv1alpha1.MultiClusterService, clusters []string) error {
	providers, unknownProviders := mcs.Providers(m, clusters)
	consumers, unknownConsumers := mcs.Consumers(m, clusters)
	targets := append(slices.Clone(providers), consumers...)
	slices.Sort(targets)
	targets = slices.Compact(targets)
	err := r.require(ctx, m, targets)
	if errors.Is(err, errRetry) || errors.Is(err, binding.ErrTemplatesLoading) {
		return err
	}
	// Slices cannot be collected from a provider without EndpointSlices:
	// it gets no marker, as Karmada skips it, and a Warning says why.
	lacking, listErr := withoutEndpointSlices(ctx, r.Client, providers)
	if listErr != nil {
		return listErr
	}
	r.Events.Outcome(providersIncompatible, incompatibility("provider", lacking, "their endpoints are not collected"), "", m)
	markErr := r.mark(ctx, m, without(providers, lacking))
	var problems []string
	notFound := ""
	if unknown := append(slices.Clone(unknownProviders), unknownConsumers...); len(unknown) > 0 {
		slices.Sort(unknown)
		notFound = fmt.Sprintf("cluster(s) %s not found: register them, or fix spec.providerClusters/consumerClusters (or range.clusterNames); the Service goes to %s",
			strings.Join(slices.Compact(unknown), ", "), orNone(targets))
		problems = append(problems, notFound)
	}
	if err != nil {
		problems = append(problems, err.Error())
	}
	if markErr != nil {
		problems = append(problems, markErr.Error())
	}
	cond := metav1.Condition{Type: networkingv1alpha1.MCSServiceAppliedConditionType, Status: metav1.ConditionTrue,
		Reason: events.ServiceAppliedSucceed, Message: "Service is propagated to target clusters: " + orNone(targets) + "."}
	var outcome error
	if len(problems) > 0 {
		outcome = errors.New(strings.Join(problems, "; "))
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, events.ServiceAppliedFailed, outcome.Error()
	}
	if prev := meta.FindStatusCondition(m.Status.Conditions, cond.Type); notFound != "" && r.Recorder != nil && (prev == nil || prev.Message != cond.Message) {
		r.Recorder.Event(m, corev1.EventTypeWarning, events.ClusterNotFound, notFound)
	}
	r.Events.Outcome(syncService, outcome, "Service is propagated to target clusters.", m)
	if err := mcs.UpdateStatus(ctx, r.Client, client.ObjectKeyFromObject(m), func(s *corev1.ServiceStatus) {
		meta.SetStatusCondition(&s.Conditions, cond)
	}); err != nil {
		return err
	}
	if err != nil && !errors.Is(err, errServiceMissing) {
		return err
	}
	return markErr
}

func orNone(names []string) string {
	if len(names) == 0 {
		return "no cluster"
	}
	return strings.Join(names, ", ")
}

// errServiceMissing: the Service to expose does not exist; the
// MultiClusterService is retried when it is created (template events).
var errServiceMissing = errors.New("service missing")

// require writes the MultiClusterService's entry, clusters, into the
// spec.requiredBy of its Service's binding, creating an attached binding
// when no policy claims the Service.
func (r *Reconciler) require(ctx context.Context, m *networkingv1alpha1.MultiClusterService, clusters []string) error {
	svc, found, err := r.Templates.Template(mcs.ServiceGVK, m.Namespace, m.Name)
	if err != nil {
		return err
	}
	if !found {
		if err := r.unrequire(ctx, types.NamespacedName{Namespace: m.Namespace, Name: m.Name}); err != nil {
			return err
		}
		return fmt.Errorf("%w: Service %s/%s does not exist on the control plane: create it (a MultiClusterService exposes the Service of the same name)",
			errServiceMissing, m.Namespace, m.Name)
	}
	svc = svc.DeepCopy()
	svc.SetAPIVersion("v1")
	svc.SetKind("Service")
	entry := workv1alpha2.BindingSnapshot{Namespace: m.Namespace, Name: mcs.RequirerName(m.Name)}
	for _, c := range clusters {
		entry.Clusters = append(entry.Clusters, workv1alpha2.TargetCluster{Name: c})
	}
	name := binding.Name(m.Name, "Service")
	b := &workv1alpha2.ResourceBinding{}
	err = r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: name}, b)
	if apierrors.IsNotFound(err) {
		if len(clusters) == 0 {
			return nil
		}
		b = &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: m.Namespace, Name: name,
			Labels: map[string]string{binding.PermanentIDLabel: uuid.NewString()}}}
		controllerutil.AddFinalizer(b, binding.Finalizer)
		binding.PointAt(b, svc)
		binding.SetRequirement(&b.Spec, entry)
		// As Karmada's MultiClusterService: the Service takes over a
		// same-named one a member already has.
		b.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
		if err := r.Client.Create(ctx, b); err != nil {
			return fmt.Errorf("create the binding of Service %s/%s: %w", m.Namespace, m.Name, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if !b.DeletionTimestamp.IsZero() || (b.Spec.Resource.UID != "" && b.Spec.Resource.UID != svc.GetUID()) {
		return errRetry // a binding of an earlier Service of that name is going
	}
	current := b.DeepCopy()
	if len(clusters) == 0 {
		binding.DropRequirement(&b.Spec, entry.Namespace, entry.Name)
	} else {
		binding.SetRequirement(&b.Spec, entry)
	}
	if binding.Attached(b) && !policymatch.HasClaim(b.Labels) {
		binding.PointAt(b, svc)
	}
	if equality.Semantic.DeepEqual(current, b) {
		return nil
	}
	if len(b.Spec.RequiredBy) == 0 && binding.Attached(b) && !policymatch.HasClaim(b.Labels) {
		return r.deleteBinding(ctx, b)
	}
	if err := r.Client.Update(ctx, b); err != nil {
		return fmt.Errorf("update the binding of Service %s/%s: %w", m.Namespace, m.Name, err)
	}
	return nil
}

func (r *Reconciler) deleteBinding(ctx context.Context, b *workv1alpha2.ResourceBinding) error {
	uid, rv := b.UID, b.ResourceVersion
	if err := r.Client.Delete(ctx, b, client.Preconditions{UID: &uid, ResourceVersion: &rv}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the binding %s/%s: %w", b.Namespace, b.Name, err)
	}
	return nil
}

// unrequire removes the MultiClusterService key's entry from every binding
// that holds it, deleting an attached binding nothing else requires.
func (r *Reconciler) unrequire(ctx context.Context, key types.NamespacedName) error {
	list := &workv1alpha2.ResourceBindingList{}
	if err := r.Client.List(ctx, list, client.InNamespace(key.Namespace),
		client.MatchingFields{binding.RequiredByIndex: key.Namespace + "/" + mcs.RequirerName(key.Name)}); err != nil {
		return err
	}
	var errs []error
	for i := range list.Items {
		b := &list.Items[i]
		if !b.DeletionTimestamp.IsZero() || !binding.DropRequirement(&b.Spec, key.Namespace, mcs.RequirerName(key.Name)) {
			continue
		}
		if len(b.Spec.RequiredBy) == 0 && binding.Attached(b) && !policymatch.HasClaim(b.Labels) {
			errs = append(errs, r.deleteBinding(ctx, b))
			continue
		}
		if err := r.Client.Update(ctx, b); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release the binding %s/%s: %w", b.Namespace, b.Name, err))
		}
	}
	return errors.Join(errs...)
}

// mark keeps a marker Work in each provider's execution namespace, and none
// elsewhere.
func (r *Reconciler) mark(ctx context.Context, m *networkingv1alpha1.MultiClusterService, providers []string) error {
	works, err := works(ctx, r.Client, client.ObjectKeyFromObject(m), mcs.Marker)
	if err != nil {
		return err
	}
	name := mcs.MarkerWorkName(m.Namespace, m.Name)
	var errs []error
	have := map[string]bool{}
	for _, w := range works {
		cluster := strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)
		if w.Name == name && slices.Contains(providers, cluster) {
			have[cluster] = true
			continue
		}
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete marker Work %s/%s: %w", w.Namespace, w.Name, err))
		}
	}
	raw, err := json.Marshal(map[string]any{"apiVersion": networkingv1alpha1.SchemeGroupVersion.String(), "kind": "MultiClusterService",
		"metadata": map[string]any{"namespace": m.Namespace, "name": m.Name}})
	if err != nil {
		return err
	}
	for _, p := range providers {
		if have[p] {
			continue
		}
		suspend := true
		w := &workv1alpha1.Work{
			ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1alpha1.ExecutionNamespace(p), Name: name,
				Labels: map[string]string{mcs.MCSNamespaceLabel: m.Namespace, mcs.MCSNameLabel: m.Name}},
			Spec: workv1alpha1.WorkSpec{SuspendDispatching: &suspend,
				Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
		}
		if err := r.Client.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
			if apierrors.IsNotFound(err) {
				continue // the execution namespace is not there yet: the cluster is still joining
			}
			errs = append(errs, fmt.Errorf("create marker Work %s/%s: %w", w.Namespace, w.Name, err))
		}
	}
	return errors.Join(errs...)
}

// works lists the Works of the MultiClusterService key that play role.
func works(ctx context.Context, c client.Reader, key client.ObjectKey, role mcs.Role) ([]*workv1alpha1.Work, error) {
	list := &workv1alpha1.WorkList{}
	if err := c.List(ctx, list, client.MatchingFields{mcs.WorkIndex: key.Namespace + "/" + key.Name}); err != nil {
		return nil, err
	}
	var out []*workv1alpha1.Work
	for i := range list.Items {
		if mcs.RoleOf(&list.Items[i]) == role {
			out = append(out, &list.Items[i])
		}
	}
	return out, nil
}

// release undoes what the MultiClusterService key made: its entry in its
// Service's binding, its markers, and its load balancer (m, when it still
// exists).
func (r *Reconciler) release(ctx context.Context, key types.NamespacedName, m *networkingv1alpha1.MultiClusterService) error {
	errs := []error{r.unrequire(ctx, key)}
	markers, err := works(ctx, r.Client, key, mcs.Marker)
	errs = append(errs, err)
	for _, w := range markers {
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, err)
		}
	}
	if m != nil && r.LoadBalancer != nil && mcs.Has(m, networkingv1alpha1.ExposureTypeLoadBalancer) {
		errs = append(errs, r.LoadBalancer.EnsureDeleted(ctx, m))
	}
	return errors.Join(errs...)
}

// loadBalance marks the Service's clusters for collection and has the
// provider balance over their ready pods.
func (r *Reconciler) loadBalance(ctx context.Context, m *networkingv1alpha1.MultiClusterService) error {
	if err := r.unrequire(ctx, client.ObjectKeyFromObject(m)); err != nil {
		return err
	}
	if r.LoadBalancer == nil {
		r.Events.Outcome(loadBalancer, errors.New("no load balancer provider is configured: start the controller manager with --mcs-lb-pool (the local provider), or plug a cloud's in"), "", m)
		return nil
	}
	var clusters []string
	b := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: m.Namespace, Name: binding.Name(m.Name, "Service")}, b)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	if err == nil {
		for _, tc := range binding.Targets(&b.Spec) {
			clusters = append(clusters, tc.Name)
		}
	}
	if err := r.mark(ctx, m, clusters); err != nil {
		return err
	}
	backends, err := r.backends(ctx, m, clusters)
	if err != nil {
		return err
	}
	st, err := r.LoadBalancer.Ensure(ctx, m, backends)
	if err != nil && !apierrors.IsConflict(err) && !apierrors.IsAlreadyExists(err) {
		r.Events.Outcome(loadBalancer, fmt.Errorf("%s load balancer: %w", r.LoadBalancer.Name(), err), "", m)
	}
	if err != nil {
		return err
	}
	msg := fmt.Sprintf("Load balancer %s is set up by the %s provider.", addresses(st), r.LoadBalancer.Name())
	if r.LoadBalancer.Name() == loadbalancer.LocalName {
		msg += fmt.Sprintf(" Its backends: kubectl get endpointslices -n %s -l %s=%s", m.Namespace, mcs.MCSNameLabel, m.Name)
	}
	outcome, err := r.checkService(m, addresses(st), len(clusters) > 0)
	if err != nil {
		return err
	}
	err = mcs.UpdateStatus(ctx, r.Client, client.ObjectKeyFromObject(m), func(s *corev1.ServiceStatus) { s.LoadBalancer = *st })
	if err != nil {
		if apierrors.IsConflict(err) {
			return err
		}
		outcome = fmt.Errorf("record the load balancer's address %s: %w", addresses(st), err)
	}
	r.Events.Outcome(loadBalancer, outcome, msg, m)
	return err
}

// checkService says what keeps the load balancer of m (at address) from
// balancing over the Service it names: a Service that does not exist, one
// propagated to no cluster, or spec.ports that are not the Service's. The
// problem is reported as a Warning; err (reading the template) is retried.
func (r *Reconciler) checkService(m *networkingv1alpha1.MultiClusterService, address string, propagated bool) (problem, err error) {
	svc, found, err := r.Templates.Template(mcs.ServiceGVK, m.Namespace, m.Name)
	if err != nil {
		return nil, err
	}
	if !found {
		return fmt.Errorf("load balancer %s has no backends: Service %s/%s does not exist on the control plane; create it and propagate it "+
			"(a MultiClusterService of type LoadBalancer balances over the pods of the Service of the same name)", address, m.Namespace, m.Name), nil
	}
	if !propagated {
		return fmt.Errorf("load balancer %s has no backends: Service %s/%s is not propagated to any cluster; give it a PropagationPolicy", address, m.Namespace, m.Name), nil
	}
	ports, _, _ := unstructured.NestedSlice(svc.Object, "spec", "ports")
	var have, missing []string
	for _, p := range ports {
		if n, ok, _ := unstructured.NestedInt64(p.(map[string]any), "port"); ok {
			have = append(have, fmt.Sprint(n))
		}
	}
	for _, p := range m.Spec.Ports {
		if !slices.Contains(have, fmt.Sprint(p.Port)) {
			missing = append(missing, fmt.Sprint(p.Port))
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("spec.ports: %s not a port of Service %s/%s (its ports: %s); the load balancer serves the Service's ports, on its pods' target ports",
			strings.Join(missing, ", "), m.Namespace, m.Name, strings.Join(have, ", ")), nil
	}
	return nil, nil
}

func addresses(st *corev1.LoadBalancerStatus) string {
	var out []string
	for _, in := range st.Ingress {
		out = append(out, in.IP+in.Hostname)
	}
	return strings.Join(out, ",")
}

// backends are the ready addresses of the slices collected for m from
// clusters, per cluster, sorted.
func (r *Reconciler) backends(ctx context.Context, m *networkingv1alpha1.MultiClusterService, clusters []string) ([]loadbalancer.Backends, error) {
	works, err := works(ctx, r.Client, client.ObjectKeyFromObject(m), mcs.Collected)
	if err != nil {
		return nil, err
	}
	by := map[string]*loadbalancer.Backends{}
	for _, w := range works {
		cluster := strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)
		if !slices.Contains(clusters, cluster) || len(w.Spec.Workload.Manifests) != 1 {
			continue
		}
		s := &discoveryv1.EndpointSlice{}
		if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, s); err != nil {
			continue
		}
		b := by[cluster]
		if b == nil {
			b = &loadbalancer.Backends{Cluster: cluster, AddressType: s.AddressType}
			by[cluster] = b
		}
		if len(b.Ports) == 0 {
			b.Ports = s.Ports
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			b.Addresses = append(b.Addresses, e.Addresses...)
		}
	}
	var out []loadbalancer.Backends
	for _, c := range clusters {
		if b := by[c]; b != nil {
			slices.Sort(b.Addresses)
			b.Addresses = slices.Compact(b.Addresses)
			out = append(out, *b)
		}
	}
	return out, nil
}
