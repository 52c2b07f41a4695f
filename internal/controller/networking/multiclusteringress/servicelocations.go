// Package multiclusteringress acts on MultiClusterIngresses
// (networking.karmada.io/v1alpha1), as Karmada's multicluster-cloud-provider
// does. This file is its mciservicelocations part: for every
// MultiClusterIngress, status.serviceLocations lists, per backend Service
// (spec.defaultBackend and every rule's paths, by name, sorted), the
// clusters the Service's ResourceBinding places it in or that require it
// (spec.clusters and spec.requiredBy, sorted). A backend Service with no
// binding is left out, as in Karmada, and a Warning event
// (BackendServiceNotFound) on the MultiClusterIngress says whether the
// Service does not exist or is not propagated. status.trafficBlockClusters
// lists the located clusters whose status.remedyActions hold TrafficControl
// (a Remedy took them out of traffic).
//
// With a provider (--multicluster-provider), loadbalancer.go is Karmada's
// MultiClusterIngress controller: a MultiClusterIngress of the provider's
// IngressClass (--provider-ingress-class) gets Finalizer and a load
// balancer from loadbalancer.IngressProvider, written to
// status.loadBalancer; and serviceexports.go is its
// serviceexport-propagation controller (Exports), which exports the backend
// Services so that their endpoints reach the control plane.
package multiclusteringress

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/util/sets"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controller/networking/loadbalancer"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

func mcis() client.ObjectList { return &networkingv1alpha1.MultiClusterIngressList{} }

// ControllerName is the controller's name in --controllers.
const ControllerName = "multiClusterIngress"

// EventSource is the component name of its events.
const EventSource = "multiclusteringress-controller"

// Reconciler keeps the status of one MultiClusterIngress: serviceLocations
// and trafficBlockClusters always; with a provider, for a MultiClusterIngress
// of its IngressClass, also the load balancer (status.loadBalancer) and the
// Finalizer that releases it.
type Reconciler struct {
	// Client reads MultiClusterIngresses, Services, ResourceBindings,
	// Clusters and IngressClasses (cached) and writes MultiClusterIngresses.
	Client client.Client
	// Events gets BackendServiceNotFound and MCILoadBalance.
	Events *eventrecord.Recorder
	// LoadBalancer is the provider (--multicluster-provider); nil serves
	// no traffic.
	LoadBalancer loadbalancer.IngressProvider
	// IngressClass is the spec.controller of the IngressClasses the
	// provider serves (--provider-ingress-class).
	IngressClass string
}

var _ reconcile.Reconciler = &Reconciler{}

// SetupWithManager reconciles a MultiClusterIngress on its changes, and
// those of its namespace when a Service or a Service's ResourceBinding
// changes there.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&networkingv1alpha1.MultiClusterIngress{}).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			rb, ok := o.(*workv1alpha2.ResourceBinding)
			if !ok || rb.Spec.Resource.APIVersion != "v1" || rb.Spec.Resource.Kind != "Service" {
				return nil
			}
			return r.referencing(ctx, rb.Namespace, rb.Spec.Resource.Name)
		})).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			return r.referencing(ctx, o.GetNamespace(), o.GetName())
		})).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(queue.All(r.Client, mcis)),
			builder.WithPredicates(predicate.Funcs{UpdateFunc: func(e event.UpdateEvent) bool {
				o, ok1 := e.ObjectOld.(*clusterv1alpha1.Cluster)
				n, ok2 := e.ObjectNew.(*clusterv1alpha1.Cluster)
				return !ok1 || !ok2 || !slices.Equal(o.Status.RemedyActions, n.Status.RemedyActions)
			}})).
		Watches(&discoveryv1.EndpointSlice{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []reconcile.Request {
			svc, ok := strings.CutPrefix(o.GetLabels()[mcs.ServiceNameLabel], mcs.DerivedServiceName(""))
			if !ok || r.LoadBalancer == nil || o.GetLabels()[mcs.SliceManagedByLabel] != mcs.ImportedSliceManager {
				return nil
			}
			return r.referencing(ctx, o.GetNamespace(), svc)
		})).
		Watches(&networkingv1.IngressClass{}, handler.EnqueueRequestsFromMapFunc(queue.All(r.Client, mcis))).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// referencing lists the MultiClusterIngresses of namespace that name
