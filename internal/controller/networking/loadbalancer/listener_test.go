package loadbalancer

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

func TestRouteMatch(t *testing.T) {
	b := func(name string) *backend { return &backend{why: name} }
	rt := &routes{def: b("default"), rules: []hostRule{
		{host: "shop.example", paths: []pathRule{{path: "/", backend: b("shop")}, {path: "/api", backend: b("api")}, {path: "/api/v1", exact: true, backend: b("v1")}}},
		{host: "*.example", paths: []pathRule{{path: "/", backend: b("wild")}}},
		{host: "", paths: []pathRule{{path: "/any", backend: b("any")}}},
	}}
	cases := []struct{ host, path, want string }{
		{"shop.example", "/", "shop"},
		{"shop.example:8080", "/api", "api"},
		{"SHOP.example", "/api/", "api"},
		{"shop.example", "/apis", "shop"}, // element-wise prefix
		{"shop.example", "/api/v1", "v1"},
		{"shop.example", "/api/v1/x", "api"},
		{"a.example", "/x", "wild"},
		{"a.b.example", "/any", "any"}, // a wildcard matches one label
		{"other", "/any/thing", "any"},
		{"other", "/", "default"},
	}
	for _, tc := range cases {
		got := rt.match(tc.host, tc.path)
		if got == nil || got.why != tc.want {
			t.Errorf("match(%q, %q) = %v, want %s", tc.host, tc.path, got, tc.want)
		}
	}
}

