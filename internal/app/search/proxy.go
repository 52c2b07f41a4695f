package search

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	"k8s.io/apiserver/pkg/endpoints/handlers"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	clientrest "k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
	memberproxy "github.com/flotilla-io/flotilla/internal/member/proxy"
)

// fleetProxy is Karmada's global proxy,
// /apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/<Kubernetes path>:
// a kubeconfig whose server is that URL sees the whole fleet as one cluster.
//
//   - get, list and watch of a kind some ResourceRegistry caches (no
//     subresource) are answered from the member caches, authorized by the
//     control plane's RBAC for the same request;
//   - any other verb or subresource (logs, exec, attach, port-forward,
//     delete, update) on such a kind goes to the member whose cache holds
//     the object, as the caller (impersonated by the member's impersonator,
//     as the Cluster proxy does, so the member's RBAC decides); a create or
//     delete-collection, which names no object, is refused;
//   - everything else goes to the control plane, as the caller.
type fleetProxy struct {
	cache        *Cache
	reader       client.Reader      // Clusters and their Secrets
	controlPlane *clientrest.Config // may impersonate anyone
	authz        authorizer.Authorizer
}

// proxyingREST is the virtual resource proxying; its one object is "karmada".
type proxyingREST struct{ proxy *fleetProxy }

var (
	_ rest.Storage   = &proxyingREST{}
	_ rest.Scoper    = &proxyingREST{}
	_ rest.Connecter = &proxyingREST{}
)

func (r *proxyingREST) New() runtime.Object     { return &searchv1alpha1.Proxying{} }
func (r *proxyingREST) Destroy()                {}
func (r *proxyingREST) NamespaceScoped() bool   { return false }
func (r *proxyingREST) GetSingularName() string { return "proxying" }
func (r *proxyingREST) ConnectMethods() []string {
	return []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions}
}
func (r *proxyingREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, true, "" }

// Connect serves proxying/karmada/proxy/<path>.
func (r *proxyingREST) Connect(ctx context.Context, id string, _ runtime.Object, _ rest.Responder) (http.Handler, error) {
	info, ok := genericrequest.RequestInfoFrom(ctx)
	if id != "karmada" || !ok || len(info.Parts) < 3 || info.Parts[2] != "proxy" {
		return nil, apierrors.NewNotFound(searchv1alpha1.Resource("proxying"), id+": the proxy is proxying/karmada/proxy/<Kubernetes path>")
	}
	path := "/" + strings.Join(info.Parts[3:], "/")
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) { r.proxy.serve(w, req, path) }), nil
}

// minWatchTimeout is the shortest a watch from the cache lasts before the
// client is asked to watch again (randomized up to twice it), as the API
// server's --min-request-timeout.
const minWatchTimeout = 30 * time.Minute

func (p *fleetProxy) serve(w http.ResponseWriter, req *http.Request, path string) {
	fail := func(err error) {
		responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{}, w, req)
	}
	u, ok := genericrequest.UserFrom(req.Context())
	if !ok {
		fail(apierrors.NewUnauthorized("no user on the request"))
		return
	}
	native, err := nativeRequestInfo(req, path)
	if err != nil {
		fail(apierrors.NewBadRequest(err.Error()))
		return
	}
	if native.IsResourceRequest {
		gvr := schema.GroupVersionResource{Group: native.APIGroup, Version: native.APIVersion, Resource: native.Resource}
		if v, err := p.cache.Resource(gvr); err == nil {
			p.serveCached(w, req, path, native, v)
			return
		}
	}
	cfg := clientrest.CopyConfig(p.controlPlane)
	cfg.Impersonate = clientrest.ImpersonationConfig{UserName: u.GetName(), UID: u.GetUID(), Groups: u.GetGroups(), Extra: u.GetExtra()}
	klog.FromContext(req.Context()).V(4).Info("Proxying to the control plane", "path", path, "user", u.GetName())
	memberproxy.Forward(w, req, cfg, path, responder{target: "the control plane"})
}

