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
	"net/http"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
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

// AllowCBOR sets client-go's ClientsAllowCBOR for this process (Flotilla's
// gate of the same name, on by default): on, clients that ask for CBOR (the
// dynamic client, and NewInformerFunc's) accept it before JSON. Request
// bodies stay JSON: client-go's ClientsPreferCBOR is left off, since it makes
// CBOR the default Accept of every client, the typed ones included, whose
// codecs cannot decode it. Flotilla's binary links kube-apiserver, whose init
// makes client-go read its gates from the process's component-base gate, so
// that gate is the one set. Call it before the first client is made.
func AllowCBOR(on bool) error {
	return utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{string(clientfeatures.ClientsAllowCBOR): on})
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
func cborCodecs(scheme *runtime.Scheme) runtime.NegotiatedSerializer {
	return serializer.WithoutConversionCodecFactory{
		CodecFactory: serializer.NewCodecFactory(scheme, serializer.WithSerializer(cbor.NewSerializerInfo))}
}
