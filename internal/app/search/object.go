package search

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/apiserver/pkg/endpoints/handlers/negotiation"
)

// cachedObject is how a member cache holds an object: the metadata every
// request reads (namespace, name, labels, resourceVersion) decoded, and the
// whole object as its JSON, decoded only when it is served. An object kept
// so takes a fraction of the memory of its decoded map (bench/README.md,
// "Search and the fleet proxy", gives the figure per 10,000).
type cachedObject struct {
	metav1.ObjectMeta // Namespace, Name, Labels and ResourceVersion only
	raw               []byte
}

var _ runtime.Object = &cachedObject{}

func (o *cachedObject) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the metadata; raw is shared, as nothing writes it.
func (o *cachedObject) DeepCopyObject() runtime.Object {
	return &cachedObject{ObjectMeta: *o.ObjectMeta.DeepCopy(), raw: o.raw}
}

// compactFor returns the informer transform of cluster's member caches: it
// drops managedFields (a large share of most objects, hidden by kubectl by
// default), puts the cluster in the annotation
// resource.karmada.io/cached-from-cluster, and keeps the object as a
// cachedObject whose JSON is served as it is. It returns anything else
// unchanged.
func compactFor(cluster string) func(any) (any, error) {
	return func(obj any) (any, error) {
		u, ok := obj.(*unstructured.Unstructured)
		if !ok {
			return obj, nil
		}
		unstructured.RemoveNestedField(u.Object, "metadata", "managedFields")
		withCluster(u.Object, cluster)
		raw, err := json.Marshal(u.Object)
		if err != nil {
			return nil, err
		}
		return &cachedObject{
			ObjectMeta: metav1.ObjectMeta{Namespace: u.GetNamespace(), Name: u.GetName(), Labels: u.GetLabels(), ResourceVersion: u.GetResourceVersion()},
			raw:        raw,
		}, nil
	}
}

// decode returns the object as a fresh map the caller may change. It fails
// only if raw is not the JSON compact wrote.
func (o *cachedObject) decode() (map[string]any, error) {
	out := map[string]any{}
	// utiljson keeps integers as int64, as the unstructured decoder does.
	err := utiljson.Unmarshal(o.raw, &out)
	return out, err
}

// annotated decodes a cached object of mc, which carries the cluster it came
// from in its annotations (resource.karmada.io/cached-from-cluster). An
// object that cannot be decoded is served as its metadata alone.
func annotated(mc *memberCache, o *cachedObject) map[string]any {
	obj, err := o.decode()
	if err == nil {
		return obj // compactFor put the annotation in
	}
	obj = map[string]any{"apiVersion": mc.gvk.GroupVersion().String(), "kind": mc.gvk.Kind}
	u := &unstructured.Unstructured{Object: obj}
	u.SetNamespace(o.Namespace)
	u.SetName(o.Name)
	u.SetLabels(o.Labels)
	u.SetResourceVersion(o.ResourceVersion)
	return withCluster(obj, mc.cluster)
}

// annotatedOr is annotated, reusing decoded (o's map, already decoded for a
// field selector) when it is not nil.
func annotatedOr(mc *memberCache, o *cachedObject, decoded map[string]any) map[string]any {
	if decoded != nil {
		return decoded // decoded from the cached JSON, annotation included
	}
	return annotated(mc, o)
}

// withCluster sets the cached-from-cluster annotation on obj and returns it.
func withCluster(obj map[string]any, cluster string) map[string]any {
	md, _ := obj["metadata"].(map[string]any)
	if md == nil {
		md = map[string]any{}
		obj["metadata"] = md
	}
	ann, _ := md["annotations"].(map[string]any)
	if ann == nil {
		ann = map[string]any{}
		md["annotations"] = ann
	}
	ann[CachedFromClusterAnnotation] = cluster
	return obj
}

// fieldsOf lets a field selector read any field of a cached object by its
// dotted path (metadata.name, spec.nodeName, status.phase, ...), as a
// string. It decodes the object only for a field outside its kept metadata,
// and keeps the decoded map for the answer.
type fieldsOf struct {
	o       *cachedObject
	decoded map[string]any
}

func (f *fieldsOf) Has(field string) bool {
	_, ok := f.lookup(field)
	return ok
}

func (f *fieldsOf) Get(field string) string {
	s, _ := f.lookup(field)
	return s
}