// TestLocalIngressRoutes runs a listener in front of two stand-in backends,
// one per cluster, and blocks one of them.
func TestLocalIngressRoutes(t *testing.T) {
	ctx := context.Background()
	servers := map[string]int{}
	for _, cluster := range []string{"member1", "member2"} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, "%s %s %s", cluster, r.Host, r.URL.Path)
		}))
		t.Cleanup(srv.Close)
		servers[cluster] = srv.Listener.Addr().(*net.TCPAddr).Port
	}
	scheme := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(scheme)
	objs := []client.Object{&corev1.Service{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "web"},
		Spec: corev1.ServiceSpec{Ports: []corev1.ServicePort{{Name: "http", Port: 80}}}}}
	for cluster, port := range servers {
		objs = append(objs, &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "imported-" + cluster + "-web",
				Labels:      map[string]string{"kubernetes.io/service-name": "derived-web", "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.karmada.io"},
				Annotations: map[string]string{"work.karmada.io/namespace": "karmada-es-" + cluster}},
			AddressType: discoveryv1.AddressTypeIPv4,
			Ports:       []discoveryv1.EndpointPort{{Name: ptr.To("http"), Port: ptr.To(int32(port))}},
			Endpoints:   []discoveryv1.Endpoint{{Addresses: []string{"127.0.0.1"}}},
		})
	}
	pool, _ := ParsePool("127.0.1.0/24")
	free, _ := net.Listen("tcp", "127.0.0.1:0")
	port := free.Addr().(*net.TCPAddr).Port
	free.Close()
	l := &LocalIngress{Client: fake.NewClientBuilder().WithScheme(scheme).WithObjects(objs...).Build(), Pool: pool, Port: port}
	t.Cleanup(l.Close)
	mci := &networkingv1alpha1.MultiClusterIngress{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: "shop", UID: "u1"}}
	mci.Spec.Rules = []networkingv1.IngressRule{{Host: "shop.example", IngressRuleValue: networkingv1.IngressRuleValue{HTTP: &networkingv1.HTTPIngressRuleValue{
		Paths: []networkingv1.HTTPIngressPath{
			{Path: "/", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "web", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
			{Path: "/gone", PathType: ptr.To(networkingv1.PathTypePrefix), Backend: networkingv1.IngressBackend{Service: &networkingv1.IngressServiceBackend{Name: "gone", Port: networkingv1.ServiceBackendPort{Number: 80}}}},
		}}}}}
	mci.Status.ServiceLocations = []networkingv1alpha1.ServiceLocation{{Name: "web", Clusters: []string{"member1", "member2"}}}

	st, err := l.EnsureLoadBalancer(ctx, mci)
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Ingress) != 1 || !pool.Contains(netip.MustParseAddr(st.Ingress[0].IP)) {
		t.Fatalf("status %+v, want one address of %s", st, pool)
	}
	addr := net.JoinHostPort(st.Ingress[0].IP, strconv.Itoa(port))
	if got := l.Address(mci); got != addr {
		t.Errorf("Address = %q, want %q", got, addr)
	}
	get := func(host, path string) (int, string, string) {
		req, _ := http.NewRequest(http.MethodGet, "http://"+addr+path, nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get(BackendClusterHeader), string(body)
	}
	seen := map[string]bool{}
	for range 4 {
		code, cluster, body := get("shop.example", "/cart")
		if code != 200 || !strings.HasPrefix(body, cluster+" shop.example /cart") {
			t.Fatalf("got %d %q from %q, want 200 from the cluster the header names, with host and path kept", code, body, cluster)
		}
		seen[cluster] = true
	}
	if !seen["member1"] || !seen["member2"] {
		t.Errorf("requests reached %v, want both clusters", seen)
	}
	if code, _, body := get("shop.example", "/gone"); code != 503 || !strings.Contains(body, "backend Service shop/gone does not exist") {
		t.Errorf("/gone: %d %q, want 503 saying the Service does not exist", code, body)
	}
	if code, _, body := get("other.example", "/"); code != 404 || !strings.Contains(body, "no rule matches") {
		t.Errorf("other host: %d %q, want 404", code, body)
	}

	mci.Status.TrafficBlockClusters = []string{"member2"}
	if _, exists, _ := l.GetLoadBalancer(ctx, mci); !exists {
		t.Fatal("GetLoadBalancer: the listener is not there")
	}
	if _, err := l.UpdateLoadBalancer(ctx, mci); err != nil {
		t.Fatal(err)
	}
	for range 4 {
		if _, cluster, _ := get("shop.example", "/"); cluster != "member1" {
			t.Fatalf("member2 is blocked, yet %s served", cluster)
		}
	}
	mci.Status.TrafficBlockClusters = []string{"member1", "member2"}
	_, _ = l.UpdateLoadBalancer(ctx, mci)
	if code, _, body := get("shop.example", "/"); code != 503 || !strings.Contains(body, "out of traffic") {
		t.Errorf("all blocked: %d %q, want 503 saying so", code, body)
	}

	// Another MultiClusterIngress gets another address.
	other := mci.DeepCopy()
	other.Name, other.UID = "other", "u2"
	st3, err := l.EnsureLoadBalancer(ctx, other)
	if err != nil || st3.Ingress[0].IP == st.Ingress[0].IP {
		t.Fatalf("a second MultiClusterIngress: %+v, %v; want an address other than %s", st3, err, st.Ingress[0].IP)
	}

	// A restart takes the recorded address again; deletion frees it.
	mci.Status.LoadBalancer = *st3 // as if the other one had held it before
	l.Close()
	l2 := &LocalIngress{Client: l.Client, Pool: pool, Port: port}
	t.Cleanup(l2.Close)
	st2, err := l2.EnsureLoadBalancer(ctx, mci)
	if err != nil || st2.Ingress[0].IP != st3.Ingress[0].IP {
		t.Fatalf("after a restart: %+v, %v; want %s again", st2, err, st3.Ingress[0].IP)
	}
	addr = net.JoinHostPort(st2.Ingress[0].IP, strconv.Itoa(port))
	if err := l2.EnsureLoadBalancerDeleted(ctx, mci); err != nil {
		t.Fatal(err)
	}
	if c, err := net.Dial("tcp", addr); err == nil {
		c.Close()
		t.Error("the listener still accepts connections after EnsureLoadBalancerDeleted")
	}
}
