package wirecodec

import (
	"bytes"
	"context"
	stdjson "encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/rest"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// server answers a list of Works in CBOR when the request accepts it and
// serveCBOR is set, else in JSON, and records the Accept header it got.
func server(t *testing.T, scheme *runtime.Scheme, serveCBOR bool, accept *string) *httptest.Server {
	list := &workv1alpha1.WorkList{Items: []workv1alpha1.Work{{ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "karmada-es-m1"}}}}
	list.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind("WorkList"))
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		*accept = r.Header.Get("Accept")
		var buf bytes.Buffer
		if serveCBOR && strings.Contains(*accept, "application/cbor") {
			w.Header().Set("Content-Type", "application/cbor")
			if err := cbor.NewSerializer(scheme, scheme).Encode(list, &buf); err != nil {
				t.Error(err)
			}
		} else {
			w.Header().Set("Content-Type", "application/json")
			if err := json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme, scheme, json.SerializerOptions{}).Encode(list, &buf); err != nil {
				t.Error(err)
			}
		}
		_, _ = w.Write(buf.Bytes())
	}))
}

func mapper() meta.RESTMapper {
	m := meta.NewDefaultRESTMapper(nil)
	m.Add(workv1alpha1.SchemeGroupVersion.WithKind("Work"), meta.RESTScopeNamespace)
	m.Add(appsv1.SchemeGroupVersion.WithKind("Deployment"), meta.RESTScopeNamespace)
	return m
}

func TestInformerListsKarmadaKindsInCBOR(t *testing.T) {
	t.Cleanup(keepClientGates(t))
	if err := SetClientGates(true); err != nil {
		t.Fatal(err)
	}
	if !clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR) {
		t.Fatal("SetClientGates(true) did not turn on client-go's ClientsAllowCBOR")
	}
	scheme := controlplane.NewScheme()
	for _, tt := range []struct {
		name      string
		serveCBOR bool
	}{{"an API server with CBOR", true}, {"an API server without CBOR answers JSON", false}} {
		t.Run(tt.name, func(t *testing.T) {
			var accept string
			srv := server(t, scheme, tt.serveCBOR, &accept)
			defer srv.Close()
			cfg := &rest.Config{Host: srv.URL}
			lw, err := cborListWatch(cfg, srv.Client(), scheme, cborCodecs(scheme), mapper(), &workv1alpha1.Work{}, map[string]bool{workv1alpha1.GroupName: true})
			if err != nil || lw == nil {
				t.Fatalf("cborListWatch = %v, %v; want a list-watch for Works", lw, err)
			}
			got, err := lw.(interface {
				ListWithContext(context.Context, metav1.ListOptions) (runtime.Object, error)
			}).ListWithContext(context.Background(), metav1.ListOptions{})
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if l, ok := got.(*workv1alpha1.WorkList); !ok || len(l.Items) != 1 || l.Items[0].Name != "w1" {
				t.Fatalf("list = %#v; want one Work w1", got)
			}
			if !strings.HasPrefix(accept, "application/cbor") {
				t.Errorf("Accept = %q; want CBOR first", accept)
			}
		})
	}
}

func TestInformerLeavesOtherKindsAlone(t *testing.T) {
	scheme := controlplane.NewScheme()
	lw, err := cborListWatch(&rest.Config{Host: "http://127.0.0.1:1"}, http.DefaultClient, scheme, cborCodecs(scheme), mapper(), &appsv1.Deployment{}, map[string]bool{workv1alpha1.GroupName: true})
	if err != nil || lw != nil {
		t.Fatalf("cborListWatch(Deployment) = %v, %v; want nil: only the named groups are replaced", lw, err)
	}
}

