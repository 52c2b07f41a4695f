package loadbalancer

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// BackendClusterHeader is the response header the local listener adds to
// every proxied response: the member cluster whose endpoint served it.
const BackendClusterHeader = "X-Flotilla-Backend-Cluster"

// LocalIngress is the built-in MultiClusterIngress provider ("local"): one
// HTTP listener per MultiClusterIngress, on an address of its own from Pool
// (a loopback range such as 127.0.1.0/24, as a cloud gives each load
// balancer an IP) and on Port, routing by the MultiClusterIngress's host and
// path rules (exact hosts before wildcards before rules without a host; the
// longest matching path, Exact before Prefix; ImplementationSpecific as
// Prefix; else spec.defaultBackend) and sending each request, round robin,
// to a ready endpoint of the backend Service in a located cluster that is
// not in status.trafficBlockClusters. The endpoints are the EndpointSlices
// imported on the control plane from the members (the cluster of each is
// the execution namespace of the Work it was made from), so requests go to
// the addresses the member Services' endpoints hold: kwok's simulated pods
// do not answer, a process on the machine that a member's EndpointSlice
// points at does.
//
// No route gives 404, a backend with no endpoint 503, an endpoint that does
// not answer 502; each body says why. status.loadBalancer is {ingress: [{ip}]}
// (Karmada's schema wants an error with every port status, so the port,
// Port, is not listed there; the MCILoadBalance event gives ip:port). An
// address whose port is taken is skipped; after a restart a listener takes
// the address its status records again when it can.
type LocalIngress struct {
	// Client reads Services and EndpointSlices.
	Client client.Reader
	// Pool holds the listeners' addresses.
	Pool Pool
	// Port is the port every listener listens on.
	Port int

	mu        sync.Mutex
	listeners map[types.NamespacedName]*listener
	transport *http.Transport
}

// ErrNoListenAddress is returned when no address of the pool can be
// listened on.
var ErrNoListenAddress = errors.New("no address to listen on")

var _ IngressProvider = &LocalIngress{}

// Name is "local".
func (l *LocalIngress) Name() string { return LocalName }

// GetLoadBalancer reports the listener of mci, if this process runs one.
func (l *LocalIngress) GetLoadBalancer(_ context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*networkingv1.IngressLoadBalancerStatus, bool, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.listeners[client.ObjectKeyFromObject(mci)]
	if ln == nil || ln.uid != mci.UID {
		return nil, false, nil
	}
	return ln.status(), true, nil
}

// EnsureLoadBalancer opens the listener of mci and routes it.
func (l *LocalIngress) EnsureLoadBalancer(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*networkingv1.IngressLoadBalancerStatus, error) {
	return l.ensure(ctx, mci)
}

// UpdateLoadBalancer routes the listener of mci anew (opening it if this
// process has none).
func (l *LocalIngress) UpdateLoadBalancer(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*networkingv1.IngressLoadBalancerStatus, error) {
	return l.ensure(ctx, mci)
}

func (l *LocalIngress) ensure(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*networkingv1.IngressLoadBalancerStatus, error) {
	table, err := l.routes(ctx, mci)
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	key := client.ObjectKeyFromObject(mci)
	ln := l.listeners[key]
	if ln != nil && ln.uid != mci.UID { // deleted and made again under the same name
		ln.close()
		ln = nil
	}
	if ln == nil {
		if ln, err = l.listen(mci); err != nil {
			return nil, err
		}
		if l.listeners == nil {
			l.listeners = map[types.NamespacedName]*listener{}
		}
		l.listeners[key] = ln
	}
	ln.table.Store(table)
	return ln.status(), nil
}

// EnsureLoadBalancerDeleted closes the listener of mci.
func (l *LocalIngress) EnsureLoadBalancerDeleted(_ context.Context, mci *networkingv1alpha1.MultiClusterIngress) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	key := client.ObjectKeyFromObject(mci)
	if ln := l.listeners[key]; ln != nil {
		ln.close()
		delete(l.listeners, key)
	}
	return nil
}

// Close closes every listener (the process is stopping).
func (l *LocalIngress) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	for key, ln := range l.listeners {
		ln.close()
		delete(l.listeners, key)
	}
}

