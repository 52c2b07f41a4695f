package multiclusteringress

import (
	"slices"
	"testing"

	networkingv1 "k8s.io/api/networking/v1"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestBackendServicesAndClusters(t *testing.T) {
	backend := func(name string) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: name, Port: networkingv1.ServiceBackendPort{Number: 80}}}
	}
	def := backend("web")
	mci := &networkingv1alpha1.MultiClusterIngress{Spec: networkingv1.IngressSpec{
		DefaultBackend: &def,
		Rules: []networkingv1.IngressRule{
			{Host: "a", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
				{Path: "/api", Backend: backend("api")}, {Path: "/web", Backend: backend("web")},
			}}}},
			{Host: "b"}, // no paths
		},
	}}
	if got := BackendServices(mci); !slices.Equal(got, []string{"api", "web"}) {
		t.Errorf("BackendServices: %v, want [api web]", got)
	}
	rb := &workv1alpha2.ResourceBinding{}
	rb.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2"}, {Name: "member1"}}
	rb.Spec.RequiredBy = []workv1alpha2.BindingSnapshot{{Clusters: []workv1alpha2.TargetCluster{{Name: "member3"}, {Name: "member1"}}}}
	if got := Clusters(rb); !slices.Equal(got, []string{"member1", "member2", "member3"}) {
		t.Errorf("Clusters: %v, want the sorted union of clusters and requiredBy", got)
	}
}
