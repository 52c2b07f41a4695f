package search

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
	"k8s.io/apiserver/pkg/endpoints/handlers/responsewriters"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/apiserver/pkg/warning"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// searchREST is the virtual resource search: GET
// /apis/search.karmada.io/v1alpha1/search/cache/<Kubernetes path> answers a
// get or a list of a cached kind from every member cache.
type searchREST struct{ cache *Cache }

var (
	_ rest.Storage              = &searchREST{}
	_ rest.Scoper               = &searchREST{}
	_ rest.Connecter            = &searchREST{}
	_ rest.SingularNameProvider = &searchREST{}
)

func (r *searchREST) New() runtime.Object                               { return &searchv1alpha1.Search{} }
func (r *searchREST) Destroy()                                          {}
func (r *searchREST) NamespaceScoped() bool                             { return false }
func (r *searchREST) GetSingularName() string                           { return "search" }
func (r *searchREST) ConnectMethods() []string                          { return []string{http.MethodGet} }
func (r *searchREST) NewConnectOptions() (runtime.Object, bool, string) { return nil, true, "" }

// Connect serves search/cache/<path>; "opensearch" (Karmada's other
// category) is refused, as Flotilla keeps no OpenSearch copy.
func (r *searchREST) Connect(ctx context.Context, id string, _ runtime.Object, _ rest.Responder) (http.Handler, error) {
	if id != "cache" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("search category %q is not served: use search/cache/<Kubernetes path>, for example search/cache/apis/apps/v1/deployments", id))
	}
	info, ok := genericrequest.RequestInfoFrom(ctx)
	if !ok || len(info.Parts) < 3 {
		return nil, apierrors.NewBadRequest("name a Kubernetes path after search/cache/, for example search/cache/api/v1/pods")
	}
	native, err := parseNativePath(info.Parts[2:])
	if err != nil {
		return nil, err
	}
	return http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.serve(w, req, native)
	}), nil
}

// nativeInfo reads a Kubernetes path as the API server does.
var nativeInfo = &genericrequest.RequestInfoFactory{APIPrefixes: sets.NewString("api", "apis"), GrouplessAPIPrefixes: sets.NewString("api")}

// parseNativePath reads a Kubernetes resource path (api/v1/namespaces/x/pods,
// apis/apps/v1/deployments/web, ...) as the API server would.
func parseNativePath(parts []string) (*genericrequest.RequestInfo, error) {
	req, _ := http.NewRequest(http.MethodGet, "/"+strings.Join(parts, "/"), nil)
	info, err := nativeInfo.NewRequestInfo(req)
	if err != nil {
		return nil, apierrors.NewBadRequest(err.Error())
	}
	if !info.IsResourceRequest || info.Resource == "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("%s is not a Kubernetes resource path: use api/v1/<resource> or apis/<group>/<version>/<resource>", strings.Join(parts, "/")))
	}
	if info.Subresource != "" {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("the search cache serves objects, not their subresource %q", info.Subresource))
	}
	return info, nil
}

func (r *searchREST) serve(w http.ResponseWriter, req *http.Request, native *genericrequest.RequestInfo) {
	gvr := schema.GroupVersionResource{Group: native.APIGroup, Version: native.APIVersion, Resource: native.Resource}
	v, err := r.cache.Resource(gvr)
	if err != nil {
		writeError(w, req, err)
		return
	}
	addWarnings(req.Context(), v.skipped)
	addWarnings(req.Context(), v.uncovered(native.Namespace))
	var out runtime.Object
	if native.Name != "" {
		var obj any
		if obj, err = v.get(native.Namespace, native.Name); err == nil {
			out = &unstructured.Unstructured{Object: obj.(map[string]any)}
		}
	} else {
		var lq *listQuery
		if lq, err = parseListQuery(native.Namespace, req.URL.Query()); err == nil {
			if wantsJSON(req, negotiation.DefaultEndpointRestrictions) {
				// The cached JSON as it is, no decoding: the common case.
				responsewriters.SerializeObject(runtime.ContentTypeJSON, rawListEncoder{}, w, req, http.StatusOK, newRawList(v, v.collect(lq)))
				return
			}
			out = v.list(lq)
		}
	}
	if err != nil {
		writeError(w, req, err)
		return
	}
	// Negotiated as the API server answers: JSON or YAML, gzip when the
	// client accepts it (a list of 10,000 objects is tens of megabytes).
	responsewriters.WriteObjectNegotiated(asIsSerializer{unstructuredscheme.NewUnstructuredNegotiatedSerializer()},
		negotiation.DefaultEndpointRestrictions, v.gvk.GroupVersion(), w, req, http.StatusOK, out, false)
}

