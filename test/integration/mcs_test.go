package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/google/uuid"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// The mcs-api path (Karmada's serviceExport, endpointSlice and
// serviceImport controllers). The bare members run no EndpointSlice
// controller, so the cases write the members' slices by hand, as that
// controller would for a Service with pods; a member's ServiceExport is
// written there by hand too, as a propagated one would be.

// serviceExportCases check the collector (serviceExport): in a member that
// exports a Service, each EndpointSlice of it becomes a Work in the
// member's execution namespace, never applied back, labelled for the
// export; the Work follows the slice and goes with it or with the export.
var serviceExportCases = []integrationCase{
	{
		name: "the slices of an exported Service are collected as suspended Works labelled for the export, follow the member, and go with the export",
		run: func(e *env) {
			m1 := e.members["member1"]
			// Neither a slice of a Service that is not exported nor one
			// Flotilla wrote itself (an imported one) is collected.
			e.create(m1, e.memberSlice("other-1", "other", "10.1.9.1"))
			imported := e.memberSlice("web-imported", "web", "10.1.9.2")
			imported.Labels[mcs.SliceManagedByLabel] = mcs.ImportedSliceManager
			e.create(m1, imported)
			e.create(m1, e.serviceExport("web"))
			slice := e.memberSlice("web-1", "web", "10.1.0.1", "10.1.0.2")
			e.create(m1, slice)

			w := e.waitCollected("member1", "web-1", "10.1.0.1", "10.1.0.2")
			want := map[string]string{mcs.EndpointSliceNamespaceLabel: e.ns, mcs.EndpointSliceNameLabel: "web", mcs.EndpointSliceManagedByLabel: mcs.ManagedByServiceExport}
			if !contains(w.Labels, want) || w.Labels[mcs.WorkIDLabel] == "" || w.Labels[mcs.MCSNameLabel] != "" {
				e.Errorf("the collected Work's labels %v, want %v and a permanent id", w.Labels, want)
			}
			if !ptr.Deref(w.Spec.SuspendDispatching, false) {
				e.Errorf("the collected Work is not suspended: it would be applied back to member1")
			}
			if got, _ := sliceIn(w); got == nil || got.Namespace != e.ns || got.Labels[mcs.ServiceNameLabel] != "web" || got.AddressType != discoveryv1.AddressTypeIPv4 ||
				len(got.Ports) != 1 || ptr.Deref(got.Ports[0].Port, 0) != 80 {
				e.Errorf("the collected manifest is not member1's slice: %+v", got)
			}

			// The Work follows the slice; a second slice is a second Work,
			// withdrawn when the slice goes.
			update(e, m1, slice, func(s *discoveryv1.EndpointSlice) { s.Endpoints = append(s.Endpoints, endpoint("10.1.0.3")) })
			e.waitCollected("member1", "web-1", "10.1.0.1", "10.1.0.2", "10.1.0.3")
			second := e.memberSlice("web-2", "web", "10.1.1.1")
			e.create(m1, second)
			e.waitCollected("member1", "web-2", "10.1.1.1")
			e.delete(m1, second)
			e.waitGone(e.controlPlane, e.collectedWork("member1", "web-2"), "web-2's Work withdrawn")
			for _, s := range []string{"other-1", "web-imported"} {
				if !e.absent(e.controlPlane, e.collectedWork("member1", s)) {
					e.Errorf("%s was collected", s)
				}
			}

			e.delete(m1, e.serviceExport("web"))
			e.waitGone(e.controlPlane, e.collectedWork("member1", "web-1"), "web-1's Work withdrawn with the export")
		},
	},
	{
		name: "a collected Work deleted by hand is collected again, under a new permanent id",
		run: func(e *env) {
			m2 := e.members["member2"]
			e.create(m2, e.serviceExport("api"))
			e.create(m2, e.memberSlice("api-1", "api", "10.2.0.1"))
			w := e.waitCollected("member2", "api-1", "10.2.0.1")
			e.delete(e.controlPlane, w)
			again := waitFor(e, e.controlPlane, e.collectedWork("member2", "api-1"), "api-1 collected again", func(n *workv1alpha1.Work) (bool, string) {
				return n.UID != w.UID && n.DeletionTimestamp.IsZero(), describe(n.UID, n.DeletionTimestamp)
			})
			if id := again.Labels[mcs.WorkIDLabel]; id == "" || id == w.Labels[mcs.WorkIDLabel] {
				e.Errorf("the new Work's permanent id %q, want a new one (the old was %q)", id, w.Labels[mcs.WorkIDLabel])
			}
			e.delete(m2, e.serviceExport("api"))
			e.waitGone(e.controlPlane, e.collectedWork("member2", "api-1"), "api-1's Work withdrawn with the export")
		},
	},
	{
		name: "a slice exported and provided to a MultiClusterService is one Work with both owners, and keeps the export's when the MultiClusterService goes",
		run: func(e *env) {
			m1 := e.members["member1"]
			e.create(m1, e.serviceExport("web"))
			e.create(m1, e.memberSlice("web-1", "web", "10.8.0.1"))
			exported := e.waitCollectedBy("member1", "web-1", mcs.ManagedByServiceExport)
			m := e.crossCluster("web", []string{"member1"}, []string{"member2"})
			e.create(e.controlPlane, m)
			both := e.waitCollectedBy("member1", "web-1", mcs.JoinManagedBy([]string{mcs.ManagedByServiceExport, mcs.ManagedByMultiClusterService}))
			want := map[string]string{mcs.EndpointSliceNamespaceLabel: e.ns, mcs.EndpointSliceNameLabel: "web", mcs.MCSNamespaceLabel: e.ns, mcs.MCSNameLabel: "web"}
			if !contains(both.Labels, want) || both.UID != exported.UID {
				e.Errorf("the Work of two owners: labels %v (want %v), uid %s (want the export's Work, %s)", both.Labels, want, both.UID, exported.UID)
			}
			e.delete(e.controlPlane, m)
			again := e.waitCollectedBy("member1", "web-1", mcs.ManagedByServiceExport)
			if again.Labels[mcs.MCSNameLabel] != "" || again.Labels[mcs.MCSNamespaceLabel] != "" || again.UID != exported.UID {
				e.Errorf("after the MultiClusterService went: labels %v, uid %s (want the export's Work, %s)", again.Labels, again.UID, exported.UID)
			}
			e.delete(m1, e.serviceExport("web"))
			e.waitGone(e.controlPlane, again, "web-1's Work withdrawn with the export")
		},
	},
}

