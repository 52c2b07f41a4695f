package wirecodec

import (
	"bytes"
	"encoding/json"
	"hash/fnv"
	"math/rand"
	"reflect"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	batchv1 "k8s.io/api/batch/v1"
	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/apitesting/fuzzer"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metafuzzer "k8s.io/apimachinery/pkg/apis/meta/fuzzer"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/kubernetes/scheme"
	"sigs.k8s.io/randfill"

	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// builtinKinds are the Kubernetes kinds Flotilla's controllers and member clients read.
var builtinKinds = []runtime.Object{
	&appsv1.Deployment{}, &appsv1.StatefulSet{}, &appsv1.DaemonSet{}, &appsv1.ReplicaSet{},
	&corev1.Service{}, &corev1.ConfigMap{}, &corev1.Secret{}, &corev1.Pod{}, &corev1.Node{},
	&corev1.Namespace{}, &corev1.PersistentVolumeClaim{}, &corev1.Event{}, &discoveryv1.EndpointSlice{},
	&batchv1.Job{}, &batchv1.CronJob{}, &networkingv1.Ingress{}, &coordinationv1.Lease{},
	&policyv1.PodDisruptionBudget{}, &autoscalingv2.HorizontalPodAutoscaler{},
}

// TestCBORDecodesAsJSON fills random objects of every Karmada kind in the controller
// manager's scheme and of the built-in kinds Flotilla reads, puts each in a list, and checks
// that the list served in CBOR and decoded by the caches' codecs (cborCodecs, through the
// client negotiator a REST client uses) equals the list served in JSON and decoded by the same
// codecs. Built-in kinds are served as the API server encodes typed objects. Karmada kinds are
// custom resources, served from their stored JSON, in which some integral and fractional
// quantities are bare numbers ("cpu": 1), as a user may write them.
//
// The caches drop managedFields on purpose (cacheCBOR); they are cleared from the JSON side
// before comparing. Nothing else is excluded.
func TestCBORDecodesAsJSON(t *testing.T) {
	s := controlplane.NewScheme()
	codecs := cborCodecs(s)
	iterations := 1000
	if testing.Short() {
		iterations = 5
	}
	var karmada []schema.GroupVersionKind
	for gvk, typ := range s.AllKnownTypes() {
		if strings.HasSuffix(gvk.Group, ".karmada.io") && !strings.HasSuffix(gvk.Kind, "List") &&
			strings.HasPrefix(typ.PkgPath(), "github.com/flotilla-io/flotilla/api/") {
			karmada = append(karmada, gvk)
		}
	}
	sort.Slice(karmada, func(i, j int) bool { return karmada[i].String() < karmada[j].String() })
	if len(karmada) < 15 {
		t.Fatalf("found %d Karmada kinds in the scheme", len(karmada))
	}
	kinds := map[schema.GroupVersionKind]bool{}
	for _, gvk := range karmada {
		kinds[gvk] = true
	}
	var all []schema.GroupVersionKind
	for _, obj := range builtinKinds {
		gvks, _, err := scheme.Scheme.ObjectKinds(obj)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, gvks[0])
	}
	all = append(all, karmada...)
	for _, gvk := range all {
		t.Run(gvk.Group+"/"+gvk.Kind, func(t *testing.T) {
			h := fnv.New64a()
			h.Write([]byte(gvk.String()))
			random := rand.New(rand.NewSource(int64(h.Sum64()) ^ time.Now().UnixNano()))
			filler := fuzzer.FuzzerFor(fuzzer.MergeFuzzerFuncs(metafuzzer.Funcs, wireFuzzerFuncs), random, serializer.NewCodecFactory(s)).NilChance(.1).NumElements(1, 2)
			for i := range iterations {
				obj, err := s.New(gvk)
				if err != nil {
					t.Fatal(err)
				}
				filler.Fill(obj)
				list, err := s.New(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
				if err != nil {
					t.Fatal(err)
				}
				if err := meta.SetList(list, []runtime.Object{obj}); err != nil {
					t.Fatal(err)
				}
				list.GetObjectKind().SetGroupVersionKind(gvk.GroupVersion().WithKind(gvk.Kind + "List"))
				jsonData, cborData := encodeBoth(t, s, list, kinds[gvk], random, reflect.TypeOf(obj).Elem())
				want := decode(t, codecs, gvk.GroupVersion(), runtime.ContentTypeJSON, jsonData, s, list)
				got := decode(t, codecs, gvk.GroupVersion(), runtime.ContentTypeCBOR, cborData, s, list)
				_ = meta.EachListItem(want, dropManagedFields)
				if !equality.Semantic.DeepEqual(want, got) {
					t.Fatalf("iteration %d: CBOR and JSON decode differently (-json +cbor):\n%s\nJSON served: %s",
						i, cmp.Diff(normalJSON(t, want), normalJSON(t, got)), jsonData)
				}
			}
		})
	}
}

// encodeBoth serves list as an API server would, in JSON and in CBOR: a custom resource from
// its stored JSON (unstructured content) with some quantities of item type itemType as bare
// numbers, any other kind as its typed object.
func encodeBoth(t *testing.T, s *runtime.Scheme, list runtime.Object, custom bool, random *rand.Rand, itemType reflect.Type) (jsonData, cborData []byte) {
	t.Helper()
	served := list
	if custom {
		data, err := runtime.Encode(jsonEncoder(s, false), list)
		if err != nil {
			t.Fatal(err)
		}
		u := &unstructured.UnstructuredList{}
		if err := u.UnmarshalJSON(data); err != nil {
			t.Fatal(err)
		}
		for i := range u.Items {
			u.Items[i].Object = bareQuantities(itemType, u.Items[i].Object, random).(map[string]any)
		}
		served = u
	}
	var j, c bytes.Buffer
	if err := jsonEncoder(s, custom).Encode(served, &j); err != nil {
		t.Fatal(err)
	}
	if err := cbor.NewSerializer(s, s).Encode(served, &c); err != nil {
		t.Fatal(err)
	}
	return j.Bytes(), c.Bytes()
}

func jsonEncoder(s *runtime.Scheme, custom bool) runtime.Encoder {
	if custom {
		return unstructured.UnstructuredJSONScheme
	}
	info, _ := runtime.SerializerInfoForMediaType(serializer.NewCodecFactory(s).SupportedMediaTypes(), runtime.ContentTypeJSON)
	return info.Serializer
}

// decode decodes data of media type mediaType into a new object like list, as a REST client
// with the caches' codecs does.
func decode(t *testing.T, codecs runtime.NegotiatedSerializer, gv schema.GroupVersion, mediaType string, data []byte, s *runtime.Scheme, list runtime.Object) runtime.Object {
	t.Helper()
	decoder, err := runtime.NewClientNegotiator(codecs, gv).Decoder(mediaType, nil)
	if err != nil {
		t.Fatal(err)
	}
	into, err := s.New(list.GetObjectKind().GroupVersionKind())
	if err != nil {
		t.Fatal(err)
	}
	out, _, err := decoder.Decode(data, nil, into)
	if err != nil {
		t.Fatalf("decode %s: %v\n%s", mediaType, err, data)
	}
	return out
}

// normalJSON is obj as JSON decoded into plain values, for a diff that ignores key order.
func normalJSON(t *testing.T, obj runtime.Object) any {
	t.Helper()
	data, err := json.Marshal(obj)
	if err != nil {
		t.Fatal(err)
	}
	var v any
	if err := json.Unmarshal(data, &v); err != nil {
		t.Fatal(err)
	}
	return v
}

var quantityType = reflect.TypeFor[resource.Quantity]()

// bareQuantities walks content, the JSON form of a value of Go type typ, and turns about half
// of the quantities in it into bare JSON numbers: integers when whole, floats otherwise.
func bareQuantities(typ reflect.Type, content any, random *rand.Rand) any {
	for typ.Kind() == reflect.Pointer {
		typ = typ.Elem()
	}
	switch v := content.(type) {
	case string:
		q, err := resource.ParseQuantity(v)
		if typ != quantityType || err != nil || random.Intn(2) == 0 {
			return v
		}
		if n, ok := q.AsInt64(); ok {
			return n
		}
		return q.AsApproximateFloat64()
	case []any:
		if typ.Kind() == reflect.Slice || typ.Kind() == reflect.Array {
			for i := range v {
				v[i] = bareQuantities(typ.Elem(), v[i], random)
			}
		}
	case map[string]any:
		switch typ.Kind() {
		case reflect.Map:
			for k := range v {
				v[k] = bareQuantities(typ.Elem(), v[k], random)
			}
		case reflect.Struct:
			for i := range typ.NumField() {
				f := typ.Field(i)
				name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
				switch {
				case name == "-" || !f.IsExported():
				case name == "" && f.Anonymous:
					bareQuantities(f.Type, v, random) // inlined
				case name != "":
					if inner, ok := v[name]; ok {
						v[name] = bareQuantities(f.Type, inner, random)
					}
				}
			}
		}
	}
	return content
}

// wireFuzzerFuncs make the values the generic fuzzer cannot: quantities of every format and
// size class (the generic ones are all small integers) and valid JSON for
// apiextensionsv1.JSON.
func wireFuzzerFuncs(serializer.CodecFactory) []any {
	return []any{
		func(q *resource.Quantity, c randfill.Continue) {
			n := c.Int63n(1 << 20)
			switch c.Intn(4) {
			case 0:
				*q = *resource.NewQuantity(n, resource.DecimalSI)
			case 1:
				*q = *resource.NewMilliQuantity(n, resource.DecimalSI)
			case 2:
				*q = *resource.NewQuantity(n<<uint(c.Intn(30)), resource.BinarySI)
			default:
				*q = *resource.NewScaledQuantity(n, resource.Scale(c.Intn(10)*3-9))
			}
		},
		func(j *apiextensionsv1.JSON, c randfill.Continue) {
			values := []any{c.String(0), c.Int63(), c.Bool(), map[string]any{c.String(0): []any{c.Int63n(100), nil}}}
			j.Raw, _ = json.Marshal(values[c.Intn(len(values))])
		},
	}
}
