// Package proxy serves Karmada's Cluster proxy subresource on the
// control plane:
//
//	/apis/cluster.karmada.io/v1alpha1/clusters/<name>/proxy/<path>
//
// forwards the request to <path> of member cluster <name>, as the caller,
// with Karmada's unified authentication: the request authenticates to the
// member with the token of the member's impersonator service account (the
// Cluster's spec.impersonatorSecretRef; the CA comes from spec.secretRef)
// and impersonates the caller's user and groups, so the member's RBAC
// decides what the caller may do there. The impersonator may impersonate
// only the subjects control-plane RBAC lets reach the cluster (the
// unifiedAuth controller keeps its karmada-impersonator ClusterRole in the
// member): a subject whose grant is removed is refused by the member too.
// The control plane's own authorization has run before: the caller needs
// the verb on clusters/proxy in group cluster.karmada.io, as in Karmada.
//
// Karmada serves Cluster from an aggregated API server to have this
// subresource; Flotilla keeps Cluster a CRD and puts Wrap in the control
// plane's handler chain, after authentication and authorization.
package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilproxy "k8s.io/apimachinery/pkg/util/proxy"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	"k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
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
	reader   client.Reader
	err      error
}

func (p *proxy) client() (client.Reader, error) {
	p.once.Do(func() {
		p.reader, p.err = client.New(p.loopback, client.Options{Scheme: controlplane.NewScheme()})
	})
	return p.reader, p.err
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
	c, err := p.client()
	if err != nil {
		fail(apierrors.NewInternalError(err))
		return
	}
	cfg, err := ImpersonatorConfig(r.Context(), c, cluster)
	if err != nil {
		if apierrors.IsNotFound(err) {
			fail(apierrors.NewNotFound(clustersResource, cluster))
			return
		}
		fail(apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	cfg.Impersonate = rest.ImpersonationConfig{UserName: u.GetName(), Groups: ImpersonatedGroups(u.GetName(), u.GetGroups())}
	klog.FromContext(r.Context()).V(4).Info("Proxying to a member cluster", "cluster", cluster, "path", path, "user", u.GetName())
	Forward(w, r, cfg, path, responder{cluster: cluster})
}

// Forward sends r to path (with r's query) on the API server cfg reaches,
// with cfg's credentials and impersonation, and copies the answer back;
// upgraded connections (exec, attach, port-forward) included. The caller's
// own Authorization and Impersonate-* headers are dropped: the target sees
// cfg's identity, impersonating whom cfg says. Errors of the connection
// itself go to onError; the target's own answers, errors included, are
// copied as they are.
func Forward(w http.ResponseWriter, r *http.Request, cfg *rest.Config, path string, onError utilproxy.ErrorResponder) {
	fail := func(err error) {
		responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{}, w, r)
	}
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
	r = r.Clone(r.Context())
	r.Header.Del("Authorization")
	for h := range r.Header {
		if strings.HasPrefix(strings.ToLower(h), "impersonate-") {
			r.Header.Del(h)
		}
	}
	h := utilproxy.NewUpgradeAwareHandler(target, transport, false, false, onError)
	h.UseRequestLocation = false
	if h.UpgradeTransport, err = upgradeTransport(cfg); err != nil {
		fail(apierrors.NewInternalError(err))
		return
	}
	h.ServeHTTP(w, r)
}

// upgradeTransport carries an upgraded request (exec, attach, port-forward:
// the handler dials the member itself and writes the request on the
// connection) with what transport adds to every other request: the
// impersonator's token and the Impersonate-* headers of cfg. Without it the
// member would see the request with neither and refuse it as anonymous.
func upgradeTransport(cfg *rest.Config) (utilproxy.UpgradeRequestRoundTripper, error) {
	tlsConfig, err := rest.TLSConfigFor(cfg)
	if err != nil {
		return nil, err
	}
	headers, err := rest.HTTPWrappersForConfig(cfg, utilproxy.MirrorRequest)
	if err != nil {
		return nil, err
	}
	return utilproxy.NewUpgradeRequestRoundTripper(&http.Transport{TLSClientConfig: tlsConfig, Proxy: http.ProxyFromEnvironment}, headers), nil
}

// ImpersonatorConfig reaches the named cluster's API server as its
// impersonator: the token of the Secret spec.impersonatorSecretRef names
// (key "token"), the CA of spec.secretRef's Secret when there is one (key
// "caBundle"), spec.insecureSkipTLSVerification. Errors: the Cluster's
// NotFound as such; otherwise a message saying what is missing and how to
// get it.
func ImpersonatorConfig(ctx context.Context, c client.Reader, name string) (*rest.Config, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: name}, cluster); err != nil {
		return nil, err
	}
	if cluster.Spec.APIEndpoint == "" {
		return nil, fmt.Errorf("cluster %s has no spec.apiEndpoint: its agent reports it (--cluster-api-endpoint)", name)
	}
	ref := cluster.Spec.ImpersonatorSecretRef
	if ref == nil {
		return nil, fmt.Errorf("cluster %s has no spec.impersonatorSecretRef, so its proxy cannot impersonate callers: join it again with flotilla join or karmadactl join, or run its agent with --report-secrets KubeCredentials,KubeImpersonator", name)
	}
	secret := &corev1.Secret{}
	if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, secret); err != nil {
		return nil, fmt.Errorf("read the impersonator Secret %s/%s of cluster %s: %w", ref.Namespace, ref.Name, name, err)
	}
	token := secret.Data[clusterv1alpha1.SecretTokenKey]
	if len(token) == 0 {
		return nil, fmt.Errorf("the impersonator Secret %s/%s of cluster %s has no %q key", ref.Namespace, ref.Name, name, clusterv1alpha1.SecretTokenKey)
	}
	cfg := &rest.Config{Host: cluster.Spec.APIEndpoint, BearerToken: string(token),
		TLSClientConfig: rest.TLSClientConfig{Insecure: cluster.Spec.InsecureSkipTLSVerification}}
	if ref := cluster.Spec.SecretRef; ref != nil && !cfg.Insecure {
		ca := &corev1.Secret{}
		if err := c.Get(ctx, client.ObjectKey{Namespace: ref.Namespace, Name: ref.Name}, ca); err != nil {
			return nil, fmt.Errorf("read the credentials Secret %s/%s of cluster %s for its CA: %w", ref.Namespace, ref.Name, name, err)
		}
		cfg.CAData = ca.Data[clusterv1alpha1.SecretCADataKey]
	}
	return cfg, nil
}