// The caches' CBOR decoder gives what kube's transcoding CBOR decoder gives,
// manifests and statuses in JSON, less managedFields.
func TestCacheCBORDecodesAsTranscodingLessManagedFields(t *testing.T) {
	scheme := controlplane.NewScheme()
	status := runtime.RawExtension{Raw: []byte(`{"readyReplicas":2}`)}
	fieldsV1 := &metav1.FieldsV1{}
	fieldsV1.SetRawBytes([]byte(`{"f:spec":{}}`))
	w := workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Name: "w1", Namespace: "karmada-es-m1", ManagedFields: []metav1.ManagedFieldsEntry{{
			Manager: "flotilla", Operation: metav1.ManagedFieldsOperationApply, FieldsType: "FieldsV1",
			FieldsV1: fieldsV1}}},
		Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{
			{RawExtension: runtime.RawExtension{Raw: []byte(`{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"},"data":{"a":"b"}}`)}}}}},
		Status: workv1alpha1.WorkStatus{ManifestStatuses: []workv1alpha1.ManifestStatus{{Status: &status}}},
	}
	list := &workv1alpha1.WorkList{Items: []workv1alpha1.Work{w, w}}
	list.SetGroupVersionKind(workv1alpha1.SchemeGroupVersion.WithKind("WorkList"))
	var buf bytes.Buffer
	if err := cbor.NewSerializer(scheme, scheme).Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	want, _, err := cbor.NewSerializer(scheme, scheme).Decode(buf.Bytes(), nil, &workv1alpha1.WorkList{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range want.(*workv1alpha1.WorkList).Items {
		want.(*workv1alpha1.WorkList).Items[i].ManagedFields = nil
	}
	info, ok := runtime.SerializerInfoForMediaType(cborCodecs(scheme).SupportedMediaTypes(), "application/cbor")
	if !ok {
		t.Fatal("no CBOR in the caches' codecs")
	}
	got, _, err := info.Serializer.Decode(buf.Bytes(), nil, &workv1alpha1.WorkList{})
	if err != nil {
		t.Fatal(err)
	}
	if !equality.Semantic.DeepEqual(got, want) {
		t.Fatalf("decoded\n%#v\nwant\n%#v", got, want)
	}
	m := got.(*workv1alpha1.WorkList).Items[1].Spec.Workload.Manifests[0].Raw
	if !stdjson.Valid(m) {
		t.Fatalf("manifest %q is not JSON", m)
	}
}

// keepClientGates returns a func putting back the client-go gates that
// SetClientGates changes.
func keepClientGates(t *testing.T) func() {
	t.Helper()
	cbor := clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR)
	list := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	return func() {
		_ = utilfeature.DefaultMutableFeatureGate.SetFromMap(map[string]bool{
			string(clientfeatures.ClientsAllowCBOR): cbor,
			string(clientfeatures.WatchListClient):  list,
		})
	}
}

func TestSetClientGatesListsFirst(t *testing.T) {
	t.Cleanup(keepClientGates(t))
	for _, allow := range []bool{false, true} {
		if err := SetClientGates(allow); err != nil {
			t.Fatal(err)
		}
		if got := clientfeatures.FeatureGates().Enabled(clientfeatures.ClientsAllowCBOR); got != allow {
			t.Errorf("SetClientGates(%v): ClientsAllowCBOR = %v", allow, got)
		}
		if clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient) {
			t.Errorf("SetClientGates(%v): WatchListClient still on", allow)
		}
	}
}

// TestCacheCBORTakesANumberForAQuantity decodes what the API server sends for
// a FederatedHPA whose averageValue was written as a bare number: a CBOR
// integer, which resource.Quantity's CBOR decoder refuses. The list decodes,
// through JSON, with the quantity and without managedFields.
func TestCacheCBORTakesANumberForAQuantity(t *testing.T) {
	scheme := controlplane.NewScheme()
	item := func(name string, value any) map[string]any {
		return map[string]any{
			"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
			"metadata": map[string]any{"name": name, "namespace": "cm",
				"managedFields": []any{map[string]any{"manager": "kubectl", "operation": "Apply"}}},
			"spec": map[string]any{
				"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
				"maxReplicas":    int64(10),
				"metrics": []any{map[string]any{"type": "Pods", "pods": map[string]any{
					"metric": map[string]any{"name": "http_requests"},
					"target": map[string]any{"type": "AverageValue", "averageValue": value}}}},
			},
		}
	}
	list := &unstructured.UnstructuredList{Object: map[string]any{
		"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPAList", "metadata": map[string]any{}}}
	list.Items = []unstructured.Unstructured{{Object: item("quoted", "10")}, {Object: item("bare", int64(10))}}
	var buf bytes.Buffer
	if err := cbor.NewSerializer(scheme, scheme).Encode(list, &buf); err != nil {
		t.Fatal(err)
	}
	if _, _, err := cbor.NewSerializer(scheme, scheme).Decode(buf.Bytes(), nil, &autoscalingv1alpha1.FederatedHPAList{}); err == nil {
		t.Fatal("kube's CBOR decoder took the bare number: the fallback is no longer needed")
	}
	info, _ := runtime.SerializerInfoForMediaType(cborCodecs(scheme).SupportedMediaTypes(), "application/cbor")
	got, _, err := info.Serializer.Decode(buf.Bytes(), nil, &autoscalingv1alpha1.FederatedHPAList{})
	if err != nil {
		t.Fatal(err)
	}
	items := got.(*autoscalingv1alpha1.FederatedHPAList).Items
	if len(items) != 2 {
		t.Fatalf("decoded %d items, want 2", len(items))
	}
	for _, h := range items {
		if q := h.Spec.Metrics[0].Pods.Target.AverageValue; q == nil || q.Value() != 10 {
			t.Errorf("%s: averageValue %v, want 10", h.Name, q)
		}
		if h.ManagedFields != nil {
			t.Errorf("%s: managedFields kept", h.Name)
		}
	}
}
