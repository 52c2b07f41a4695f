// Package wirecodec chooses the encoding Flotilla's clients read objects in.
//
// JSON is the API servers' default and costs most of a restart's CPU at
// scale: every object of every informer's first list is encoded by the API
// server and decoded by the client. CBOR (KEP-4222: kube-apiserver's
// CBORServingAndStorage gate, client-go's ClientsAllowCBOR) carries the same
// objects in a binary form that is several times cheaper at both ends. A
// client that allows CBOR still accepts JSON, so an API server without CBOR
// answers as before.
package wirecodec

import (
	"context"
	"fmt"
	"net/http"
	"reflect"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	kjson "k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// AcceptCBOR is the Accept header of a client that prefers CBOR and takes
// JSON from API servers without it.
const AcceptCBOR = "application/cbor;q=1,application/json;q=0.9"

// SetClientGates sets the client-go gates of this process's clients. Call it
// once, before the first client or informer is made. Flotilla's binary links
// kube-apiserver, whose init makes client-go read its gates from the
// process's component-base gate, so that gate is the one set.
//
//   - ClientsAllowCBOR takes allowCBOR (Flotilla's gate of the same name, on
//     by default): on, clients that ask for CBOR (the dynamic client, and
//     NewInformerFunc's) accept it before JSON. Request bodies stay JSON:
//     ClientsPreferCBOR is left off, since it makes CBOR the default Accept
//     of every client, the typed ones included, whose codecs cannot decode it.
//   - WatchListClient is turned off (on by default since Kubernetes 1.35):
//     informers start with a list, not a watch that streams the initial
//     objects. Measured on a controller manager restarting with 30,000
//     templates (90,000 Works) on 2 cores: streaming, the API server copies
//     every object before sending it as its own event and the manager
//     decodes 150,000 events; as lists, the manager took 35 s of CPU instead
//     of 57-63 s and was ready 46 s after it started instead of 58-85 s, its
//     memory unchanged.
//
// Errors: the component-base gate refuses the values (not expected: both
// gates are registered by client-go).
func SetClientGates(allowCBOR bool) error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
		string(clientfeatures.ClientsAllowCBOR): allowCBOR,
		string(clientfeatures.WatchListClient):  false,
	})
}

// NewInformerFunc returns a controller-runtime cache.Options.NewInformer
// that lists and watches the structured types of the given API groups with a
// client accepting CBOR, when ClientsAllowCBOR is on (off, it changes
// nothing): controller-runtime builds its structured clients with JSON and
// protobuf codecs only. Types of other groups, and types the mapper cannot
// map, keep controller-runtime's list and watch. The replacement lists every
// namespace with no selector, so give it only groups whose types the cache
// has no ByObject or default-namespace restriction for.
func NewInformerFunc(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, mapper meta.RESTMapper, groups ...string) func(toolscache.ListerWatcher, runtime.Object, time.Duration, toolscache.Indexers) toolscache.SharedIndexInformer {
	in := map[string]bool{}
	for _, g := range groups {
		in[g] = true
	}
	codecs := cborCodecs(scheme)
	return func(lw toolscache.ListerWatcher, obj runtime.Object, resync time.Duration, indexers toolscache.Indexers) toolscache.SharedIndexInformer {
		if clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR) {
			if own, err := cborListWatch(cfg, httpClient, scheme, codecs, mapper, obj, in); err == nil && own != nil {
				lw = own
			}
		}
		return toolscache.NewSharedIndexInformer(lw, obj, resync, indexers)
	}
}

