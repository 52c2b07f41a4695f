// Package serviceimport implements Karmada's serviceImport controller: for
// every ServiceImport (multicluster.x-k8s.io) of type ClusterSetIP on the
// control plane it keeps the derived Service "derived-<name>": type
// ClusterIP, the import's ports, no selector (its endpoints are the
// EndpointSlices imported from the exporting clusters). A Headless import
// has none (one that turns Headless loses it; Karmada leaves it behind).
// The import's spec.ips are written to the derived Service's
// status.loadBalancer.ingress, one IP each, as Karmada does. Kubernetes
// 1.29 and later refuse that field on a ClusterIP Service (the
// AllowServiceLBStatusOnNonLB gate is gone), so with spec.ips set the
// write fails: Karmada then reports SyncDerivedServiceFailed on every
// retry; Flotilla reports it once per change of the import, with what to
// do, and does not retry what cannot succeed. A policy that
// selects the ServiceImport propagates it with its dependencies, the
// derived Service and the imported slices, to the consumer clusters.
package serviceimport

import (
	"context"
	"encoding/json"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// ControllerName is the controller's name in --controllers: Karmada's.
const ControllerName = "serviceImport"

// Reconciler keeps the derived Service of each ServiceImport.
type Reconciler struct {
	Client client.Client
	// Events, if set, gets Karmada's SyncDerivedServiceSucceed and
	// SyncDerivedServiceFailed on the ServiceImport when the outcome changes.
	Events *eventrecord.Recorder
}

// syncDerived is the operation reported on the ServiceImport.
var syncDerived = eventrecord.Operation{Succeed: "SyncDerivedServiceSucceed", Failed: "SyncDerivedServiceFailed"}

// SetupWithManager registers the controller: ServiceImports, and the
// derived Services (a deleted or edited one is made again).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	imp := &unstructured.Unstructured{}
	imp.SetGroupVersionKind(mcs.ServiceImportGVK)
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(imp).
		Watches(&corev1.Service{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			name := o.GetLabels()[mcs.DerivedServiceLabel]
			if name == "" {
				return nil
			}
			return []ctrl.Request{{NamespacedName: types.NamespacedName{Namespace: o.GetNamespace(), Name: name}}}
		})).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// Reconcile makes the derived Service match the ServiceImport, or deletes
// it once the ServiceImport is gone.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	imp := &unstructured.Unstructured{}
	imp.SetGroupVersionKind(mcs.ServiceImportGVK)
	err := r.Client.Get(ctx, req.NamespacedName, imp)
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, r.deleteDerived(ctx, req)
	}
	if err != nil || !imp.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, err
	}
	if t, _, _ := unstructured.NestedString(imp.Object, "spec", "type"); t != "ClusterSetIP" {
		// A Headless import has no virtual IP of its own (Karmada makes no
		// derived Service for it either).
		return ctrl.Result{}, r.deleteDerived(ctx, req)
	}
	ports, err := importPorts(imp)
	if err != nil {
		r.Events.Outcome(syncDerived, err, "", imp)
		return ctrl.Result{}, nil // fixed only by a new ServiceImport
	}
	err = r.ensureDerived(ctx, imp, ports)
	if err == nil {
		err = r.syncIngress(ctx, imp)
		if apierrors.IsInvalid(err) {
			r.Events.Outcome(syncDerived, fmt.Errorf("%w: the API server keeps status.loadBalancer.ingress for LoadBalancer Services, so spec.ips stays on the ServiceImport only; remove spec.ips to silence this", err), "", imp)
			return ctrl.Result{}, nil // refused by validation: only a new ServiceImport changes that
		}
	}
	r.Events.Outcome(syncDerived, err, fmt.Sprintf("Sync derived service for serviceImport(%s) succeed.", imp.GetName()), imp)
	return ctrl.Result{}, err
}

// importPort is one entry of a ServiceImport's spec.ports.
type importPort struct {
	Name        string          `json:"name,omitempty"`
	Protocol    corev1.Protocol `json:"protocol,omitempty"`
	AppProtocol *string         `json:"appProtocol,omitempty"`
	Port        int32           `json:"port"`
}

