package integration

import (
	"fmt"
	"slices"
	"strings"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// multiClusterServiceCases check the MultiClusterService controllers
// (multiclusterservice and endpointsliceDispatch, gate MultiClusterService)
// for type CrossCluster: the Service goes to the providers and consumers
// through an entry in its binding's spec.requiredBy (an attached binding
// when no policy claims it), each provider gets a marker Work that has its
// slices collected, the dispatcher sends them to the other consumers as
// <provider>-<slice>, the status says how it went, and deleting the
// MultiClusterService undoes all of it. The providers' slices are written
// by hand (the bare members run no EndpointSlice controller).
var multiClusterServiceCases = []integrationCase{
	{
		name: "CrossCluster: the Service reaches the consumer through requiredBy, the provider's slices follow as <provider>-<slice>, and deleting it undoes all",
		run: func(e *env) {
			m1, m2 := e.members["member1"], e.members["member2"]
			e.create(e.controlPlane, e.service("web"))
			e.create(e.controlPlane, e.policy("web").selecting("Service", "web").to("member1").obj())
			waitFor(e, m1, e.service("web"), "web in member1", exists)
			slice := e.memberSlice("web-1", "web", "10.6.0.1", "10.6.0.2")
			e.create(m1, slice)
			m := e.crossCluster("web", []string{"member1"}, []string{"member2"})
			e.create(e.controlPlane, m)

			waitFor(e, e.controlPlane, m, "the MultiClusterService's finalizer", func(m *networkingv1alpha1.MultiClusterService) (bool, string) {
				return slices.Contains(m.Finalizers, mcs.MCSFinalizer), describe(m.Finalizers)
			})
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-service"}}
			waitFor(e, e.controlPlane, rb, "the Service's binding requiring member1 and member2 for the MultiClusterService", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return requiredFor(b, e.ns, "web", "member1", "member2") && placedOn(b, "member1"), describe(b.Spec.Placement, b.Spec.RequiredBy)
			})
			waitFor(e, m2, e.service("web"), "web in member2, the consumer", exists)

			marker := waitFor(e, e.controlPlane, e.markerWork("member1", "web"), "the marker Work in member1's execution namespace", exists[*workv1alpha1.Work])
			if !contains(marker.Labels, map[string]string{mcs.MCSNamespaceLabel: e.ns, mcs.MCSNameLabel: "web"}) || !ptr.Deref(marker.Spec.SuspendDispatching, false) {
				e.Errorf("the marker Work: labels %v, suspendDispatching %v; want the MultiClusterService's labels, suspended", marker.Labels, marker.Spec.SuspendDispatching)
			}
			collected := e.waitCollected("member1", "web-1", "10.6.0.1", "10.6.0.2")
			if want := map[string]string{mcs.MCSNamespaceLabel: e.ns, mcs.MCSNameLabel: "web", mcs.EndpointSliceManagedByLabel: mcs.ManagedByMultiClusterService}; !contains(collected.Labels, want) ||
				collected.Labels[mcs.EndpointSliceNameLabel] != "" {
				e.Errorf("the collected Work's labels %v, want %v and none of an export", collected.Labels, want)
			}
			got := e.waitDispatched("member2", "member1", "web-1", "10.6.0.1", "10.6.0.2")
			if got.Labels[mcs.ServiceNameLabel] != "web" || got.Labels[mcs.SliceManagedByLabel] != mcs.DispatchedSliceManager ||
				got.Annotations[mcs.ProvisionClusterAnnotation] != "member1" {
				e.Errorf("member2's slice: labels %v annotations %v", got.Labels, got.Annotations)
			}
			for _, ep := range got.Endpoints {
				if ep.NodeName != nil || ep.TargetRef != nil {
					e.Errorf("member2's slice names member1's node or pod: %+v", ep)
				}
			}
			e.waitConditions("web", "True/"+events.ServiceAppliedSucceed, "True/"+events.EndpointSliceDispatchedSucceed)
			for _, obj := range []client.Object{
				e.markerWork("member2", "web"),
				&discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.DispatchedSliceName("member1", "web-1")}},
			} {
				c := e.controlPlane
				if _, ok := obj.(*discoveryv1.EndpointSlice); ok {
					c = m1
				}
				if !e.absent(c, obj) {
					e.Errorf("%T %s exists: member2 is no provider, member1 no consumer", obj, client.ObjectKeyFromObject(obj))
				}
			}

			update(e, m1, slice, func(s *discoveryv1.EndpointSlice) { s.Endpoints = append(s.Endpoints, endpoint("10.6.0.3")) })
			e.waitDispatched("member2", "member1", "web-1", "10.6.0.1", "10.6.0.2", "10.6.0.3")

			e.delete(e.controlPlane, m)
			e.waitGone(e.controlPlane, m, "the MultiClusterService released and gone")
			e.waitGone(m2, got, "member2's slice withdrawn")
			e.waitGone(m2, e.service("web"), "web withdrawn from member2")
			waitFor(e, e.controlPlane, rb, "the binding without the MultiClusterService's entry", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return len(b.Spec.RequiredBy) == 0 && placedOn(b, "member1"), describe(b.Spec.RequiredBy)
			})
			e.waitNoWorksOf("web")
			if e.absent(m1, e.service("web")) {
				e.Errorf("web left member1, where its own policy places it")
			}
		},
	},
	{
		name: "with no lists every cluster provides and consumes, a Service no policy claims gets an attached binding, and both go with the MultiClusterService",
		run: func(e *env) {
			m1, m2 := e.members["member1"], e.members["member2"]
			e.create(e.controlPlane, e.service("api"))
			m := e.crossCluster("api", nil, nil)
			e.create(e.controlPlane, m)
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "api-service"}}
			b := waitFor(e, e.controlPlane, rb, "an attached binding requiring both clusters", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return requiredFor(b, e.ns, "api", "member1", "member2") && b.Spec.Placement == nil, describe(b.Spec.Placement, b.Spec.RequiredBy)
			})
			if b.Spec.ConflictResolution != policyv1alpha1.ConflictOverwrite || b.Spec.Resource.Kind != "Service" || b.Spec.Resource.Name != "api" {
				e.Errorf("the attached binding: resource %+v conflictResolution %q; want the Service, Overwrite", b.Spec.Resource, b.Spec.ConflictResolution)
			}
			for _, c := range memberNames {
				waitFor(e, e.members[c], e.service("api"), "api in "+c, exists)
				waitFor(e, e.controlPlane, e.markerWork(c, "api"), "the marker Work of "+c, exists[*workv1alpha1.Work])
			}
			e.create(m1, e.memberSlice("api-a", "api", "10.7.0.1"))
			e.create(m2, e.memberSlice("api-b", "api", "10.7.1.1"))
			e.waitDispatched("member2", "member1", "api-a", "10.7.0.1")
			e.waitDispatched("member1", "member2", "api-b", "10.7.1.1")
			e.waitConditions("api", "True/"+events.ServiceAppliedSucceed, "True/"+events.EndpointSliceDispatchedSucceed)
			for c, own := range map[string]string{"member1": "api-a", "member2": "api-b"} {
				if !e.absent(e.members[c], &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.DispatchedSliceName(c, own)}}) {
					e.Errorf("%s got its own slice %s back", c, own)
				}
			}

			e.delete(e.controlPlane, m)
			e.waitGone(e.controlPlane, rb, "the attached binding deleted")
			for _, c := range memberNames {
				e.waitGone(e.members[c], e.service("api"), "api withdrawn from "+c)
			}
			e.waitNoWorksOf("api")
		},
	},
	{
		name: "a missing Service and an unknown cluster make ServiceApplied False, with ClusterNotFound, until they are put right",
		run: func(e *env) {
			m := e.crossCluster("db", []string{"member1"}, []string{"member2", "member9"})
			e.create(e.controlPlane, m)
			e.waitServiceApplied("db", "False/"+events.ServiceAppliedFailed, "Service "+e.ns+"/db does not exist", "member9")
			e.waitEvent("db", events.ClusterNotFound, "member9")

			// The Service goes where it can meanwhile.
			e.create(e.controlPlane, e.service("db"))
			for _, c := range memberNames {
				waitFor(e, e.members[c], e.service("db"), "db in "+c, exists)
			}
			update(e, e.controlPlane, m, func(m *networkingv1alpha1.MultiClusterService) {
				m.Spec.ConsumerClusters = []networkingv1alpha1.ClusterSelector{{Name: "member2"}}
			})
			e.waitServiceApplied("db", "True/"+events.ServiceAppliedSucceed, "member1, member2")
		},
	},
}