// endpointSliceCases check the endpointSlice controller: a collected Work
// becomes the control-plane EndpointSlice imported-<cluster>-<slice>,
// labelled for the derived Service derived-<service> and for the Work
// (its permanent id), held by a finalizer on the Work; the slice follows
// the Work and goes with it.
var endpointSliceCases = []integrationCase{
	{
		name: "an exported slice becomes imported-<cluster>-<slice> for derived-<service>, follows the member and goes with the export",
		run: func(e *env) {
			m1 := e.members["member1"]
			e.create(m1, e.serviceExport("web"))
			slice := e.memberSlice("web-1", "web", "10.3.0.1")
			e.create(m1, slice)
			w := e.waitCollected("member1", "web-1", "10.3.0.1")
			imported := e.waitImported("member1", "web-1", "10.3.0.1")
			wantLabels := map[string]string{mcs.ServiceNameLabel: "derived-web", mcs.SliceManagedByLabel: mcs.ImportedSliceManager, mcs.WorkIDLabel: w.Labels[mcs.WorkIDLabel]}
			wantAnnotations := map[string]string{binding.WorkNamespaceAnnotation: w.Namespace, binding.WorkNameAnnotation: w.Name}
			if !contains(imported.Labels, wantLabels) || !contains(imported.Annotations, wantAnnotations) {
				e.Errorf("the imported slice: labels %v annotations %v, want %v and %v", imported.Labels, imported.Annotations, wantLabels, wantAnnotations)
			}
			if len(imported.Ports) != 1 || ptr.Deref(imported.Ports[0].Port, 0) != 80 || imported.AddressType != discoveryv1.AddressTypeIPv4 {
				e.Errorf("the imported slice's ports %+v and address type %s, want member1's", imported.Ports, imported.AddressType)
			}
			waitFor(e, e.controlPlane, w, "the collected Work held by the endpointSlice controller", func(w *workv1alpha1.Work) (bool, string) {
				return slices.Contains(w.Finalizers, mcs.CollectedFinalizer), describe(w.Finalizers)
			})

			update(e, m1, slice, func(s *discoveryv1.EndpointSlice) { s.Endpoints = append(s.Endpoints, endpoint("10.3.0.2")) })
			e.waitImported("member1", "web-1", "10.3.0.1", "10.3.0.2")

			e.delete(m1, e.serviceExport("web"))
			e.waitGone(e.controlPlane, imported, "the imported slice gone with the export")
			e.waitGone(e.controlPlane, w, "the collected Work released and gone")
		},
	},
	{
		name: "a Work that changes address type makes the slice again; one that loses the export label withdraws it and is released",
		run: func(e *env) {
			// Written by hand, without the managed-by label: the collector
			// leaves it to this controller alone.
			src := e.memberSlice("hand-1", "hand", "10.4.0.1")
			w := &workv1alpha1.Work{
				ObjectMeta: metav1.ObjectMeta{Namespace: clusterv1alpha1.ExecutionNamespace("member2"), Name: "hand-" + e.ns,
					Labels: map[string]string{mcs.EndpointSliceNamespaceLabel: e.ns, mcs.EndpointSliceNameLabel: "hand", mcs.WorkIDLabel: uuid.NewString()}},
				Spec: workv1alpha1.WorkSpec{SuspendDispatching: ptr.To(true), Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{e.sliceManifest(src)}}},
			}
			e.create(e.controlPlane, w)
			e.Cleanup(func() {
				if err := e.controlPlane.Delete(context.Background(), w); client.IgnoreNotFound(err) != nil {
					e.Errorf("delete Work %s/%s: %v", w.Namespace, w.Name, err)
				}
			})
			first := e.waitImported("member2", "hand-1", "10.4.0.1")

			// addressType is immutable: the slice is made again.
			v6 := src.DeepCopy()
			v6.AddressType, v6.Endpoints = discoveryv1.AddressTypeIPv6, []discoveryv1.Endpoint{endpoint("fd00::1")}
			update(e, e.controlPlane, w, func(w *workv1alpha1.Work) { w.Spec.Workload.Manifests = []workv1alpha1.Manifest{e.sliceManifest(v6)} })
			again := waitFor(e, e.controlPlane, first, "the imported slice made again as IPv6", func(s *discoveryv1.EndpointSlice) (bool, string) {
				return s.UID != first.UID && s.AddressType == discoveryv1.AddressTypeIPv6 && slices.Equal(addressesOf(s), []string{"fd00::1"}), describe(s.UID, s.AddressType, addressesOf(s))
			})

			update(e, e.controlPlane, w, func(w *workv1alpha1.Work) { delete(w.Labels, mcs.EndpointSliceNameLabel) })
			e.waitGone(e.controlPlane, again, "the imported slice withdrawn")
			waitFor(e, e.controlPlane, w, "the Work released", func(w *workv1alpha1.Work) (bool, string) {
				return !slices.Contains(w.Finalizers, mcs.CollectedFinalizer), describe(w.Finalizers)
			})
		},
	},
}