// Service service as a backend.
func (r *Reconciler) referencing(ctx context.Context, namespace, service string) []reconcile.Request {
	list := &networkingv1alpha1.MultiClusterIngressList{}
	if err := r.Client.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		if slices.Contains(BackendServices(&list.Items[i]), service) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(&list.Items[i])})
		}
	}
	return out
}

// Reconcile writes the MultiClusterIngress's status.serviceLocations and
// trafficBlockClusters (a merge patch of those fields). Errors are retried.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	mci := &networkingv1alpha1.MultiClusterIngress{}
	if err := r.Client.Get(ctx, req.NamespacedName, mci); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	verdict := Others
	if r.LoadBalancer != nil && mci.DeletionTimestamp.IsZero() {
		var why string
		var err error
		if verdict, why, err = ClassOf(ctx, r.Client, mci, r.IngressClass); err != nil {
			return ctrl.Result{}, err
		}
		if verdict == Unserved || verdict == Unknown { // an IngressClass change brings it back
			r.Events.Outcome(loadBalance, fmt.Errorf("%s", why), "", mci)
		}
	}
	served := verdict == Ours
	held := controllerutil.ContainsFinalizer(mci, Finalizer)
	if held && !served && verdict != Unknown { // deleted, or no longer of the provider's class
		if err := r.release(ctx, mci); err != nil {
			return ctrl.Result{}, err
		}
		controllerutil.RemoveFinalizer(mci, Finalizer)
		if err := r.Client.Update(ctx, mci); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(err)
		}
		if mci.DeletionTimestamp.IsZero() {
			if verdict == Others {
				r.Events.Outcome(loadBalance, nil, "Load balancer released: the MultiClusterIngress's IngressClass is no longer this provider's.", mci)
			}
			patch := client.MergeFrom(mci.DeepCopy())
			mci.Status.LoadBalancer = networkingv1.IngressLoadBalancerStatus{}
			if err := r.Client.Status().Patch(ctx, mci, patch); err != nil {
				return ctrl.Result{}, err
			}
		}
	}
	if !mci.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	if served && controllerutil.AddFinalizer(mci, Finalizer) {
		if err := r.Client.Update(ctx, mci); err != nil {
			return ctrl.Result{}, err
		}
	}
	locations, problems, err := r.ServiceLocations(ctx, mci)
	if err != nil {
		return ctrl.Result{}, err
	}
	for _, svc := range BackendServices(mci) {
		p := problems[svc]
		r.Events.Outcome(eventrecord.Operation{Failed: events.BackendServiceNotFound, Instance: svc}, errorOf(p.missing), "", mci)
		r.Events.Outcome(eventrecord.Operation{Failed: events.BackendServicePortNotFound, Instance: svc}, errorOf(p.port), "", mci)
	}
	blocked, err := r.blocked(ctx, locations)
	if err != nil {
		return ctrl.Result{}, err
	}
	before := mci.DeepCopy()
	mci.Status.ServiceLocations = locations
	mci.Status.TrafficBlockClusters = blocked
	var serveErr error
	if served {
		serveErr = r.serve(ctx, mci)
	}
	if equality.Semantic.DeepEqual(before.Status, mci.Status) {
		return ctrl.Result{}, serveErr
	}
	err = r.Client.Status().Patch(ctx, mci, client.MergeFrom(before))
	return reconciler.Result(ctrl.Result{}, errors.Join(serveErr, err))
}

// backendProblems are what is wrong with one backend Service: it has no
// location (missing), or a port a backend names is not one of its ports.
type backendProblems struct{ missing, port string }

func errorOf(msg string) error {
	if msg == "" {
		return nil
	}
	return fmt.Errorf("%s", msg)
}

