package multiclusteringress

import (
	"context"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

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

func TestClassOf(t *testing.T) {
	class := func(name, controller string, isDefault bool) *networkingv1.IngressClass {
		ic := &networkingv1.IngressClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Spec: networkingv1.IngressClassSpec{Controller: controller}}
		if isDefault {
			ic.Annotations = map[string]string{networkingv1.AnnotationIsDefaultIngressClass: "true"}
		}
		return ic
	}
	mci := func(name string) *networkingv1alpha1.MultiClusterIngress {
		m := &networkingv1alpha1.MultiClusterIngress{}
		if name != "" {
			m.Spec.IngressClassName = &name
		}
		return m
	}
	cases := []struct {
		name    string
		classes []client.Object
		mci     *networkingv1alpha1.MultiClusterIngress
		want    Verdict
		why     string
	}{
		{"the default is ours", []client.Object{class("local", "x/local", true)}, mci(""), Ours, ""},
		{"named, ours", []client.Object{class("local", "x/local", false), class("gce", "x/gce", true)}, mci("local"), Ours, ""},
		{"named, another's", []client.Object{class("local", "x/local", true), class("gce", "x/gce", false)}, mci("gce"), Others, "served by x/gce"},
		{"named, missing", []client.Object{class("local", "x/local", true)}, mci("locl"), Unserved, `IngressClass "locl" does not exist`},
		{"no default", []client.Object{class("local", "x/local", false)}, mci(""), Unserved, "no IngressClass is the default"},
		{"two defaults", []client.Object{class("a", "x/local", true), class("b", "x/gce", true)}, mci(""), Unknown, "several IngressClasses are the default (a, b)"},
		{"two defaults, named", []client.Object{class("a", "x/local", true), class("b", "x/gce", true)}, mci("a"), Ours, ""},
	}
	for _, tc := range cases {
		c := fake.NewClientBuilder().WithObjects(tc.classes...).Build()
		v, why, err := ClassOf(context.Background(), c, tc.mci, "x/local")
		if err != nil || v != tc.want || !strings.Contains(why, tc.why) {
			t.Errorf("%s: %v %q %v, want %v saying %q", tc.name, v, why, err, tc.want, tc.why)
		}
	}
}

func TestMissingPorts(t *testing.T) {
	svc := &corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "v", Name: "api"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}, {Port: 9090}}}}
	port := func(name string, number int32) networkingv1.IngressBackend {
		return networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "api", Port: networkingv1.ServiceBackendPort{Name: name, Number: number}}}
	}
	m := &networkingv1alpha1.MultiClusterIngress{}
	m.Spec.Rules = []networkingv1.IngressRule{{IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{Paths: []networkingv1.HTTPIngressPath{
		{Path: "/a", Backend: port("http", 0)}, {Path: "/b", Backend: port("", 9090)}, {Path: "/c", Backend: port("grpc", 0)}, {Path: "/d", Backend: port("", 81)},
	}}}}}
	want := `backend Service v/api has no port named "grpc", 81 (its ports: http 80, 9090)`
	if got := missingPorts(m, svc); got != want {
		t.Errorf("missingPorts = %q, want %q", got, want)
	}
	m.Spec.Rules[0].HTTP.Paths = m.Spec.Rules[0].HTTP.Paths[:2]
	if got := missingPorts(m, svc); got != "" {
		t.Errorf("missingPorts = %q, want none", got)
	}
}