// serviceImportCases check the serviceImport controller: a ClusterSetIP
// ServiceImport has the Service derived-<name> on the control plane (type
// ClusterIP, the import's ports, no selector, labelled with the import's
// name), kept as the import says and deleted with it; and, with a policy
// that selects the import, the derived Service and the imported slices
// reach the importing cluster.
var serviceImportCases = []integrationCase{
	{
		name: "a ClusterSetIP import has derived-<name>, kept as it says, none while Headless, and none once the import is gone",
		run: func(e *env) {
			imp := e.serviceImport("web", "ClusterSetIP", 80)
			e.create(e.controlPlane, imp)
			derived := e.waitDerived("web", 80)
			if derived.Spec.Type != corev1.ServiceTypeClusterIP || derived.Labels[mcs.DerivedServiceLabel] != "web" || derived.Spec.Ports[0].Protocol != corev1.ProtocolTCP {
				e.Errorf("derived-web: type %s labels %v ports %+v; want ClusterIP, labelled for web, TCP", derived.Spec.Type, derived.Labels, derived.Spec.Ports)
			}
			e.waitEvent("web", "SyncDerivedServiceSucceed")

			// An edit is undone; a deleted one is made again.
			update(e, e.controlPlane, derived, func(s *corev1.Service) { s.Spec.Selector = map[string]string{"app": "web"} })
			waitFor(e, e.controlPlane, derived, "the selector removed again", func(s *corev1.Service) (bool, string) {
				return s.Spec.Selector == nil, describe(s.Spec.Selector)
			})
			e.delete(e.controlPlane, derived)
			waitFor(e, e.controlPlane, derived, "derived-web made again", func(s *corev1.Service) (bool, string) { return s.UID != derived.UID, string(s.UID) })

			// The import's ports are the Service's.
			update(e, e.controlPlane, imp, func(u *unstructured.Unstructured) { setImportPorts(u, 80, 443) })
			e.waitDerived("web", 80, 443)

			// The import's spec.ips go to the Service's load balancer ingress, as
			// in Karmada, which the API server refuses on a ClusterIP Service: one
			// warning that says so, and the derived Service kept.
			update(e, e.controlPlane, imp, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedStringSlice(u.Object, []string{"10.9.0.1"}, "spec", "ips")
			})
			e.waitEvent("web", "SyncDerivedServiceFailed", "spec.ips stays on the ServiceImport only")
			e.waitDerived("web", 80, 443)

			update(e, e.controlPlane, imp, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "Headless", "spec", "type")
			})
			e.waitGone(e.controlPlane, derived, "derived-web deleted while the import is Headless")
			update(e, e.controlPlane, imp, func(u *unstructured.Unstructured) {
				_ = unstructured.SetNestedField(u.Object, "ClusterSetIP", "spec", "type")
			})
			e.waitDerived("web", 80, 443)

			e.delete(e.controlPlane, imp)
			e.waitGone(e.controlPlane, derived, "derived-web deleted with the import")
		},
	},
	{
		name: "a Service of the derived name not made for the import is left as it is, with SyncDerivedServiceFailed",
		run: func(e *env) {
			foreign := &corev1.Service{
				ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.DerivedServiceName("web")},
				Spec:       corev1.ServiceSpec{Selector: map[string]string{"app": "mine"}, Ports: []corev1.ServicePort{{Port: 8080}}},
			}
			e.create(e.controlPlane, foreign)
			e.create(e.controlPlane, e.serviceImport("web", "ClusterSetIP", 80))
			e.waitEvent("web", "SyncDerivedServiceFailed", "was not made for this ServiceImport")
			got := &corev1.Service{}
			if err := e.controlPlane.Get(e.ctx, client.ObjectKeyFromObject(foreign), got); err != nil {
				e.Fatal(err)
			}
			if got.Spec.Selector["app"] != "mine" || len(got.Spec.Ports) != 1 || got.Spec.Ports[0].Port != 8080 || got.Labels[mcs.DerivedServiceLabel] != "" {
				e.Errorf("the foreign Service was changed: %+v %v", got.Spec, got.Labels)
			}
		},
	},
	{
		name: "with a policy on the import, member2 gets derived-<name> and the slices member1 exports, until the export goes",
		run: func(e *env) {
			m1 := e.members["member1"]
			e.create(m1, e.serviceExport("web"))
			e.create(m1, e.memberSlice("web-1", "web", "10.5.0.1", "10.5.0.2"))
			e.create(e.controlPlane, e.serviceImport("web", "ClusterSetIP", 80))
			e.create(e.controlPlane, &policyv1alpha1.PropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: "web-import", Namespace: e.ns},
				Spec: policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: mcs.ServiceImportGVK.GroupVersion().String(), Kind: "ServiceImport", Name: "web"}},
					Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}},
				},
			})
			m2 := e.members["member2"]
			waitFor(e, m2, &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "derived-web"}}, "derived-web in member2", func(s *corev1.Service) (bool, string) {
				return len(s.Spec.Ports) == 1 && s.Spec.Ports[0].Port == 80 && s.Spec.Selector == nil, describe(s.Spec)
			})
			inMember2 := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.ImportedSliceName("member1", "web-1")}}
			waitFor(e, m2, inMember2, "member1's slice in member2", func(s *discoveryv1.EndpointSlice) (bool, string) {
				return s.Labels[mcs.ServiceNameLabel] == "derived-web" && slices.Equal(addressesOf(s), []string{"10.5.0.1", "10.5.0.2"}), describe(s.Labels, addressesOf(s))
			})
			e.delete(m1, e.serviceExport("web"))
			e.waitGone(m2, inMember2, "member1's slice gone from member2 with the export")
		},
	},
}

