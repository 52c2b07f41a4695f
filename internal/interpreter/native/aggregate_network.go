package native

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// aggregateService computes a Service template's status, as Karmada does. Only type
// LoadBalancer has one: status.loadBalancer.ingress lists the load balancer ingress points of
// every cluster, each distinct point once, sorted (see compareLBIngress). The points are copied
// as the members report them: Karmada no longer writes the cluster name into an empty hostname
// (karmada-io/karmada#6248), since a hostname must be a DNS name that resolves. Other status
// fields (conditions) are dropped. Services of other types are left alone.
func aggregateService(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	svcType, _, _ := unstructured.NestedString(template.Object, "spec", "type")
	if svcType != string(corev1.ServiceTypeLoadBalancer) {
		return template, nil
	}
	return aggregateLoadBalancer(template, items,
		func(s *corev1.ServiceStatus) *[]corev1.LoadBalancerIngress { return &s.LoadBalancer.Ingress },
		func(p corev1.LoadBalancerIngress) lbIngressKey {
			key := lbIngressKey{ip: p.IP, hostname: p.Hostname, ipMode: string(ptrValue(p.IPMode))}
			for _, port := range p.Ports {
				key.ports = append(key.ports, lbPortKey{port.Port, string(port.Protocol), ptrValue(port.Error)})
			}
			return key
		})
}

// aggregateIngress computes an Ingress template's status like a LoadBalancer Service's:
// status.loadBalancer.ingress lists every cluster's distinct ingress points once, sorted, as
// the members report them. Other status fields are dropped.
func aggregateIngress(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return aggregateLoadBalancer(template, items,
		func(s *networkingv1.IngressStatus) *[]networkingv1.IngressLoadBalancerIngress {
			return &s.LoadBalancer.Ingress
		},
		func(p networkingv1.IngressLoadBalancerIngress) lbIngressKey {
			key := lbIngressKey{ip: p.IP, hostname: p.Hostname}
			for _, port := range p.Ports {
				key.ports = append(key.ports, lbPortKey{port.Port, string(port.Protocol), ptrValue(port.Error)})
			}
			return key
		})
}

// aggregateLoadBalancer is the core of both: status type S holds a list of ingress points P
// (reached through ingress); every cluster's points are gathered, sorted by their keys and
// deduplicated. The template is returned unchanged when its status already says so.
func aggregateLoadBalancer[S, P any](template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem,
	ingress func(*S) *[]P, keyOf func(P) lbIngressKey) (*unstructured.Unstructured, error) {
	var old, next S
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	var points []P
	for _, item := range items {
		var member S
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if ok {
			points = append(points, *ingress(&member)...)
		}
	}
	// Sorting on the keys (and then dropping neighbours with equal keys) gives one order for
	// one set of points, whichever clusters report them and in which order: the API server
	// and the users see a list that changes only when the set does.
	slices.SortStableFunc(points, func(a, b P) int { return compareLBIngress(keyOf(a), keyOf(b)) })
	points = slices.CompactFunc(points, func(a, b P) bool { return compareLBIngress(keyOf(a), keyOf(b)) == 0 })
	*ingress(&next) = points
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// lbIngressKey is what identifies a load balancer ingress point of a Service or an Ingress: every
// field the API defines for it.
type lbIngressKey struct {
	ip, hostname, ipMode string
	ports                []lbPortKey
}

// lbPortKey is one port of a load balancer ingress point.
type lbPortKey struct {
	port            int32
	protocol, error string
}

// compareLBIngress orders ingress points by IP, then hostname, then IP mode, then ports (port
// by port: number, protocol, error; a prefix first). Strings compare byte-wise, so 192.0.2.10
// sorts before 192.0.2.20.
func compareLBIngress(a, b lbIngressKey) int {
	return cmp.Or(
		cmp.Compare(a.ip, b.ip),
		cmp.Compare(a.hostname, b.hostname),
		cmp.Compare(a.ipMode, b.ipMode),
		slices.CompareFunc(a.ports, b.ports, func(x, y lbPortKey) int {
			return cmp.Or(cmp.Compare(x.port, y.port), cmp.Compare(x.protocol, y.protocol), cmp.Compare(x.error, y.error))
		}),
	)
}

// ptrValue returns *p, or the zero value when p is nil.
func ptrValue[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}
