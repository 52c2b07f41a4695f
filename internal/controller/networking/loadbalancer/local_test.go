package loadbalancer

import (
	"context"
	"net/netip"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

func TestParsePool(t *testing.T) {
	cases := []struct {
		in          string
		first, last string
		size        int64
		wantErr     bool
	}{
		{in: "10.255.0.0/24", first: "10.255.0.1", last: "10.255.0.254", size: 254},
		{in: "10.255.0.7/30", first: "10.255.0.5", last: "10.255.0.6", size: 2},
		{in: "10.255.0.8/31", first: "10.255.0.8", last: "10.255.0.9", size: 2},
		{in: "10.255.0.10-10.255.0.12", first: "10.255.0.10", last: "10.255.0.12", size: 3},
		{in: "fd00::/126", first: "fd00::1", last: "fd00::2", size: 2},
		{in: "10.255.0.12-10.255.0.10", wantErr: true},
		{in: "10.255.0.1-fd00::1", wantErr: true},
		{in: "ten.0.0.0/8", wantErr: true},
	}
	for _, tc := range cases {
		p, err := ParsePool(tc.in)
		if tc.wantErr {
			if err == nil || !strings.Contains(err.Error(), "want a CIDR") {
				t.Errorf("%s: error %v, want one saying the forms", tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if p.first.String() != tc.first || p.last.String() != tc.last || p.Size().Int64() != tc.size {
			t.Errorf("%s: %s-%s (%v), want %s-%s (%d)", tc.in, p.first, p.last, p.Size(), tc.first, tc.last, tc.size)
		}
		if !p.Contains(netip.MustParseAddr(tc.first)) || p.Contains(netip.MustParseAddr(tc.last).Next()) {
			t.Errorf("%s: Contains is wrong at the edges", tc.in)
		}
	}
}

func newLocal(t *testing.T, pool string, objs ...client.Object) (*Local, client.Client) {
	t.Helper()
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = networkingv1alpha1.AddToScheme(s)
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(objs...).WithStatusSubresource(&networkingv1alpha1.MultiClusterService{}).Build()
	p, err := ParsePool(pool)
	if err != nil {
		t.Fatal(err)
	}
	return &Local{Client: c, Pool: p}, c
}

func lbMCS(name, uid, ip string) *networkingv1alpha1.MultiClusterService {
	m := &networkingv1alpha1.MultiClusterService{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name, UID: types.UID(uid)},
		Spec: networkingv1alpha1.MultiClusterServiceSpec{Types: []networkingv1alpha1.ExposureType{networkingv1alpha1.ExposureTypeLoadBalancer}}}
	if ip != "" {
		m.Status.LoadBalancer.Ingress = []corev1.LoadBalancerIngress{{IP: ip}}
	}
	return m
}

// The lowest free address goes to a new MultiClusterService; one keeps the
// address its status records across calls (and restarts: the status is the
// record); an address another holds is never handed out twice; an
// exhausted pool is an error that says what to do.
func TestLocalAllocates(t *testing.T) {
	ctx := context.Background()
	a := lbMCS("a", "uid-a", "10.255.0.1")
	l, _ := newLocal(t, "10.255.0.0/30", a)
	st, err := l.Ensure(ctx, a, nil)
	if err != nil || st.Ingress[0].IP != "10.255.0.1" {
		t.Fatalf("a keeps its address: %v %v", st, err)
	}
	b := lbMCS("b", "uid-b", "")
	st, err = l.Ensure(ctx, b, nil)
	if err != nil || st.Ingress[0].IP != "10.255.0.2" {
		t.Fatalf("b gets the next free address: %v %v", st, err)
	}
	st, err = l.Ensure(ctx, b, nil) // b's status not yet written: the reservation holds
	if err != nil || st.Ingress[0].IP != "10.255.0.2" {
		t.Fatalf("b keeps its reservation: %v %v", st, err)
	}
	c := lbMCS("c", "uid-c", "10.255.0.1") // claims a's address: not its to keep
	if _, err = l.Ensure(ctx, c, nil); err == nil || !strings.Contains(err.Error(), "widen the pool") {
		t.Fatalf("c on an exhausted pool: %v", err)
	}
	if err := l.EnsureDeleted(ctx, b); err != nil {
		t.Fatal(err)
	}
	st, err = l.Ensure(ctx, c, nil)
	if err != nil || st.Ingress[0].IP != "10.255.0.2" {
		t.Fatalf("c gets b's released address: %v %v", st, err)
	}
}

// The backends are one EndpointSlice per cluster, kept in line with the
// pods, and deleted with the load balancer.
func TestLocalBackends(t *testing.T) {
	ctx := context.Background()
	m := lbMCS("web", "uid-web", "")
	l, c := newLocal(t, "10.255.0.10-10.255.0.20", m)
	port := []discoveryv1.EndpointPort{{Port: ptrTo(int32(8080))}}
	if _, err := l.Ensure(ctx, m, []Backends{{Cluster: "member1", Addresses: []string{"10.0.0.1", "10.0.0.2"}, Ports: port},
		{Cluster: "member2", Addresses: []string{"10.0.0.3"}, Ports: port}}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Ensure(ctx, m, []Backends{{Cluster: "member1", Addresses: []string{"10.0.0.1"}, Ports: port}}); err != nil {
		t.Fatal(err)
	}
	list := &discoveryv1.EndpointSliceList{}
	if err := c.List(ctx, list); err != nil {
		t.Fatal(err)
	}
	if len(list.Items) != 1 || list.Items[0].Name != "web-lb-member1" || len(list.Items[0].Endpoints) != 1 ||
		list.Items[0].Labels["multiclusterservice.karmada.io/name"] != "web" || list.Items[0].OwnerReferences[0].Name != "web" {
		t.Fatalf("backend slices: %+v", list.Items)
	}
	if err := l.EnsureDeleted(ctx, m); err != nil {
		t.Fatal(err)
	}
	if err := c.List(ctx, list); err != nil || len(list.Items) != 0 {
		t.Fatalf("slices left after EnsureDeleted: %v %v", list.Items, err)
	}
}

func ptrTo[T any](v T) *T { return &v }