// memberSlice is an EndpointSlice of the Service service in the case's
// namespace as a member's EndpointSlice controller writes it: one ready
// endpoint per address, port 80.
func (e *env) memberSlice(name, service string, addresses ...string) *discoveryv1.EndpointSlice {
	s := &discoveryv1.EndpointSlice{
		ObjectMeta:  metav1.ObjectMeta{Namespace: e.ns, Name: name, Labels: map[string]string{mcs.ServiceNameLabel: service}},
		AddressType: discoveryv1.AddressTypeIPv4,
		Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Protocol: ptr.To(corev1.ProtocolTCP), Port: ptr.To[int32](80)}},
	}
	for _, a := range addresses {
		s.Endpoints = append(s.Endpoints, endpoint(a))
	}
	return s
}

// endpoint is a ready endpoint with one address, on a node and for a pod
// of the member.
func endpoint(address string) discoveryv1.Endpoint {
	return discoveryv1.Endpoint{Addresses: []string{address}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)},
		NodeName: ptr.To("node-1"), TargetRef: &corev1.ObjectReference{Kind: "Pod", Name: "pod-" + address}}
}

// addressesOf lists a slice's addresses, sorted.
func addressesOf(s *discoveryv1.EndpointSlice) []string {
	var out []string
	for _, ep := range s.Endpoints {
		out = append(out, ep.Addresses...)
	}
	slices.Sort(out)
	return out
}