// importPorts reads spec.ports as the derived Service's ports (no
// targetPort: the Service has no pods of its own).
func importPorts(imp *unstructured.Unstructured) ([]corev1.ServicePort, error) {
	raw, _, _ := unstructured.NestedFieldNoCopy(imp.Object, "spec", "ports")
	data, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	var in []importPort
	if err := json.Unmarshal(data, &in); err != nil {
		return nil, fmt.Errorf("read spec.ports: %w", err)
	}
	out := make([]corev1.ServicePort, 0, len(in))
	for _, p := range in {
		out = append(out, corev1.ServicePort{Name: p.Name, Protocol: p.Protocol, AppProtocol: p.AppProtocol, Port: p.Port})
	}
	return out, nil
}

// ensureDerived creates or updates derived-<name> with ports.
func (r *Reconciler) ensureDerived(ctx context.Context, imp *unstructured.Unstructured, ports []corev1.ServicePort) error {
	svc := &corev1.Service{}
	key := client.ObjectKey{Namespace: imp.GetNamespace(), Name: mcs.DerivedServiceName(imp.GetName())}
	err := r.Client.Get(ctx, key, svc)
	if apierrors.IsNotFound(err) {
		svc = &corev1.Service{
			ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name, Labels: map[string]string{mcs.DerivedServiceLabel: imp.GetName()}},
			Spec:       corev1.ServiceSpec{Type: corev1.ServiceTypeClusterIP, Ports: ports},
		}
		if err := r.Client.Create(ctx, svc); err != nil {
			return fmt.Errorf("create the derived Service %s: %w", key, err)
		}
		return nil
	}
	if err != nil {
		return err
	}
	if svc.Labels[mcs.DerivedServiceLabel] != imp.GetName() {
		return fmt.Errorf("a Service %s exists and was not made for this ServiceImport: rename or delete it", key)
	}
	desired := svc.DeepCopy()
	desired.Spec.Type = corev1.ServiceTypeClusterIP
	desired.Spec.Selector = nil
	// The API server fills targetPort in; keep what it chose.
	byPort := map[int32]corev1.ServicePort{}
	for _, p := range svc.Spec.Ports {
		byPort[p.Port] = p
	}
	desired.Spec.Ports = nil
	for _, p := range ports {
		if old, ok := byPort[p.Port]; ok && old.Name == p.Name && (p.Protocol == "" || old.Protocol == p.Protocol) {
			p = old
		}
		desired.Spec.Ports = append(desired.Spec.Ports, p)
	}
	if equality.Semantic.DeepEqual(svc.Spec, desired.Spec) {
		return nil
	}
	if err := r.Client.Update(ctx, desired); err != nil {
		return fmt.Errorf("update the derived Service %s: %w", key, err)
	}
	return nil
}

// syncIngress writes the ServiceImport's spec.ips into the derived
// Service's status.loadBalancer.ingress (an empty list when it has none).
func (r *Reconciler) syncIngress(ctx context.Context, imp *unstructured.Unstructured) error {
	ips, _, err := unstructured.NestedStringSlice(imp.Object, "spec", "ips")
	if err != nil {
		return fmt.Errorf("read spec.ips: %w", err)
	}
	ingress := make([]corev1.LoadBalancerIngress, 0, len(ips))
	for _, ip := range ips {
		ingress = append(ingress, corev1.LoadBalancerIngress{IP: ip})
	}
	svc := &corev1.Service{}
	key := client.ObjectKey{Namespace: imp.GetNamespace(), Name: mcs.DerivedServiceName(imp.GetName())}
	if err := r.Client.Get(ctx, key, svc); err != nil {
		return err
	}
	if equality.Semantic.DeepEqual(svc.Status.LoadBalancer.Ingress, ingress) ||
		(len(svc.Status.LoadBalancer.Ingress) == 0 && len(ingress) == 0) {
		return nil
	}
	svc.Status.LoadBalancer.Ingress = ingress
	if err := r.Client.Status().Update(ctx, svc); err != nil {
		return fmt.Errorf("write spec.ips to the derived Service %s's status: %w", key, err)
	}
	return nil
}

// deleteDerived deletes the derived Service made for req, if any.
func (r *Reconciler) deleteDerived(ctx context.Context, req ctrl.Request) error {
	svc := &corev1.Service{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: req.Namespace, Name: mcs.DerivedServiceName(req.Name)}, svc)
	if err != nil || svc.Labels[mcs.DerivedServiceLabel] != req.Name {
		return client.IgnoreNotFound(err)
	}
	return client.IgnoreNotFound(r.Client.Delete(ctx, svc))
}