// cborListWatch is a list-watch of obj's type in every namespace through a
// client that accepts CBOR, or nil when obj's group is not in groups.
// Errors: obj's kind is not in scheme, or mapper cannot map it.
func cborListWatch(cfg *rest.Config, httpClient *http.Client, scheme *runtime.Scheme, codecs runtime.NegotiatedSerializer, mapper meta.RESTMapper, obj runtime.Object, groups map[string]bool) (toolscache.ListerWatcher, error) {
	gvk, err := apiutil.GVKForObject(obj, scheme)
	if err != nil || !groups[gvk.Group] {
		return nil, err
	}
	mapping, err := mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return nil, err
	}
	listObj, err := scheme.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
	if err != nil {
		return nil, err
	}
	c := rest.CopyConfig(cfg)
	gv := gvk.GroupVersion()
	c.GroupVersion, c.APIPath = &gv, "/apis"
	if gvk.Group == "" {
		c.APIPath = "/api"
	}
	c.AcceptContentTypes = AcceptCBOR
	c.NegotiatedSerializer = codecs
	if c.UserAgent == "" {
		c.UserAgent = rest.DefaultKubernetesUserAgent()
	}
	rc, err := rest.RESTClientForConfigAndClient(c, httpClient)
	if err != nil {
		return nil, err
	}
	params, resource := runtime.NewParameterCodec(scheme), mapping.Resource.Resource
	return &toolscache.ListWatch{
		ListWithContextFunc: func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error) {
			res := listObj.DeepCopyObject()
			return res, rc.Get().Resource(resource).VersionedParams(&opts, params).Do(ctx).Into(res)
		},
		WatchFuncWithContext: func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error) {
			opts.Watch = true
			return rc.Get().Resource(resource).VersionedParams(&opts, params).Watch(ctx)
		},
	}, nil
}

// cborCodecs are scheme's codecs with CBOR beside JSON, YAML and protobuf,
// decoding without conversion as controller-runtime's structured clients do.
// Their CBOR decoder is cacheCBOR: only for the caches, which drop
// managedFields.
func cborCodecs(scheme *runtime.Scheme) runtime.NegotiatedSerializer {
	info := func(creater runtime.ObjectCreater, typer runtime.ObjectTyper) runtime.SerializerInfo {
		i := cbor.NewSerializerInfo(creater, typer)
		i.Serializer = cacheCBOR{
			Serializer: cbor.NewSerializer(creater, typer, cbor.Transcode(false)),
			json:       kjson.NewSerializerWithOptions(kjson.DefaultMetaFactory, creater, typer, kjson.SerializerOptions{}),
		}
		return i
	}
	return serializer.WithoutConversionCodecFactory{
		CodecFactory: serializer.NewCodecFactory(scheme, serializer.WithSerializer(info))}
}

// cacheCBOR decodes CBOR as kube's CBOR serializer does by default, except
// that it drops managedFields instead of turning their CBOR into JSON (at
// 30,000 templates, about a twelfth of a restart's CPU in the controller
// manager): it is for informers whose cache drops them anyway
// (TransformStripManagedFields). The raw fields left (RawExtension: Work
// manifests and statuses, aggregated statuses) are turned into JSON, so
// readers see the same bytes as from a JSON API server.
//
// An object CBOR cannot decode into its Go type, but JSON can, is decoded
// through JSON: a custom resource's int-or-string quantity written as a bare
// number (a FederatedHPA's averageValue: 10, a Cluster's resource model
// bounds) comes from the API server as a CBOR integer, which
// resource.Quantity's CBOR decoder refuses while its JSON decoder takes it.
// Without this, one such object failed its kind's whole list, and the
// informer never synced.
type cacheCBOR struct {
	runtime.Serializer
	json runtime.Serializer
}

func (c cacheCBOR) Decode(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	obj, actual, err := c.Serializer.Decode(data, gvk, into)
	if err != nil && !runtime.IsStrictDecodingError(err) && into != nil {
		if obj, actual, jerr := c.viaJSON(data, gvk, into); jerr == nil {
			return obj, actual, nil
		}
		return obj, actual, err
	}
	if obj == nil || err != nil && !runtime.IsStrictDecodingError(err) {
		return obj, actual, err
	}
	if meta.IsListType(obj) {
		_ = meta.EachListItem(obj, dropManagedFields)
	} else {
		_ = dropManagedFields(obj)
	}
	if terr := rawToJSON(reflect.ValueOf(obj)); terr != nil {
		return nil, actual, terr
	}
	return obj, actual, err
}

// viaJSON decodes CBOR data into into by way of JSON: first into
// unstructured content (which takes any well-formed object), then that
// content, as JSON, into into. The managedFields are dropped as Decode does.
// Errors: data is not a CBOR object, or its JSON does not decode into into.
func (c cacheCBOR) viaJSON(data []byte, gvk *schema.GroupVersionKind, into runtime.Object) (runtime.Object, *schema.GroupVersionKind, error) {
	var u runtime.Unstructured = &unstructured.Unstructured{}
	if meta.IsListType(into) {
		u = &unstructured.UnstructuredList{}
	}
	if _, _, err := c.Serializer.Decode(data, gvk, u); err != nil {
		return nil, nil, err
	}
	if l, ok := u.(*unstructured.UnstructuredList); ok {
		_ = l.EachListItem(dropManagedFields)
	} else {
		_ = dropManagedFields(u)
	}
	j, err := runtime.Encode(unstructured.UnstructuredJSONScheme, u)
	if err != nil {
		return nil, nil, err
	}
	// The failed CBOR decode may have filled part of into.
	if v := reflect.ValueOf(into); v.Kind() == reflect.Pointer && !v.IsNil() {
		v.Elem().SetZero()
	}
	return c.json.Decode(j, gvk, into)
}