// listen opens a listener for mci: on the address its status records, when
// that one is in the pool and free, else on the lowest address of the pool
// no listener of this process holds and whose Port is free.
func (l *LocalIngress) listen(mci *networkingv1alpha1.MultiClusterIngress) (*listener, error) {
	held := sets.New[string]()
	for _, ln := range l.listeners {
		held.Insert(ln.host)
	}
	var sock net.Listener
	try := func(a netip.Addr) bool {
		if held.Has(a.String()) || !l.Pool.Contains(a) {
			return false
		}
		s, err := net.Listen("tcp", net.JoinHostPort(a.String(), strconv.Itoa(l.Port)))
		if err != nil {
			return false
		}
		sock = s
		return true
	}
	for _, in := range mci.Status.LoadBalancer.Ingress {
		if a, err := netip.ParseAddr(in.IP); err == nil && sock == nil {
			try(a)
		}
	}
	if sock == nil {
		if _, ok := l.Pool.First(try); !ok {
			return nil, fmt.Errorf("%w: port %d is taken on every address of --mci-lb-pool %s that no other MultiClusterIngress holds (%d held): free the port, or set --mci-lb-port or a wider --mci-lb-pool",
				ErrNoListenAddress, l.Port, l.Pool, held.Len())
		}
	}
	host := sock.Addr().(*net.TCPAddr).IP.String()
	if l.transport == nil {
		l.transport = &http.Transport{
			DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost: 64,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	ln := &listener{uid: mci.UID, name: mci.Namespace + "/" + mci.Name, sock: sock, host: host, port: l.Port}
	ln.table.Store(&routes{})
	ln.proxy = &httputil.ReverseProxy{
		Transport: l.transport,
		Rewrite: func(pr *httputil.ProxyRequest) {
			t, _ := pr.In.Context().Value(targetKey{}).(Target)
			pr.SetURL(&url.URL{Scheme: "http", Host: t.Address})
			pr.Out.Host = pr.In.Host
			pr.SetXForwarded()
		},
		ModifyResponse: func(resp *http.Response) error {
			t, _ := resp.Request.Context().Value(targetKey{}).(Target)
			resp.Header.Set(BackendClusterHeader, t.Cluster)
			return nil
		},
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			t, _ := r.Context().Value(targetKey{}).(Target)
			w.Header().Set(BackendClusterHeader, t.Cluster)
			http.Error(w, fmt.Sprintf("MultiClusterIngress %s: endpoint %s of cluster %s did not answer: %v", ln.name, t.Address, t.Cluster, err), http.StatusBadGateway)
		},
	}
	ln.srv = &http.Server{Handler: ln, ReadHeaderTimeout: 30 * time.Second}
	go func() {
		if err := ln.srv.Serve(sock); err != nil && !errors.Is(err, http.ErrServerClosed) {
			klog.ErrorS(err, "MultiClusterIngress listener stopped", "multiClusterIngress", ln.name)
		}
	}()
	return ln, nil
}

// Target is one endpoint a listener sends requests to.
type Target struct {
	// Cluster is the member cluster the endpoint is in.
	Cluster string
	// Address is "ip:port".
	Address string
}

type targetKey struct{}

// listener is the HTTP server of one MultiClusterIngress.
type listener struct {
	uid   types.UID
	name  string // namespace/name, for messages
	host  string
	port  int
	sock  net.Listener
	srv   *http.Server
	proxy *httputil.ReverseProxy
	table atomic.Pointer[routes]
	next  atomic.Uint64
}

// status is {ingress: [{ip}]}: Karmada's schema requires an error in every
// ports entry, so the port is not listed.
func (ln *listener) status() *networkingv1.IngressLoadBalancerStatus {
	return &networkingv1.IngressLoadBalancerStatus{Ingress: []networkingv1.IngressLoadBalancerIngress{{IP: ln.host}}}
}

// Address is "ip:port" of the listener of mci, or "" when this process runs
// none.
func (l *LocalIngress) Address(mci *networkingv1alpha1.MultiClusterIngress) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ln := l.listeners[client.ObjectKeyFromObject(mci)]
	if ln == nil || ln.uid != mci.UID {
		return ""
	}
	return net.JoinHostPort(ln.host, strconv.Itoa(ln.port))
}