// serviceExport is a ServiceExport of the case's namespace.
func (e *env) serviceExport(name string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mcs.ServiceExportGVK)
	u.SetNamespace(e.ns)
	u.SetName(name)
	return u
}

// serviceImport is a ServiceImport of the case's namespace of type typ,
// with ports (setImportPorts).
func (e *env) serviceImport(name, typ string, ports ...int32) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetGroupVersionKind(mcs.ServiceImportGVK)
	u.SetNamespace(e.ns)
	u.SetName(name)
	_ = unstructured.SetNestedField(u.Object, typ, "spec", "type")
	setImportPorts(u, ports...)
	return u
}

// setImportPorts sets a ServiceImport's spec.ports to TCP ports, each
// named p<port> (a Service of several ports must name them).
func setImportPorts(u *unstructured.Unstructured, ports ...int32) {
	var list []any
	for _, p := range ports {
		list = append(list, map[string]any{"name": fmt.Sprintf("p%d", p), "port": int64(p), "protocol": "TCP"})
	}
	_ = unstructured.SetNestedSlice(u.Object, list, "spec", "ports")
}

// waitDerived waits until derived-<name> on the control plane has exactly
// ports, and no selector, and returns it.
func (e *env) waitDerived(name string, ports ...int32) *corev1.Service {
	e.Helper()
	key := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.DerivedServiceName(name)}}
	return waitFor(e, e.controlPlane, key, fmt.Sprintf("%s with ports %v", key.Name, ports), func(s *corev1.Service) (bool, string) {
		var got []int32
		for _, p := range s.Spec.Ports {
			got = append(got, p.Port)
		}
		return slices.Equal(got, ports) && s.Spec.Selector == nil, describe(s.Spec)
	})
}