// dropManagedFields clears o's managedFields; it never fails (the error is
// for meta.EachListItem).
func dropManagedFields(o runtime.Object) error {
	if a, err := meta.Accessor(o); err == nil {
		a.SetManagedFields(nil)
	}
	return nil
}

// rawWalks caches, per Go type, how to reach the RawExtensions inside a
// value of it; a nil entry means it holds none. Entries are filled under
// the lock; a type being filled (a recursive type) is already present, so
// a walk of it goes through the pointer once filled.
var rawWalks = struct {
	sync.Mutex
	m map[reflect.Type]*func(reflect.Value) error
}{m: map[reflect.Type]*func(reflect.Value) error{}}

// rawToJSON turns the CBOR bytes of every addressable RawExtension reachable
// from v into JSON, as kube's CBOR serializer does when it transcodes.
// Errors: a RawExtension's bytes are not valid CBOR.
func rawToJSON(v reflect.Value) error {
	if !v.IsValid() {
		return nil
	}
	rawWalks.Lock()
	w := rawWalkLocked(v.Type())
	rawWalks.Unlock()
	return call(w, v)
}

func call(w *func(reflect.Value) error, v reflect.Value) error {
	if w == nil || *w == nil {
		return nil
	}
	return (*w)(v)
}

var rawExtensionType = reflect.TypeFor[runtime.RawExtension]()

func rawWalkLocked(t reflect.Type) *func(reflect.Value) error {
	if w, ok := rawWalks.m[t]; ok {
		return w
	}
	w := new(func(reflect.Value) error)
	rawWalks.m[t] = w
	var fn func(reflect.Value) error
	switch t.Kind() {
	case reflect.Struct:
		if t == rawExtensionType {
			fn = func(v reflect.Value) error {
				if !v.CanAddr() {
					return nil
				}
				re := v.Addr().Interface().(*runtime.RawExtension)
				if re.Raw == nil {
					return nil
				}
				j, err := re.MarshalJSON()
				if err != nil {
					return fmt.Errorf("turn a raw field's CBOR into JSON: %w", err)
				}
				re.Raw = j
				return nil
			}
			break
		}
		type field struct {
			i int
			w *func(reflect.Value) error
		}
		var fields []field
		for i := range t.NumField() {
			if fw := rawWalkLocked(t.Field(i).Type); fw != nil {
				fields = append(fields, field{i, fw})
			}
		}
		if len(fields) > 0 {
			fn = func(v reflect.Value) error {
				for _, f := range fields {
					if err := call(f.w, v.Field(f.i)); err != nil {
						return err
					}
				}
				return nil
			}
		}
	case reflect.Pointer:
		if ew := rawWalkLocked(t.Elem()); ew != nil {
			fn = func(v reflect.Value) error {
				if v.IsNil() {
					return nil
				}
				return call(ew, v.Elem())
			}
		}
	case reflect.Slice, reflect.Array:
		if ew := rawWalkLocked(t.Elem()); ew != nil {
			fn = func(v reflect.Value) error {
				for i := range v.Len() {
					if err := call(ew, v.Index(i)); err != nil {
						return err
					}
				}
				return nil
			}
		}
	case reflect.Map:
		if ew := rawWalkLocked(t.Elem()); ew != nil {
			fn = func(v reflect.Value) error {
				for it := v.MapRange(); it.Next(); {
					if err := call(ew, it.Value()); err != nil {
						return err
					}
				}
				return nil
			}
		}
	case reflect.Interface:
		fn = func(v reflect.Value) error {
			if v.IsNil() {
				return nil
			}
			return rawToJSON(v.Elem())
		}
	}
	if fn == nil {
		rawWalks.m[t] = nil
		return nil
	}
	*w = fn
	return w
}