// service is a ClusterIP Service template of the case's namespace, port 80
// to the pods labelled app=name.
func (e *env) service(name string) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec: corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []corev1.ServicePort{{Name: "http", Port: 80, TargetPort: intstr.FromInt32(8080), Protocol: corev1.ProtocolTCP}}},
	}
}

// crossCluster is a CrossCluster MultiClusterService of the case's
// namespace with the given providerClusters and consumerClusters (none:
// every cluster).
func (e *env) crossCluster(name string, providers, consumers []string) *networkingv1alpha1.MultiClusterService {
	m := &networkingv1alpha1.MultiClusterService{
		ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name},
		Spec:       networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeCrossCluster}},
	}
	for _, p := range providers {
		m.Spec.ProviderClusters = append(m.Spec.ProviderClusters, networkingv1alpha1.ClusterSelector{Name: p})
	}
	for _, c := range consumers {
		m.Spec.ConsumerClusters = append(m.Spec.ConsumerClusters, networkingv1alpha1.ClusterSelector{Name: c})
	}
	return m
}

// requiredFor reports whether b's spec.requiredBy is exactly the entry of
// the MultiClusterService namespace/name, with clusters.
func requiredFor(b *workv1alpha2.ResourceBinding, namespace, name string, clusters ...string) bool {
	if len(b.Spec.RequiredBy) != 1 {
		return false
	}
	r := b.Spec.RequiredBy[0]
	var got []string
	for _, c := range r.Clusters {
		got = append(got, c.Name)
	}
	slices.Sort(got)
	return r.Namespace == namespace && r.Name == mcs.RequirerName(name) && slices.Equal(got, clusters)
}