// addWarnings sends each message as a Warning header of the answer
// (kubectl prints them).
func addWarnings(ctx context.Context, msgs []string) {
	for _, m := range msgs {
		warning.AddWarning(ctx, "", m)
	}
}

func writeError(w http.ResponseWriter, req *http.Request, err error) {
	responsewriters.ErrorNegotiated(err, codecs, schema.GroupVersion{Group: searchv1alpha1.GroupName, Version: "v1alpha1"}, w, req)
}

// get returns the object of that name from the first cluster (by name) that
// holds it.
func (v *view) get(namespace, name string) (any, error) {
	if mc, obj := v.find(namespace, name); mc != nil {
		return annotated(mc, obj), nil
	}
	return nil, apierrors.NewNotFound(v.gvr.GroupResource(), name)
}

// uncovered says which clusters' caches leave namespace out (their
// ResourceRegistries name other namespaces), as one warning, or nil. A
// request over all namespaces ("") is answered with what is cached.
func (v *view) uncovered(namespace string) []string {
	if namespace == "" {
		return nil
	}
	var clusters []string
	served := sets.New[string]()
	for _, mc := range v.caches {
		switch {
		case mc.allowed != nil && !mc.allowed.Has(namespace):
			served.Insert(sets.List(mc.allowed)...)
		case mc.namespace != "" && mc.namespace != namespace:
			served.Insert(mc.namespace)
		default:
			continue
		}
		clusters = append(clusters, mc.cluster)
	}
	if len(clusters) == 0 {
		return nil
	}
	return []string{fmt.Sprintf("%s in namespace %s are not cached from %s: their ResourceRegistries cache namespace %s only; add %s to one to see them here",
		v.gvr.Resource, namespace, strings.Join(clusters, ", "), strings.Join(sets.List(served), ", "), namespace)}
}

// find returns the first member cache (by cluster name) that holds the
// object, and the object; nil when none does.
func (v *view) find(namespace, name string) (*memberCache, *cachedObject) {
	key := name
	if namespace != "" {
		key = namespace + "/" + name
	}
	for _, mc := range v.caches {
		if mc.allowed != nil && !mc.allowed.Has(namespace) {
			continue
		}
		if obj, ok, _ := mc.informer.GetStore().GetByKey(key); ok {
			if o, ok := obj.(*cachedObject); ok {
				return mc, o
			}
		}
	}
	return nil, nil
}

// listContinue is a search-cache continue token: where the previous page
// ended (cluster, then namespace/name key), base64url of its JSON.
type listContinue struct {
	Cluster string `json:"cluster"`
	Key     string `json:"key"`
}

// listQuery is what a list asks: a namespace ("" for all), selectors, a
// page size (0 for all) and where the previous page ended.
type listQuery struct {
	namespace string
	labels    labels.Selector
	fields    fields.Selector
	limit     int64
	from      *listContinue
}

// parseListQuery reads a list's query parameters; errors are BadRequests.
func parseListQuery(namespace string, q url.Values) (*listQuery, error) {
	lq := &listQuery{namespace: namespace}
	var err error
	if lq.labels, err = labels.Parse(q.Get("labelSelector")); err != nil {
		return nil, apierrors.NewBadRequest("labelSelector: " + err.Error())
	}
	if lq.fields, err = fields.ParseSelector(q.Get("fieldSelector")); err != nil {
		return nil, apierrors.NewBadRequest("fieldSelector: " + err.Error())
	}
	if l := q.Get("limit"); l != "" {
		if lq.limit, err = strconv.ParseInt(l, 10, 64); err != nil || lq.limit < 0 {
			return nil, apierrors.NewBadRequest("limit must be a non-negative integer")
		}
	}
	if lq.from, err = decodeContinue(q.Get("continue")); err != nil {
		return nil, err
	}
	return lq, nil
}

