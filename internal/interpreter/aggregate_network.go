package interpreter

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// aggregateService computes a Service template's status. Only type LoadBalancer has one: the
// load balancer ingress points of every cluster, in cluster order, without exact duplicates.
// As in Karmada, a point without a hostname gets the cluster's name as hostname, so that users
// can tell which cluster it belongs to. Services of other types are left alone.
func aggregateService(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	svcType, _, _ := unstructured.NestedString(template.Object, "spec", "type")
	if svcType != string(corev1.ServiceTypeLoadBalancer) {
		return template, nil
	}
	return aggregateLoadBalancer(template, items,
		func(s *corev1.ServiceStatus) *[]corev1.LoadBalancerIngress { return &s.LoadBalancer.Ingress },
		func(p *corev1.LoadBalancerIngress) *string { return &p.Hostname })
}

// aggregateIngress computes an Ingress template's status like a LoadBalancer Service's: the
// load balancer ingress points of every cluster, hostnames defaulted to the cluster name.
func aggregateIngress(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	return aggregateLoadBalancer(template, items,
		func(s *networkingv1.IngressStatus) *[]networkingv1.IngressLoadBalancerIngress {
			return &s.LoadBalancer.Ingress
		},
		func(p *networkingv1.IngressLoadBalancerIngress) *string { return &p.Hostname })
}

// aggregateLoadBalancer is the core of both: status type S holds a list of ingress points P
// (reached through ingress); every cluster's points are gathered, in cluster order and without
// exact duplicates, with an empty hostname set to the cluster's name. The template is returned
// unchanged when its status already says so.
func aggregateLoadBalancer[S, P any](template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem,
	ingress func(*S) *[]P, hostname func(*P) *string) (*unstructured.Unstructured, error) {
	var old, next S
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	for _, item := range items {
		var member S
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for _, in := range *ingress(&member) {
			if h := hostname(&in); *h == "" {
				*h = item.ClusterName
			}
			*ingress(&next) = appendNew(*ingress(&next), in)
		}
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// appendNew appends v unless an equal element is already present.
func appendNew[T any](list []T, v T) []T {
	for i := range list {
		if apiequality.Semantic.DeepEqual(list[i], v) {
			return list
		}
	}
	return append(list, v)
}
