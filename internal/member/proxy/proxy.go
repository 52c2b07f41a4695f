// Package proxy serves Karmada's Cluster proxy subresource on the
// control plane:
//
//	/apis/cluster.karmada.io/v1alpha1/clusters/<name>/proxy/<path>
//
// forwards the request to <path> of member cluster <name>, as the caller:
// the control plane's credentials for the member (the Cluster's secretRef)
// authenticate, and the caller's user, groups and extra are impersonated, so
// the member's RBAC decides what the caller may do there. The control plane's
// own authorization has run before: the caller needs the verb on
// clusters/proxy in group cluster.karmada.io, as in Karmada.
//
// Karmada serves Cluster from an aggregated API server to have this
// subresource; Flotilla keeps Cluster a CRD and puts Wrap in the control
// plane's handler chain, after authentication and authorization.
package proxy

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// Prefix is the path of the Cluster resource; a proxy request is
// Prefix + <name> + "/proxy" + <path>.
const Prefix = "/apis/cluster.karmada.io/v1alpha1/clusters/"

var codecs = scheme.Codecs

var clustersResource = schema.GroupResource{Group: "cluster.karmada.io", Resource: "clusters"}

// Split returns the cluster name and the member path of a proxy request
// path, and whether it is one. An empty member path is "/".
func Split(path string) (cluster, rest string, ok bool) {
	tail, found := strings.CutPrefix(path, Prefix)
	if !found {
		return "", "", false
	}
	cluster, sub, found := strings.Cut(tail, "/")
	if !found || cluster == "" {
		return "", "", false
	}
	if sub != "proxy" && !strings.HasPrefix(sub, "proxy/") {
		return "", "", false
	}
	rest = strings.TrimPrefix(sub, "proxy")
	if rest == "" {
		rest = "/"
	}
	return cluster, rest, true
}

// Wrap returns next with the proxy subresource in front: proxy requests go
// to the member, everything else to next. loopback reaches the control
// plane itself (for Clusters and their credentials Secrets); it is used
// from the first proxy request on.
func Wrap(next http.Handler, loopback *rest.Config) http.Handler {
	p := &proxy{loopback: loopback}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		cluster, path, ok := Split(r.URL.Path)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		p.serve(w, r, cluster, path)
	})
}

type proxy struct {
	loopback *rest.Config
	once     sync.Once
	members  *registry.Registry
	err      error
}

func (p *proxy) registry() (*registry.Registry, error) {
	p.once.Do(func() {
		c, err := client.New(p.loopback, client.Options{Scheme: controlplane.NewScheme()})
		if err != nil {
			p.err = err
			return
		}
		p.members = &registry.Registry{Reader: c}
	})
	return p.members, p.err
}

func (p *proxy) serve(w http.ResponseWriter, r *http.Request, cluster, path string) {
	fail := func(err error) {
		responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{}, w, r)
	}
	u, ok := request.UserFrom(r.Context())
	if !ok {
		fail(apierrors.NewUnauthorized("no user on the request"))
		return
	}
	reg, err := p.registry()
	if err != nil {
		fail(apierrors.NewInternalError(err))
		return
	}
	m, err := reg.Get(r.Context(), cluster)
	if err != nil {
		if apierrors.IsNotFound(err) {
			fail(apierrors.NewNotFound(clustersResource, cluster))
			return
		}
		fail(apierrors.NewServiceUnavailable(fmt.Sprintf("cluster %s: %v", cluster, err)))
		return
	}
	cfg := rest.CopyConfig(m.Config)
	cfg.Timeout = 0 // watches and logs stream
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
	transport, err := rest.TransportFor(cfg)
	if err != nil {
		fail(apierrors.NewInternalError(err))
		return
	}
	target, err := url.Parse(cfg.Host)
	if err != nil {
		fail(apierrors.NewInternalError(err))
		return
	}
	target.Path = strings.TrimSuffix(target.Path, "/") + path
	target.RawQuery = r.URL.RawQuery
	// The caller's own credentials and impersonation requests stop here:
	// the member sees the control plane's credentials, impersonating the
	// authenticated caller.
	r = r.Clone(r.Context())
	r.Header.Del("Authorization")
	for h := range r.Header {
		if strings.HasPrefix(strings.ToLower(h), "impersonate-") {
			r.Header.Del(h)
		}
	}
	h := utilproxy.NewUpgradeAwareHandler(target, transport, false, false, responder{cluster: cluster})
	h.UseRequestLocation = false
	klog.FromContext(r.Context()).V(4).Info("Proxying to a member cluster", "cluster", cluster, "path", path, "user", u.GetName())
	h.ServeHTTP(w, r)
}

type responder struct{ cluster string }

func (e responder) Error(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(apierrors.NewServiceUnavailable(fmt.Sprintf("proxy to cluster %s: %v", e.cluster, err)), codecs, schema.GroupVersion{}, w, r)
}