func decodeContinue(c string) (*listContinue, error) {
	if c == "" {
		return nil, nil
	}
	from := &listContinue{}
	data, err := base64.RawURLEncoding.DecodeString(c)
	if err == nil {
		err = json.Unmarshal(data, from)
	}
	if err != nil {
		return nil, apierrors.NewBadRequest("continue: not a token this server returned; list again without it")
	}
	return from, nil
}

// matches says whether a cached object of mc is in the query's answer. It
// returns the object decoded when a field selector needed it, else nil.
func (lq *listQuery) matches(mc *memberCache, o *cachedObject) (bool, map[string]any) {
	if lq.namespace != "" && o.Namespace != lq.namespace {
		return false, nil
	}
	if mc.allowed != nil && !mc.allowed.Has(o.Namespace) {
		return false, nil
	}
	if lq.labels != nil && !lq.labels.Matches(labels.Set(o.Labels)) {
		return false, nil
	}
	if lq.fields == nil || lq.fields.Empty() {
		return true, nil
	}
	f := &fieldsOf{o: o}
	return lq.fields.Matches(f), f.decoded
}

// listed is one item of a list: the cached object, its cache, and the
// object decoded if a field selector needed it.
type listed struct {
	mc      *memberCache
	o       *cachedObject
	decoded map[string]any
}

// listResult is what a list found: the items in order, the multi-cluster
// resourceVersion and the continue token ("" on the last page).
type listResult struct {
	items           []listed
	resourceVersion string
	continueToken   string
}

// collect answers a list: items of every cluster in (cluster, namespace,
// name) order, filtered by namespace and the label and field selectors, cut
// by limit, with a continue token. Its resourceVersion is Karmada's
// multi-cluster form: base64url (no padding) of
// {"<cluster>":"<resourceVersion>",...}.
func (v *view) collect(lq *listQuery) listResult {
	rvs := map[string]string{}
	var out listResult
	var next *listContinue
	var last listContinue // the last item taken
	from := lq.from
	for _, mc := range v.caches {
		rvs[mc.cluster] = mc.informer.LastSyncResourceVersion()
		if next != nil || from != nil && mc.cluster < from.Cluster {
			continue
		}
		keys := mc.informer.GetStore().ListKeys()
		sort.Strings(keys)
		for _, k := range keys {
			if from != nil && mc.cluster == from.Cluster && k <= from.Key {
				continue
			}
			obj, ok, _ := mc.informer.GetStore().GetByKey(k)
			o, isCached := obj.(*cachedObject)
			if !ok || !isCached {
				continue
			}
			match, decoded := lq.matches(mc, o)
			if !match {
				continue
			}
			if lq.limit > 0 && int64(len(out.items)) == lq.limit {
				next = &last
				break
			}
			out.items = append(out.items, listed{mc: mc, o: o, decoded: decoded})
			last = listContinue{Cluster: mc.cluster, Key: k}
		}
	}
	out.resourceVersion = multiClusterVersion(rvs)
	if next != nil {
		data, _ := json.Marshal(next)
		out.continueToken = base64.RawURLEncoding.EncodeToString(data)
	}
	return out
}

// list is collect's answer decoded: a <Kind>List of the items, each
// annotated with its cluster.
func (v *view) list(lq *listQuery) *unstructured.UnstructuredList {
	return newRawList(v, v.collect(lq)).decoded()
}

// multiClusterVersion is Karmada's resourceVersion of an answer built from
// several clusters: base64url (no padding) of the JSON object of each
// cluster's resourceVersion, keys sorted.
func multiClusterVersion(rvs map[string]string) string {
	data, _ := json.Marshal(rvs) // maps marshal with sorted keys
	return base64.RawURLEncoding.EncodeToString(data)
}
