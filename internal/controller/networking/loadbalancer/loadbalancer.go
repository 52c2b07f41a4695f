// Package loadbalancer is the load balancer provider interface of
// MultiClusterServices of type LoadBalancer (north-south), in the spirit of
// Karmada's multicluster-cloud-provider: a cloud plugs its load balancer in
// by implementing Provider; the multiclusterservice controller calls it with
// the MultiClusterService and its backends, the ready pod addresses of every
// cluster the Service runs in, and writes the returned status into
// status.loadBalancer. Local is the built-in provider of the local stack.
package loadbalancer

import (
	"context"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// Backends of one cluster: the ready endpoint addresses of the Service there
// and the ports they listen on (the EndpointSlice ports: target ports, by
// name).
type Backends struct {
	// Cluster is the member cluster's name.
	Cluster string
	// Addresses are pod IPs, sorted, each once.
	Addresses []string
	// Ports are the ports the addresses serve.
	Ports []discoveryv1.EndpointPort
	// AddressType is the slices' address type (IPv4, IPv6).
	AddressType discoveryv1.AddressType
}

// Provider allocates, updates and releases the load balancer of a
// MultiClusterService. Every method is idempotent: the controller calls it
// again after a failure or a restart. Errors are reported on the
// MultiClusterService as a Warning event (reason MCSLoadBalance) and the
// call is retried.
type Provider interface {
	// Name is the provider's name, as --mcs-lb-provider takes it.
	Name() string
	// Get returns the load balancer of mcs, if it has one.
	Get(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) (status *corev1.LoadBalancerStatus, exists bool, err error)
	// Ensure creates the load balancer of mcs (an address for
	// spec.ports) with these backends, or brings an existing one up to
	// date, and returns its status.
	Ensure(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService, backends []Backends) (*corev1.LoadBalancerStatus, error)
	// EnsureDeleted releases the load balancer of mcs and its address; no
	// error if it has none.
	EnsureDeleted(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) error
}
