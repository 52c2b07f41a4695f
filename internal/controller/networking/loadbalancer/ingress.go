package loadbalancer

import (
	"context"

	networkingv1 "k8s.io/api/networking/v1"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// IngressProvider is the load balancer of MultiClusterIngresses: the
// interface Karmada's multicluster-cloud-provider calls LoadBalancer, with
// its four methods, so that a cloud's implementation plugs in unchanged in
// shape. The multiClusterIngress controller calls it for every
// MultiClusterIngress whose IngressClass names the provider
// (--provider-ingress-class), after it has written the MultiClusterIngress's
// status.serviceLocations and status.trafficBlockClusters: the object the
// provider gets carries both, and a provider routes to the located clusters
// that are not blocked. The backends' endpoints are on the control plane:
// the EndpointSlices the endpointSlice controller imports for each backend
// Service ("imported-<cluster>-<slice>", labelled kubernetes.io/service-name
// "derived-<service>", annotated endpointslice.karmada.io/provision-cluster),
// since the controller exports every backend Service to its clusters, as
// Karmada's provider does.
//
// Every method is idempotent and called again after an error or a restart.
// The returned status becomes the MultiClusterIngress's
// status.loadBalancer; errors are reported on it as a Warning event
// (MCILoadBalance) and retried.
type IngressProvider interface {
	// Name is the provider's name, as --multicluster-provider takes it.
	Name() string
	// GetLoadBalancer returns the load balancer of mci and whether it has
	// one.
	GetLoadBalancer(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (status *networkingv1.IngressLoadBalancerStatus, exists bool, err error)
	// EnsureLoadBalancer creates the load balancer of mci (which has none)
	// and returns its status.
	EnsureLoadBalancer(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*networkingv1.IngressLoadBalancerStatus, error)
	// UpdateLoadBalancer brings the existing load balancer of mci up to
	// date with its rules, locations and blocked clusters.
	UpdateLoadBalancer(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*networkingv1.IngressLoadBalancerStatus, error)
	// EnsureLoadBalancerDeleted releases the load balancer of mci; no error
	// if it has none.
	EnsureLoadBalancerDeleted(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) error
}