// collectedWork is the key of the Work that holds the EndpointSlice slice
// of the case's namespace collected from cluster.
func (e *env) collectedWork(cluster, slice string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(cluster), binding.WorkName("EndpointSlice", e.ns, slice)
	return w
}

// waitCollected waits until the Work of slice collected from cluster holds
// exactly addresses, and returns it.
func (e *env) waitCollected(cluster, slice string, addresses ...string) *workv1alpha1.Work {
	e.Helper()
	return waitFor(e, e.controlPlane, e.collectedWork(cluster, slice), fmt.Sprintf("%s collected from %s with %v", slice, cluster, addresses), func(w *workv1alpha1.Work) (bool, string) {
		s, err := sliceIn(w)
		if err != nil {
			return false, err.Error()
		}
		return slices.Equal(addressesOf(s), addresses), describe(w.Labels, addressesOf(s))
	})
}

// waitImported waits until the control plane's slice made from slice of
// cluster holds exactly addresses, and returns it.
func (e *env) waitImported(cluster, slice string, addresses ...string) *discoveryv1.EndpointSlice {
	e.Helper()
	key := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.ImportedSliceName(cluster, slice)}}
	return waitFor(e, e.controlPlane, key, fmt.Sprintf("%s with %v", key.Name, addresses), func(s *discoveryv1.EndpointSlice) (bool, string) {
		return slices.Equal(addressesOf(s), addresses), describe(s.Labels, addressesOf(s))
	})
}

// waitCollectedBy waits until the Work of slice collected from cluster is
// managed by owners (the "."-joined value of its managed-by label), and
// returns it.
func (e *env) waitCollectedBy(cluster, slice, owners string) *workv1alpha1.Work {
	e.Helper()
	return waitFor(e, e.controlPlane, e.collectedWork(cluster, slice), fmt.Sprintf("%s collected from %s for %s", slice, cluster, owners), func(w *workv1alpha1.Work) (bool, string) {
		return w.Labels[mcs.EndpointSliceManagedByLabel] == owners, describe(w.Labels)
	})
}

// sliceIn decodes the EndpointSlice a Work holds.
func sliceIn(w *workv1alpha1.Work) (*discoveryv1.EndpointSlice, error) {
	if len(w.Spec.Workload.Manifests) != 1 {
		return nil, fmt.Errorf("work %s/%s has %d manifests, want 1", w.Namespace, w.Name, len(w.Spec.Workload.Manifests))
	}
	s := &discoveryv1.EndpointSlice{}
	if err := json.Unmarshal(w.Spec.Workload.Manifests[0].Raw, s); err != nil {
		return nil, fmt.Errorf("work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return s, nil
}

// sliceManifest is s as a Work's manifest.
func (e *env) sliceManifest(s *discoveryv1.EndpointSlice) workv1alpha1.Manifest {
	e.Helper()
	s = s.DeepCopy()
	s.APIVersion, s.Kind = "discovery.k8s.io/v1", "EndpointSlice"
	raw, err := json.Marshal(s)
	if err != nil {
		e.Fatal(err)
	}
	return workv1alpha1.Manifest{RawExtension: runtime.RawExtension{Raw: raw}}
}