// serveCached handles a request on a cached kind.
func (p *fleetProxy) serveCached(w http.ResponseWriter, req *http.Request, path string, native *genericrequest.RequestInfo, v *view) {
	fail := func(err error) {
		responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{}, w, req)
	}
	ctx := req.Context()
	u, _ := genericrequest.UserFrom(ctx)
	gr := v.gvr.GroupResource()
	if native.Subresource == "" && (native.Verb == "get" || native.Verb == "list" || native.Verb == "watch") {
		attrs := authorizer.AttributesRecord{User: u, Verb: native.Verb, Namespace: native.Namespace, APIGroup: native.APIGroup,
			APIVersion: native.APIVersion, Resource: native.Resource, Name: native.Name, ResourceRequest: true, Path: path}
		if decision, reason, err := p.authz.Authorize(ctx, attrs); decision != authorizer.DecisionAllow {
			if err != nil {
				reason = err.Error()
			}
			fail(responsewriters.ForbiddenStatusError(attrs, reason))
			return
		}
		store := &fleetStore{cache: p.cache, gvr: v.gvr, TableConvertor: newTableConvertor(gr)}
		scope := cacheScope(v, store)
		// A list asked as plain JSON (not a Table, not metadata) is written
		// from the cached bytes.
		store.rawJSON = native.Verb == "list" && wantsJSON(req, scope)
		req = req.WithContext(genericrequest.WithRequestInfo(ctx, native))
		if native.Verb == "get" {
			handlers.GetResource(store, scope).ServeHTTP(w, req)
		} else {
			handlers.ListResource(store, store, scope, native.Verb == "watch", minWatchTimeout).ServeHTTP(w, req)
		}
		return
	}
	if native.Name == "" {
		fail(&apierrors.StatusError{ErrStatus: metav1.Status{Status: metav1.StatusFailure, Code: http.StatusMethodNotAllowed,
			Reason: metav1.StatusReasonMethodNotAllowed, Details: &metav1.StatusDetails{Group: gr.Group, Kind: gr.Resource},
			Message: fmt.Sprintf("%s of %s through the proxy is not supported: it names no object, so no member cluster; create templates on the control plane, or go to one member through /apis/cluster.karmada.io/v1alpha1/clusters/<cluster>/proxy", native.Verb, gr)}})
		return
	}
	holder, _ := v.find(native.Namespace, native.Name)
	if holder == nil {
		fail(apierrors.NewNotFound(gr, native.Name))
		return
	}
	cluster := holder.cluster
	cfg, err := memberproxy.ImpersonatorConfig(ctx, p.reader, cluster)
	if err != nil {
		fail(apierrors.NewServiceUnavailable(err.Error()))
		return
	}
	cfg.Impersonate = clientrest.ImpersonationConfig{UserName: u.GetName(), Groups: memberproxy.ImpersonatedGroups(u.GetName(), u.GetGroups())}
	klog.FromContext(ctx).V(4).Info("Proxying to a member cluster", "cluster", cluster, "path", path, "user", u.GetName())
	memberproxy.Forward(w, req, cfg, path, responder{target: "cluster " + cluster})
}

// nativeRequestInfo reads the proxied path as the API server would read it
// as a request of its own (verb from the method, ?watch, the name).
func nativeRequestInfo(req *http.Request, path string) (*genericrequest.RequestInfo, error) {
	r := req.Clone(req.Context())
	r.URL.Path = path
	return nativeInfo.NewRequestInfo(r)
}

// cacheScope is how k8s.io/apiserver's handlers serve a cached resource:
// unstructured objects, encoded as they are (they already carry their
// apiVersion and kind), tables from tableConvertor.
func cacheScope(v *view, store *fleetStore) *handlers.RequestScope {
	return &handlers.RequestScope{
		Namer:            handlers.ContextBasedNaming{Namer: meta.NewAccessor(), ClusterScoped: !v.namespaced},
		Serializer:       asIsSerializer{unstructuredscheme.NewUnstructuredNegotiatedSerializer()},
		ParameterCodec:   parameterCodec,
		Creater:          unstructuredscheme.NewUnstructuredCreator(),
		Convertor:        asIsConvertor{},
		UnsafeConvertor:  asIsConvertor{},
		Defaulter:        unstructuredscheme.NewUnstructuredDefaulter(),
		Typer:            unstructuredscheme.NewUnstructuredObjectTyper(),
		TableConvertor:   store.TableConvertor,
		Resource:         v.gvr,
		Kind:             v.gvk,
		HubGroupVersion:  v.gvk.GroupVersion(),
		MetaGroupVersion: metav1.SchemeGroupVersion,
	}
}

// asIsSerializer encodes objects as they are: the cache holds each in its
// member's version already.
type asIsSerializer struct{ runtime.NegotiatedSerializer }

func (asIsSerializer) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return rawAwareEncoder{e}
}
func (asIsSerializer) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// asIsConvertor converts nothing, and lets a field selector name any field
// (the cache matches it by path).
type asIsConvertor struct{}

func (asIsConvertor) Convert(_, _, _ any) error {
	return fmt.Errorf("the search cache converts no object")
}
func (asIsConvertor) ConvertToVersion(in runtime.Object, _ runtime.GroupVersioner) (runtime.Object, error) {
	return in, nil
}
func (asIsConvertor) ConvertFieldLabel(_ schema.GroupVersionKind, label, value string) (string, string, error) {
	return label, value, nil
}

type responder struct{ target string }

func (r responder) Error(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(apierrors.NewServiceUnavailable(fmt.Sprintf("proxy to %s: %v", r.target, err)), codecs, schema.GroupVersion{}, w, req)
}