// markerWork is the key of the marker Work of the MultiClusterService name
// of the case's namespace in cluster's execution namespace.
func (e *env) markerWork(cluster, name string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(cluster), mcs.MarkerWorkName(e.ns, name)
	return w
}

// waitDispatched waits until consumer holds the slice of provider
// dispatched to it, with exactly addresses, and returns it.
func (e *env) waitDispatched(consumer, provider, slice string, addresses ...string) *discoveryv1.EndpointSlice {
	e.Helper()
	key := &discoveryv1.EndpointSlice{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: mcs.DispatchedSliceName(provider, slice)}}
	return waitFor(e, e.members[consumer], key, fmt.Sprintf("%s in %s with %v", key.Name, consumer, addresses), func(s *discoveryv1.EndpointSlice) (bool, string) {
		return slices.Equal(addressesOf(s), addresses), describe(s.Labels, addressesOf(s))
	})
}

// conditionOf is "status/reason" of the MultiClusterService's condition
// typ, "" when it has none.
func conditionOf(m *networkingv1alpha1.MultiClusterService, typ string) string {
	c := meta.FindStatusCondition(m.Status.Conditions, typ)
	if c == nil {
		return ""
	}
	return string(c.Status) + "/" + c.Reason
}

// waitConditions waits until the MultiClusterService name's ServiceApplied
// and EndpointSliceDispatched conditions are applied and dispatched
// ("status/reason").
func (e *env) waitConditions(name, applied, dispatched string) {
	e.Helper()
	key := &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}
	waitFor(e, e.controlPlane, key, fmt.Sprintf("ServiceApplied %s and EndpointSliceDispatched %s", applied, dispatched), func(m *networkingv1alpha1.MultiClusterService) (bool, string) {
		return conditionOf(m, networkingv1alpha1.MCSServiceAppliedConditionType) == applied &&
			conditionOf(m, networkingv1alpha1.EndpointSliceDispatched) == dispatched, describe(m.Status.Conditions)
	})
}

// waitServiceApplied waits until the MultiClusterService name's
// ServiceApplied condition is want ("status/reason") with a message that
// contains every one of parts.
func (e *env) waitServiceApplied(name, want string, parts ...string) {
	e.Helper()
	key := &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name}}
	waitFor(e, e.controlPlane, key, "ServiceApplied "+want, func(m *networkingv1alpha1.MultiClusterService) (bool, string) {
		c := meta.FindStatusCondition(m.Status.Conditions, networkingv1alpha1.MCSServiceAppliedConditionType)
		if c == nil || conditionOf(m, c.Type) != want {
			return false, describe(m.Status.Conditions)
		}
		for _, p := range parts {
			if !strings.Contains(c.Message, p) {
				return false, describe(m.Status.Conditions)
			}
		}
		return true, ""
	})
}

// waitNoWorksOf waits until no Work of any execution namespace carries the
// labels of the MultiClusterService name of the case's namespace: markers,
// collected and dispatched slices are gone.
func (e *env) waitNoWorksOf(name string) {
	e.Helper()
	e.eventually("no Work of MultiClusterService "+name, func() (bool, string) {
		list := &workv1alpha1.WorkList{}
		if err := e.controlPlane.List(e.ctx, list, client.MatchingLabels{mcs.MCSNamespaceLabel: e.ns, mcs.MCSNameLabel: name}); err != nil {
			return false, err.Error()
		}
		var left []string
		for _, w := range list.Items {
			left = append(left, w.Namespace+"/"+w.Name)
		}
		return len(left) == 0, describe(left)
	})
}