// ImpersonatedGroups are the groups the proxy impersonates for a caller:
// its groups without system:authenticated and system:unauthenticated (the
// member adds the first itself), as Karmada does. For a service account,
// its own groups (system:serviceaccounts and system:serviceaccounts:<ns>)
// are left out too: the member adds them when no group is impersonated,
// so a service account granted the proxy needs no grant for its groups
// (Karmada asks for one).
func ImpersonatedGroups(userName string, groups []string) []string {
	rest, isSA := strings.CutPrefix(userName, serviceAccountPrefix)
	ns, _, _ := strings.Cut(rest, ":")
	var out []string
	for _, g := range groups {
		switch {
		case g == user.AllAuthenticated || g == user.AllUnauthenticated:
		case isSA && (g == "system:serviceaccounts" || g == "system:serviceaccounts:"+ns):
		default:
			out = append(out, g)
		}
	}
	return out
}

// serviceAccountPrefix starts a service account's user name.
const serviceAccountPrefix = "system:serviceaccount:"

type responder struct{ cluster string }

func (e responder) Error(w http.ResponseWriter, r *http.Request, err error) {
	responsewriters.ErrorNegotiated(apierrors.NewServiceUnavailable(fmt.Sprintf("proxy to cluster %s: %v", e.cluster, err)), codecs, schema.GroupVersion{}, w, r)
}
