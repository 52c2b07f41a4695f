package search

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/fields"
	utiljson "k8s.io/apimachinery/pkg/util/json"
	"k8s.io/component-base/metrics/testutil"
	"sigs.k8s.io/yaml"
)

func TestCompactKeepsTheObjectWithoutManagedFields(t *testing.T) {
	u := deployment("shop", "web", map[string]string{"app": "web"}, 3)
	u.SetResourceVersion("42")
	_ = unstructured.SetNestedField(u.Object, "Running", "status", "phase")
	_ = unstructured.SetNestedSlice(u.Object, []any{map[string]any{"manager": "kubectl"}}, "metadata", "managedFields")
	c, err := compactFor("member1")(u)
	if err != nil {
		t.Fatal(err)
	}
	o := c.(*cachedObject)
	if o.Namespace != "shop" || o.Name != "web" || o.Labels["app"] != "web" || o.ResourceVersion != "42" {
		t.Errorf("kept metadata %+v", o.ObjectMeta)
	}
	if again, _ := compactFor("member1")(o); again != any(o) {
		t.Errorf("a compacted object is compacted again")
	}
	mc := &memberCache{cluster: "member1", gvk: deployments.GroupVersion().WithKind("Deployment")}
	got := unstructured.Unstructured{Object: annotated(mc, o)}
	if r, _, _ := unstructured.NestedInt64(got.Object, "spec", "replicas"); r != 3 {
		t.Errorf("spec.replicas decoded as %v, want the int64 3", got.Object["spec"])
	}
	if got.GetManagedFields() != nil || got.GetAnnotations()[CachedFromClusterAnnotation] != "member1" {
		t.Errorf("served object %v: want no managedFields and the cluster annotation", got.Object)
	}
	// Each answer is a fresh map: annotating one leaves the next untouched.
	got.SetName("changed")
	if again := (unstructured.Unstructured{Object: annotated(mc, o)}); again.GetName() != "web" {
		t.Errorf("an answer shares its map with the cache")
	}
	lq := &listQuery{fields: fields.OneTermEqualSelector("metadata.name", "web")}
	if ok, decoded := lq.matches(mc, o); !ok || decoded != nil {
		t.Errorf("metadata.name=web: match %v, decoded %v; want a match without decoding", ok, decoded != nil)
	}
	lq.fields = fields.OneTermEqualSelector("status.phase", "Running")
	if ok, decoded := lq.matches(mc, o); !ok || decoded == nil {
		t.Errorf("status.phase=Running: match %v, decoded %v; want a match from the decoded object", ok, decoded != nil)
	}
}

// The raw JSON answer of a list is the decoded one, byte for byte once
// parsed: same items, annotations, resourceVersion and continue token.
func TestRawListIsTheDecodedList(t *testing.T) {
	v := &view{gvr: deployments, gvk: deployments.GroupVersion().WithKind("Deployment"), caches: []*memberCache{
		fakeCache(t, "member1", nil, deployment("a", "web", map[string]string{"app": "web"}, 2), deployment("b", "db", nil, 1)),
		fakeCache(t, "member2", nil, deployment("a", "web", nil, 3)),
	}}
	for _, lq := range []*listQuery{{}, {limit: 1}, {fields: fields.OneTermEqualSelector("spec.replicas", "3")}} {
		var buf bytes.Buffer
		if err := (rawListEncoder{}).Encode(newRawList(v, v.collect(lq)), &buf); err != nil {
			t.Fatal(err)
		}
		got := map[string]any{}
		if err := utiljson.Unmarshal(buf.Bytes(), &got); err != nil {
			t.Fatalf("the raw list is not JSON: %v\n%s", err, buf.String())
		}
		want := v.list(lq).UnstructuredContent()
		if d := cmp.Diff(want, got); d != "" {
			t.Errorf("limit %d, fields %v: raw list differs from the decoded one (-decoded +raw):\n%s", lq.limit, lq.fields, d)
		}
	}
}

// The proxy's encoder writes a rawList as cached JSON for the JSON
// serializer and decodes it for YAML.
func TestRawAwareEncoder(t *testing.T) {
	v := &view{gvr: deployments, gvk: deployments.GroupVersion().WithKind("Deployment"), caches: []*memberCache{
		fakeCache(t, "member1", nil, deployment("a", "web", nil, 2)),
	}}
	for _, info := range unstructuredscheme.NewUnstructuredNegotiatedSerializer().SupportedMediaTypes() {
		var buf bytes.Buffer
		enc := asIsSerializer{}.EncoderForVersion(info.Serializer, nil)
		if err := enc.Encode(newRawList(v, v.collect(&listQuery{})), &buf); err != nil {
			t.Fatalf("%s: %v", info.MediaType, err)
		}
		got := map[string]any{}
		if err := yaml.Unmarshal(buf.Bytes(), &got); err != nil || got["kind"] != "DeploymentList" || len(got["items"].([]any)) != 1 {
			t.Errorf("%s: %v\n%s", info.MediaType, err, buf.String())
		}
	}
}

func TestCacheMetrics(t *testing.T) {
	mc := fakeCache(t, "member1", nil, deployment("a", "web", nil, 2), deployment("b", "db", nil, 1))
	c := NewCache()
	c.caches[cacheKey{cluster: "member1", gvr: deployments}] = mc
	bytes := 0
	for _, o := range mc.informer.GetStore().List() {
		bytes += len(o.(*cachedObject).raw)
	}
	want := fmt.Sprintf(`# HELP flotilla_search_cached_bytes [ALPHA] Bytes of JSON the search cache holds, per member cluster and resource (<resource>.<group>).
# TYPE flotilla_search_cached_bytes gauge
flotilla_search_cached_bytes{cluster="member1",resource="deployments.apps"} %d
# HELP flotilla_search_cached_objects [ALPHA] Objects in the search cache, per member cluster and resource (<resource>.<group>).
# TYPE flotilla_search_cached_objects gauge
flotilla_search_cached_objects{cluster="member1",resource="deployments.apps"} 2
`, bytes)
	if err := testutil.CustomCollectAndCompare(&cacheCollector{cache: c}, strings.NewReader(want)); err != nil {
		t.Error(err)
	}
}