func (ln *listener) close() {
	_ = ln.srv.Close()
	_ = ln.sock.Close() // should Serve not have started yet
}

// ServeHTTP routes r by the current table.
func (ln *listener) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	b := ln.table.Load().match(r.Host, r.URL.Path)
	if b == nil {
		http.Error(w, fmt.Sprintf("MultiClusterIngress %s: no rule matches host %q and path %q, and it has no spec.defaultBackend", ln.name, r.Host, r.URL.Path), http.StatusNotFound)
		return
	}
	if len(b.targets) == 0 {
		http.Error(w, fmt.Sprintf("MultiClusterIngress %s: %s", ln.name, b.why), http.StatusServiceUnavailable)
		return
	}
	t := b.targets[int((ln.next.Add(1)-1)%uint64(len(b.targets)))]
	ln.proxy.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), targetKey{}, t)))
}

// routes is a listener's table: the rules in spec order and the default
// backend.
type routes struct {
	rules []hostRule
	def   *backend
}

type hostRule struct {
	host  string // "", "a.example" or "*.example"
	paths []pathRule
}

type pathRule struct {
	path    string
	exact   bool
	backend *backend
}

// backend is where one Service backend's requests go: its targets, or why
// it has none.
type backend struct {
	targets []Target
	why     string
}

// match finds the backend of host and path: among the rules whose host
// matches most specifically (exact, then wildcard, then none), the longest
// matching path, Exact before Prefix; else the default backend.
func (rt *routes) match(host, path string) *backend {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.ToLower(host)
	best := 0
	for _, r := range rt.rules {
		best = max(best, hostScore(r.host, host))
	}
	if best > 0 {
		var found *pathRule
		for _, r := range rt.rules {
			if hostScore(r.host, host) != best {
				continue
			}
			for i := range r.paths {
				p := &r.paths[i]
				if !pathMatches(p, path) {
					continue
				}
				if found == nil || len(p.path) > len(found.path) || (len(p.path) == len(found.path) && p.exact && !found.exact) {
					found = p
				}
			}
		}
		if found != nil {
			return found.backend
		}
	}
	return rt.def
}

// hostScore is 3 for an exact match of rule, 2 for a wildcard match (one
// label in place of "*"), 1 for a rule without a host, 0 for no match.
func hostScore(rule, host string) int {
	switch {
	case rule == "":
		return 1
	case strings.EqualFold(rule, host):
		return 3
	case strings.HasPrefix(rule, "*."):
		suffix := strings.ToLower(rule[1:])
		if label, ok := strings.CutSuffix(host, suffix); ok && label != "" && !strings.Contains(label, ".") {
			return 2
		}
	}
	return 0
}

// pathMatches applies an Ingress path: Exact compares whole paths; Prefix
// (and ImplementationSpecific) compares "/"-separated elements, ignoring a
// trailing "/".
func pathMatches(p *pathRule, path string) bool {
	if path == "" {
		path = "/"
	}
	if p.exact {
		return path == p.path
	}
	prefix := strings.TrimSuffix(p.path, "/")
	return prefix == "" || path == prefix || strings.HasPrefix(path, prefix+"/")
}

// routes builds the table of mci from its spec, its status
// (serviceLocations, trafficBlockClusters) and the imported EndpointSlices.
func (l *LocalIngress) routes(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress) (*routes, error) {
	byBackend := map[string]*backend{}
	resolve := func(b *networkingv1.IngressBackend) (*backend, error) {
		if b == nil {
			return nil, nil
		}
		if b.Service == nil {
			return &backend{why: "a resource backend is not served by the local provider: use a Service backend"}, nil
		}
		key := b.Service.Name + ":" + b.Service.Port.Name + ":" + strconv.Itoa(int(b.Service.Port.Number))
		if got := byBackend[key]; got != nil {
			return got, nil
		}
		got, err := l.backend(ctx, mci, b.Service)
		if err != nil {
			return nil, err
		}
		byBackend[key] = got
		return got, nil
	}
	rt := &routes{}
	var err error
	if rt.def, err = resolve(mci.Spec.DefaultBackend); err != nil {
		return nil, err
	}
	for _, rule := range mci.Spec.Rules {
		hr := hostRule{host: strings.ToLower(rule.Host)}
		if rule.HTTP != nil {
			for i := range rule.HTTP.Paths {
				p := &rule.HTTP.Paths[i]
				b, err := resolve(&p.Backend)
				if err != nil {
					return nil, err
				}
				path := p.Path
				if path == "" {
					path = "/"
				}
				hr.paths = append(hr.paths, pathRule{path: path, exact: p.PathType != nil && *p.PathType == networkingv1.PathTypeExact, backend: b})
			}
		}
		rt.rules = append(rt.rules, hr)
	}
	return rt, nil
}