func (f *fieldsOf) lookup(field string) (string, bool) {
	switch field {
	case "metadata.name":
		return f.o.Name, true
	case "metadata.namespace":
		return f.o.Namespace, true
	}
	if f.decoded == nil {
		m, err := f.o.decode()
		if err != nil {
			return "", false
		}
		f.decoded = m
	}
	v, ok, err := unstructured.NestedFieldNoCopy(f.decoded, strings.Split(field, ".")...)
	if !ok || err != nil {
		return "", false
	}
	switch t := v.(type) {
	case string:
		return t, true
	case map[string]any, []any:
		return "", false
	default:
		return fmt.Sprint(t), true
	}
}

var _ fields.Fields = &fieldsOf{}

// rawList is a list answer whose items are written as the cache holds them.
type rawList struct {
	apiVersion, kind string
	result           listResult
}

func newRawList(v *view, r listResult) *rawList {
	return &rawList{apiVersion: v.gvk.GroupVersion().String(), kind: v.gvk.Kind + "List", result: r}
}

func (l *rawList) GetObjectKind() schema.ObjectKind { return schema.EmptyObjectKind }

// DeepCopyObject copies the item slice; the items' JSON is never written.
func (l *rawList) DeepCopyObject() runtime.Object {
	c := *l
	c.result.items = slices.Clone(l.result.items)
	return &c
}

// rawListEncoder writes a rawList as JSON: the list's kind and metadata,
// then each item's cached JSON, with no decoding and no encoding of items.
type rawListEncoder struct{}

func (rawListEncoder) Identifier() runtime.Identifier { return "flotilla-search-raw-list" }

func (rawListEncoder) Encode(obj runtime.Object, w io.Writer) error {
	l, ok := obj.(*rawList)
	if !ok {
		return fmt.Errorf("the raw list encoder writes lists of the search cache, not %T", obj)
	}
	head := map[string]any{"apiVersion": l.apiVersion, "kind": l.kind, "metadata": map[string]any{"resourceVersion": l.result.resourceVersion}}
	if l.result.continueToken != "" {
		head["metadata"].(map[string]any)["continue"] = l.result.continueToken
	}
	data, err := json.Marshal(head)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 64<<10)
	// {"apiVersion":…,"kind":…,"metadata":{…}  +  ,"items":[…]}
	_, _ = bw.Write(data[:len(data)-1])
	_, _ = bw.WriteString(`,"items":[`)
	for i, it := range l.result.items {
		if i > 0 {
			_ = bw.WriteByte(',')
		}
		_, _ = bw.Write(it.o.raw)
	}
	_, _ = bw.WriteString("]}\n")
	return bw.Flush()
}

// rawAwareEncoder is the proxy's encoder: a rawList as its cached JSON when
// the encoder is plain JSON, decoded first for any other; anything else as
// the wrapped encoder writes it.
type rawAwareEncoder struct{ runtime.Encoder }

func (e rawAwareEncoder) Encode(obj runtime.Object, w io.Writer) error {
	l, ok := obj.(*rawList)
	if !ok {
		return e.Encoder.Encode(obj, w)
	}
	if id := string(e.Identifier()); strings.Contains(id, `"name":"json"`) && strings.Contains(id, `"pretty":"false"`) && strings.Contains(id, `"yaml":"false"`) {
		return rawListEncoder{}.Encode(l, w)
	}
	return e.Encoder.Encode(l.decoded(), w)
}

// decoded is the list with its items decoded.
func (l *rawList) decoded() *unstructured.UnstructuredList {
	out := &unstructured.UnstructuredList{Object: map[string]any{}}
	out.SetAPIVersion(l.apiVersion)
	out.SetKind(l.kind)
	out.SetResourceVersion(l.result.resourceVersion)
	if l.result.continueToken != "" {
		out.SetContinue(l.result.continueToken)
	}
	out.Items = make([]unstructured.Unstructured, 0, len(l.result.items))
	for _, it := range l.result.items {
		out.Items = append(out.Items, unstructured.Unstructured{Object: annotatedOr(it.mc, it.o, it.decoded)})
	}
	return out
}

// wantsJSON says whether the request negotiates plain JSON (not YAML, not
// a Table or PartialObjectMetadata, not pretty-printed), which a rawList
// answers as it is.
//
// restrictions are the endpoint's: those of the handler that answers, so
// that a Table it would serve is seen here as a Table.
func wantsJSON(req *http.Request, restrictions negotiation.EndpointRestrictions) bool {
	opts, info, err := negotiation.NegotiateOutputMediaType(req, unstructuredscheme.NewUnstructuredNegotiatedSerializer(), restrictions)
	return err == nil && info.MediaType == runtime.ContentTypeJSON && opts.Convert == nil && !opts.Pretty && req.URL.Query().Get("pretty") != "true"
}
