package loadbalancer

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"net/netip"
	"slices"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// LocalName is the name of the built-in provider.
const LocalName = "local"

// BackendsManager is the endpointslice.kubernetes.io/managed-by value of the
// EndpointSlices in which Local shows a load balancer's backends.
const BackendsManager = "local-load-balancer.flotilla.io"

// Labels on the backend EndpointSlices: the MultiClusterService they belong
// to (Karmada's label) and the cluster whose pods they list.
const (
	mcsNameLabel  = "multiclusterservice.karmada.io/name"
	clusterLabel  = "loadbalancer.flotilla.io/cluster"
	managedByKey  = "endpointslice.kubernetes.io/managed-by"
	backendsInfix = "-lb-"
)

// BackendSliceName is the EndpointSlice that lists the backends of
// MultiClusterService mcs in cluster: "<mcs>-lb-<cluster>".
func BackendSliceName(mcs, cluster string) string { return mcs + backendsInfix + cluster }

// Local is the local stack's load balancer: it allocates each
// MultiClusterService an address from Pool and shows the backends as
// EndpointSlices on the control plane, one per cluster, named
// BackendSliceName, labelled multiclusterservice.karmada.io/name and owned
// by the MultiClusterService. It forwards no traffic: the local members'
// pods are simulated.
//
// The addresses in use are the MultiClusterServices' own
// status.loadBalancer, so a restart forgets nothing and hands no address
// out twice.
type Local struct {
	// Client reads MultiClusterServices and writes the backend slices.
	Client client.Client
	// Pool is where addresses come from.
	Pool Pool

	mu       sync.Mutex
	reserved map[types.UID]string // allocated, perhaps not yet in a status
}

// Name is "local".
func (l *Local) Name() string { return LocalName }

// Get returns the status mcs holds when its address is one of the pool's.
func (l *Local) Get(_ context.Context, mcs *networkingv1alpha1.MultiClusterService) (*corev1.LoadBalancerStatus, bool, error) {
	if ip := l.current(mcs); ip != "" {
		return &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{ingress(mcs, ip)}}, true, nil
	}
	return nil, false, nil
}

// ingress is the status entry of address ip: the IP alone, as a Service
// of type LoadBalancer shows it (the ports are spec.ports).
func ingress(_ *networkingv1alpha1.MultiClusterService, ip string) corev1.LoadBalancerIngress {
	return corev1.LoadBalancerIngress{IP: ip}
}

// current is the pool address mcs's status records, or "".
func (l *Local) current(mcs *networkingv1alpha1.MultiClusterService) string {
	for _, in := range mcs.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil && l.Pool.Contains(a) {
			return a.String()
		}
	}
	return ""
}

// ErrPoolExhausted is returned when every address of the pool is in use.
var ErrPoolExhausted = errors.New("no free address")

// Ensure gives mcs an address (the one it has, else the lowest free one)
// and writes its backend slices.
func (l *Local) Ensure(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService, backends []Backends) (*corev1.LoadBalancerStatus, error) {
	ip, err := l.allocate(ctx, mcs)
	if err != nil {
		return nil, err
	}
	if err := l.writeBackends(ctx, mcs, backends); err != nil {
		return nil, err
	}
	return &corev1.LoadBalancerStatus{Ingress: []corev1.LoadBalancerIngress{ingress(mcs, ip)}}, nil
}

func (l *Local) allocate(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) (string, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.reserved == nil {
		l.reserved = map[types.UID]string{}
	}
	list := &networkingv1alpha1.MultiClusterServiceList{}
	if err := l.Client.List(ctx, list); err != nil {
		return "", fmt.Errorf("list MultiClusterServices to find a free address: %w", err)
	}
	used := map[string]types.UID{}
	for i := range list.Items {
		if ip := l.current(&list.Items[i]); ip != "" {
			used[ip] = list.Items[i].UID
		}
	}
	for uid, ip := range l.reserved {
		if _, taken := used[ip]; !taken {
			used[ip] = uid
		}
	}
	if ip := l.current(mcs); ip != "" && (used[ip] == "" || used[ip] == mcs.UID) {
		l.reserved[mcs.UID] = ip
		return ip, nil
	}
	if ip, ok := l.reserved[mcs.UID]; ok && used[ip] == mcs.UID {
		return ip, nil
	}
	ip, ok := l.Pool.First(func(a netip.Addr) bool { _, taken := used[a.String()]; return !taken })
	if !ok {
		return "", fmt.Errorf("%w in --mcs-lb-pool %s (%d addresses, all in use): widen the pool, or delete a MultiClusterService of type LoadBalancer", ErrPoolExhausted, l.Pool, l.Pool.Size())
	}
	l.reserved[mcs.UID] = ip.String()
	return ip.String(), nil
}