// backend lists the ready endpoints of Service backend sb in the located,
// unblocked clusters of mci, sorted, on the target port of the Service port
// sb names.
func (l *LocalIngress) backend(ctx context.Context, mci *networkingv1alpha1.MultiClusterIngress, sb *networkingv1.IngressServiceBackend) (*backend, error) {
	ref := mci.Namespace + "/" + sb.Name
	svc := &corev1.Service{}
	if err := l.Client.Get(ctx, client.ObjectKey{Namespace: mci.Namespace, Name: sb.Name}, svc); err != nil {
		if apierrors.IsNotFound(err) {
			return &backend{why: fmt.Sprintf("backend Service %s does not exist", ref)}, nil
		}
		return nil, err
	}
	i := slices.IndexFunc(svc.Spec.Ports, func(p corev1.ServicePort) bool {
		return (sb.Port.Name != "" && p.Name == sb.Port.Name) || (sb.Port.Name == "" && p.Port == sb.Port.Number)
	})
	if i < 0 {
		return &backend{why: fmt.Sprintf("backend Service %s has no port %s", ref, portText(sb.Port))}, nil
	}
	portName := svc.Spec.Ports[i].Name
	located := sets.New[string]()
	for _, loc := range mci.Status.ServiceLocations {
		if loc.Name == sb.Name {
			located.Insert(loc.Clusters...)
		}
	}
	blocked := sets.New(mci.Status.TrafficBlockClusters...)
	allowed := located.Difference(blocked)
	if allowed.Len() == 0 {
		if located.Len() == 0 {
			return &backend{why: fmt.Sprintf("backend Service %s runs in no cluster (see status.serviceLocations)", ref)}, nil
		}
		return &backend{why: fmt.Sprintf("every cluster of backend Service %s is out of traffic (status.trafficBlockClusters: %s)", ref, strings.Join(sets.List(blocked), ", "))}, nil
	}
	slicesList := &discoveryv1.EndpointSliceList{}
	if err := l.Client.List(ctx, slicesList, client.InNamespace(mci.Namespace),
		client.MatchingLabels{mcs.ServiceNameLabel: mcs.DerivedServiceName(sb.Name), mcs.SliceManagedByLabel: mcs.ImportedSliceManager}); err != nil {
		return nil, err
	}
	b := &backend{}
	seen := sets.New[Target]()
	for _, s := range slicesList.Items {
		cluster, _ := strings.CutPrefix(s.Annotations[binding.WorkNamespaceAnnotation], clusterv1alpha1.ExecutionSpacePrefix)
		if !allowed.Has(cluster) {
			continue
		}
		j := slices.IndexFunc(s.Ports, func(p discoveryv1.EndpointPort) bool { return ptr.Deref(p.Name, "") == portName })
		if j < 0 || s.Ports[j].Port == nil {
			continue
		}
		port := strconv.Itoa(int(*s.Ports[j].Port))
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				seen.Insert(Target{Cluster: cluster, Address: net.JoinHostPort(a, port)})
			}
		}
	}
	b.targets = seen.UnsortedList()
	slices.SortFunc(b.targets, func(x, y Target) int {
		return strings.Compare(x.Cluster+" "+x.Address, y.Cluster+" "+y.Address)
	})
	if len(b.targets) == 0 {
		b.why = fmt.Sprintf("backend Service %s has no ready endpoint in %s (the endpoints come from the EndpointSlices of each member, imported as derived-%s)",
			ref, strings.Join(sets.List(allowed), ", "), sb.Name)
	}
	return b, nil
}

func portText(p networkingv1.ServiceBackendPort) string {
	if p.Name != "" {
		return fmt.Sprintf("named %q", p.Name)
	}
	return strconv.Itoa(int(p.Number))
}