// ServiceLocations computes status.serviceLocations of mci, and says, per
// backend Service, why it has no location or which port it lacks.
func (r *Reconciler) ServiceLocations(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) ([]networkingv1alpha1.ServiceLocation, map[string]backendProblems, error) {
	var out []networkingv1alpha1.ServiceLocation
	problems := map[string]backendProblems{}
	for _, svc := range BackendServices(mci) {
		var p backendProblems
		service := &corev1.Service{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: mci.Namespace, Name: svc}, service)
		switch {
		case apierrors.IsNotFound(err):
			service = nil
		case err != nil:
			return nil, nil, err
		default:
			p.port = missingPorts(mci, service)
		}
		rb := &workv1alpha2.ResourceBinding{}
		err = r.Client.Get(ctx, client.ObjectKey{Namespace: mci.Namespace, Name: binding.Name(svc, "Service")}, rb)
		switch {
		case apierrors.IsNotFound(err) && service == nil:
			p.missing = fmt.Sprintf("backend Service %s/%s does not exist: create it on the control plane and propagate it", mci.Namespace, svc)
		case apierrors.IsNotFound(err):
			p.missing = fmt.Sprintf("backend Service %s/%s is not propagated (no ResourceBinding %s): a PropagationPolicy must select it", mci.Namespace, svc, binding.Name(svc, "Service"))
		case err != nil:
			return nil, nil, err
		default:
			out = append(out, networkingv1alpha1.ServiceLocation{Name: svc, Clusters: Clusters(rb)})
		}
		problems[svc] = p
	}
	return out, problems, nil
}

// missingPorts says which ports the backends of mci name on svc that svc
// does not have, or "".
func missingPorts(mci *networkingv1alpha1.MultiClusterIngress, svc *corev1.Service) string {
	var missing []string
	forEachBackend(mci, func(b *networkingv1.IngressBackend) {
		if b.Service == nil || b.Service.Name != svc.Name {
			return
		}
		p := b.Service.Port
		if !slices.ContainsFunc(svc.Spec.Ports, func(sp corev1.ServicePort) bool {
			return (p.Name != "" && sp.Name == p.Name) || (p.Name == "" && sp.Port == p.Number)
		}) {
			if p.Name != "" {
				missing = append(missing, fmt.Sprintf("named %q", p.Name))
			} else {
				missing = append(missing, fmt.Sprint(p.Number))
			}
		}
	})
	if len(missing) == 0 {
		return ""
	}
	var have []string
	for _, sp := range svc.Spec.Ports {
		have = append(have, strings.TrimPrefix(fmt.Sprintf("%s %d", sp.Name, sp.Port), " "))
	}
	return fmt.Sprintf("backend Service %s/%s has no port %s (its ports: %s)", svc.Namespace, svc.Name,
		strings.Join(slices.Compact(missing), ", "), strings.Join(have, ", "))
}

// blocked are the clusters of locations whose remedyActions hold
// TrafficControl, sorted.
func (r *Reconciler) blocked(ctx context.Context, locations []networkingv1alpha1.ServiceLocation) ([]string, error) {
	located := sets.New[string]()
	for _, l := range locations {
		located.Insert(l.Clusters...)
	}
	if located.Len() == 0 {
		return nil, nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return nil, err
	}
	var out []string
	for _, c := range clusters.Items {
		if located.Has(c.Name) && slices.Contains(c.Status.RemedyActions, string(remedyv1alpha1.TrafficControl)) {
			out = append(out, c.Name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// BackendServices are the names of the Services mci routes to: its default
// backend's and every rule path's, sorted, each once.
func BackendServices(mci *networkingv1alpha1.MultiClusterIngress) []string {
	names := sets.New[string]()
	forEachBackend(mci, func(b *networkingv1.IngressBackend) {
		if b.Service != nil && b.Service.Name != "" {
			names.Insert(b.Service.Name)
		}
	})
	return sets.List(names)
}

// forEachBackend calls f with spec.defaultBackend and every rule path's
// backend of mci.
func forEachBackend(mci *networkingv1alpha1.MultiClusterIngress, f func(*networkingv1.IngressBackend)) {
	if mci.Spec.DefaultBackend != nil {
		f(mci.Spec.DefaultBackend)
	}
	for _, rule := range mci.Spec.Rules {
		if rule.HTTP == nil {
			continue
		}
		for i := range rule.HTTP.Paths {
			f(&rule.HTTP.Paths[i].Backend)
		}
	}
}

// Clusters are the clusters a binding places its Service in or that
// require it: spec.clusters and spec.requiredBy, sorted, each once.
func Clusters(rb *workv1alpha2.ResourceBinding) []string {
	out := sets.New[string]()
	for _, c := range rb.Spec.Clusters {
		out.Insert(c.Name)
	}
	for _, req := range rb.Spec.RequiredBy {
		for _, c := range req.Clusters {
			out.Insert(c.Name)
		}
	}
	return sets.List(out)
}