// writeBackends makes the backend slices of mcs match backends.
func (l *Local) writeBackends(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService, backends []Backends) error {
	existing := &discoveryv1.EndpointSliceList{}
	if err := l.Client.List(ctx, existing, client.InNamespace(mcs.Namespace),
		client.MatchingLabels{mcsNameLabel: mcs.Name, managedByKey: BackendsManager}); err != nil {
		return fmt.Errorf("list the backend slices of %s/%s: %w", mcs.Namespace, mcs.Name, err)
	}
	var errs []error
	want := map[string]bool{}
	for _, b := range backends {
		name := BackendSliceName(mcs.Name, b.Cluster)
		want[name] = true
		desired := &discoveryv1.EndpointSlice{
			ObjectMeta: metav1.ObjectMeta{Namespace: mcs.Namespace, Name: name,
				Labels: map[string]string{mcsNameLabel: mcs.Name, clusterLabel: b.Cluster, managedByKey: BackendsManager},
				OwnerReferences: []metav1.OwnerReference{{APIVersion: networkingv1alpha1.SchemeGroupVersion.String(), Kind: "MultiClusterService",
					Name: mcs.Name, UID: mcs.UID, Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}}},
			AddressType: b.AddressType, Ports: b.Ports,
		}
		if desired.AddressType == "" {
			desired.AddressType = discoveryv1.AddressTypeIPv4
		}
		for _, a := range b.Addresses {
			desired.Endpoints = append(desired.Endpoints, discoveryv1.Endpoint{Addresses: []string{a}, Conditions: discoveryv1.EndpointConditions{Ready: ptr.To(true)}})
		}
		i := slices.IndexFunc(existing.Items, func(s discoveryv1.EndpointSlice) bool { return s.Name == name })
		if i < 0 {
			if err := l.Client.Create(ctx, desired); err != nil && !apierrors.IsAlreadyExists(err) {
				errs = append(errs, fmt.Errorf("create backend slice %s/%s: %w", mcs.Namespace, name, err))
			}
			continue
		}
		cur := &existing.Items[i]
		if cur.AddressType == desired.AddressType && equality.Semantic.DeepEqual(cur.Endpoints, desired.Endpoints) &&
			equality.Semantic.DeepEqual(cur.Ports, desired.Ports) && equality.Semantic.DeepEqual(cur.Labels, desired.Labels) {
			continue
		}
		if cur.AddressType != desired.AddressType { // immutable: make it again
			if err := l.Client.Delete(ctx, cur); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, err)
			}
			continue // created on the next call
		}
		cur.Labels, cur.Endpoints, cur.Ports, cur.OwnerReferences = desired.Labels, desired.Endpoints, desired.Ports, desired.OwnerReferences
		if err := l.Client.Update(ctx, cur); err != nil {
			errs = append(errs, fmt.Errorf("update backend slice %s/%s: %w", mcs.Namespace, name, err))
		}
	}
	for i := range existing.Items {
		if s := &existing.Items[i]; !want[s.Name] {
			if err := l.Client.Delete(ctx, s); err != nil && !apierrors.IsNotFound(err) {
				errs = append(errs, fmt.Errorf("delete backend slice %s/%s: %w", s.Namespace, s.Name, err))
			}
		}
	}
	return errors.Join(errs...)
}

// EnsureDeleted forgets the address of mcs and deletes its backend slices.
func (l *Local) EnsureDeleted(ctx context.Context, mcs *networkingv1alpha1.MultiClusterService) error {
	if err := l.writeBackends(ctx, mcs, nil); err != nil {
		return err
	}
	l.mu.Lock()
	delete(l.reserved, mcs.UID)
	l.mu.Unlock()
	return nil
}

// Pool is a set of addresses: a CIDR ("10.255.0.0/24": every address but
// the network and broadcast ones, where the prefix leaves more than two) or
// an inclusive range ("10.255.0.10-10.255.0.50").
type Pool struct {
	first, last netip.Addr
	text        string
}

// ParsePool reads a --mcs-lb-pool value. Errors say which form was expected.
func ParsePool(s string) (Pool, error) {
	s = strings.TrimSpace(s)
	if from, to, ok := strings.Cut(s, "-"); ok {
		a, err1 := netip.ParseAddr(strings.TrimSpace(from))
		b, err2 := netip.ParseAddr(strings.TrimSpace(to))
		if err1 != nil || err2 != nil || a.Is4() != b.Is4() || b.Less(a) {
			return Pool{}, fmt.Errorf("address pool %q: want a CIDR such as 10.255.0.0/24 or a range such as 10.255.0.10-10.255.0.50 (first address not above the last, same family)", s)
		}
		return Pool{first: a, last: b, text: s}, nil
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return Pool{}, fmt.Errorf("address pool %q: want a CIDR such as 10.255.0.0/24 or a range such as 10.255.0.10-10.255.0.50", s)
	}
	p = p.Masked()
	first := p.Addr()
	last := lastOf(p)
	if p.Addr().BitLen()-p.Bits() >= 2 {
		first, last = first.Next(), last.Prev()
	}
	return Pool{first: first, last: last, text: s}, nil
}

func lastOf(p netip.Prefix) netip.Addr {
	b := p.Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

// String is the pool as given.
func (p Pool) String() string { return p.text }

// Contains reports whether a is in the pool.
func (p Pool) Contains(a netip.Addr) bool {
	return p.first.IsValid() && a.BitLen() == p.first.BitLen() && !a.Less(p.first) && !p.last.Less(a)
}

// Size is how many addresses the pool holds.
func (p Pool) Size() *big.Int {
	if !p.first.IsValid() {
		return big.NewInt(0)
	}
	a, b := new(big.Int).SetBytes(p.first.AsSlice()), new(big.Int).SetBytes(p.last.AsSlice())
	return b.Sub(b, a).Add(b, big.NewInt(1))
}

// First is the lowest address of the pool free accepts.
func (p Pool) First(free func(netip.Addr) bool) (netip.Addr, bool) {
	if !p.first.IsValid() {
		return netip.Addr{}, false
	}
	for a := p.first; a.IsValid() && !p.last.Less(a); a = a.Next() {
		if free(a) {
			return a, true
		}
	}
	return netip.Addr{}, false
}
