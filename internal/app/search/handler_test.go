package search

import (
	"context"
	"encoding/base64"
	"net/http/httptest"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/sets"
	"k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

var deployments = schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}

// fakeCache is a member cache holding objs, never started.
func fakeCache(t *testing.T, cluster string, allowed sets.Set[string], objs ...*unstructured.Unstructured) *memberCache {
	t.Helper()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0, cache.Indexers{})
	for _, o := range objs {
		c, err := compactFor(cluster)(o)
		if err != nil {
			t.Fatal(err)
		}
		if err := inf.GetStore().Add(c); err != nil {
			t.Fatal(err)
		}
	}
	return &memberCache{cluster: cluster, gvr: deployments, gvk: deployments.GroupVersion().WithKind("Deployment"), allowed: allowed, informer: inf}
}

func deployment(ns, name string, labels map[string]string, replicas int64) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion("apps/v1")
	u.SetKind("Deployment")
	u.SetNamespace(ns)
	u.SetName(name)
	u.SetLabels(labels)
	_ = unstructured.SetNestedField(u.Object, replicas, "spec", "replicas")
	return u
}

func itemNames(t *testing.T, out any) []string {
	t.Helper()
	var got []string
	items, _ := out.(map[string]any)["items"].([]any)
	for _, it := range items {
		u := unstructured.Unstructured{Object: it.(map[string]any)}
		got = append(got, u.GetAnnotations()[CachedFromClusterAnnotation]+"/"+u.GetNamespace()+"/"+u.GetName())
	}
	return got
}

func TestListSelectsPagesAndAnnotates(t *testing.T) {
	web := map[string]string{"app": "web"}
	v := &view{gvr: deployments, gvk: deployments.GroupVersion().WithKind("Deployment"), caches: []*memberCache{
		fakeCache(t, "member1", nil, deployment("a", "web", web, 2), deployment("b", "db", nil, 1)),
		fakeCache(t, "member2", nil, deployment("a", "web", web, 3)),
		// member3 caches namespace a only: b's object is not served.
		fakeCache(t, "member3", sets.New("a"), deployment("a", "web", web, 1), deployment("b", "hidden", nil, 1)),
	}}
	list := func(query string) map[string]any {
		t.Helper()
		lq, err := parseListQuery("", httptest.NewRequest("GET", "/x?"+query, nil).URL.Query())
		if err != nil {
			t.Fatalf("list ?%s: %v", query, err)
		}
		return v.list(lq).UnstructuredContent()
	}
	all := list("")
	if got := strings.Join(itemNames(t, all), " "); got != "member1/a/web member1/b/db member2/a/web member3/a/web" {
		t.Errorf("all: %s", got)
	}
	if all["kind"] != "DeploymentList" || all["apiVersion"] != "apps/v1" {
		t.Errorf("list kind %v apiVersion %v", all["kind"], all["apiVersion"])
	}
	if got := strings.Join(itemNames(t, list("labelSelector=app%3Dweb")), " "); got != "member1/a/web member2/a/web member3/a/web" {
		t.Errorf("labelSelector: %s", got)
	}
	if got := strings.Join(itemNames(t, list("fieldSelector=spec.replicas%3D1")), " "); got != "member1/b/db member3/a/web" {
		t.Errorf("fieldSelector on spec.replicas: %s", got)
	}
	// Pages of one, across clusters, give every item once.
	var paged []string
	query := "limit=1"
	for i := 0; i < 10; i++ {
		page := list(query)
		paged = append(paged, itemNames(t, page)...)
		c, _ := page["metadata"].(map[string]any)["continue"].(string)
		if c == "" {
			break
		}
		query = "limit=1&continue=" + c
	}
	if got := strings.Join(paged, " "); got != "member1/a/web member1/b/db member2/a/web member3/a/web" {
		t.Errorf("paged: %s", got)
	}
	if _, err := parseListQuery("", httptest.NewRequest("GET", "/x?continue=garbage!", nil).URL.Query()); err == nil || !strings.Contains(err.Error(), "list again without it") {
		t.Errorf("a bad continue token: %v", err)
	}
	// A namespaced list, and a get that finds the first cluster holding the name.
	if got := strings.Join(itemNames(t, v.list(&listQuery{namespace: "b"}).UnstructuredContent()), " "); got != "member1/b/db" {
		t.Errorf("namespace b: %s", got)
	}
	obj, err := v.get("a", "web")
	if err != nil || obj.(map[string]any)["metadata"].(map[string]any)["annotations"].(map[string]any)[CachedFromClusterAnnotation] != "member1" {
		t.Errorf("get a/web: %v %v", obj, err)
	}
	if _, err := v.get("b", "hidden"); err == nil || !strings.Contains(err.Error(), `deployments.apps "hidden" not found`) {
		t.Errorf("get of an object outside the cached namespaces: %v", err)
	}
}

func TestMultiClusterVersionIsKarmadas(t *testing.T) {
	got := multiClusterVersion(map[string]string{"member2": "77", "member1": "123"})
	data, err := base64.RawURLEncoding.DecodeString(got)
	if err != nil || string(data) != `{"member1":"123","member2":"77"}` {
		t.Errorf("resourceVersion %q decodes to %q (%v)", got, data, err)
	}
}

func TestParseNativePath(t *testing.T) {
	info, err := parseNativePath([]string{"apis", "apps", "v1", "namespaces", "x", "deployments", "web"})
	if err != nil || info.APIGroup != "apps" || info.Namespace != "x" || info.Resource != "deployments" || info.Name != "web" {
		t.Errorf("%+v %v", info, err)
	}
	for _, bad := range [][]string{{"foo"}, {"api", "v1", "namespaces", "x", "pods", "p", "log"}} {
		if _, err := parseNativePath(bad); err == nil {
			t.Errorf("%v: accepted", bad)
		}
	}
}

func TestValidateResourceRegistry(t *testing.T) {
	r := &searchv1alpha1.ResourceRegistry{}
	r.Name = "r"
	r.Spec.TargetCluster = policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}
	r.Spec.ResourceSelectors = []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default"}}
	if errs := ValidateResourceRegistry(r); len(errs) != 0 {
		t.Fatalf("a good registry: %v", errs)
	}
	r.Spec.ResourceSelectors = []searchv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Pod"}, {APIVersion: "networking.k8s.io/v1beta1", Kind: "Ingress"}}
	if errs := ValidateResourceRegistry(r); len(errs) != 0 {
		t.Fatalf("core and beta versions: %v", errs)
	}
	// A group without its version is not a version of the core group.
	r.Spec.ResourceSelectors = []searchv1alpha1.ResourceSelector{{APIVersion: "apps", Kind: "Deployment"}}
	if got := ValidateResourceRegistry(r).ToAggregate(); got == nil || !strings.Contains(got.Error(), "must be group/version") {
		t.Errorf("apiVersion apps: got %v, want a refusal asking for group/version", got)
	}
	r.Spec.ResourceSelectors = []searchv1alpha1.ResourceSelector{{APIVersion: "a/b/c", Namespace: "Bad_NS"}}
	r.Spec.BackendStore = &searchv1alpha1.BackendStoreConfig{OpenSearch: &searchv1alpha1.OpenSearchConfig{Addresses: []string{"localhost:9200"}}}
	got := ValidateResourceRegistry(r).ToAggregate().Error()
	for _, want := range []string{"spec.resourceSelectors[0].apiVersion: Invalid value", "spec.resourceSelectors[0].kind: Required value",
		"spec.resourceSelectors[0].namespace: Invalid value", "spec.backendStore.openSearch.addresses[0]: Invalid value"} {
		if !strings.Contains(got, want) {
			t.Errorf("errors %q lack %q", got, want)
		}
	}
}

func TestReadyConditionNamesMissingClusters(t *testing.T) {
	r := &searchv1alpha1.ResourceRegistry{}
	r.Spec.TargetCluster = policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member9"}}
	r.Spec.ResourceSelectors = []searchv1alpha1.ResourceSelector{{APIVersion: "apps/v1", Kind: "Deployment"}}
	_, outcomes, _ := plan([]searchv1alpha1.ResourceRegistry{*r}, nil, nil)
	c := readyCondition(r, outcomes[r.Name], nil)
	if c.Reason != searchv1alpha1.ReasonNoCluster || !strings.Contains(c.Message, "No cluster is named member9") {
		t.Errorf("a registry naming an unknown cluster: %s %q", c.Reason, c.Message)
	}
}

func TestRegistryTable(t *testing.T) {
	r := searchv1alpha1.ResourceRegistry{}
	r.Name = "apps"
	r.Status.Conditions = []metav1.Condition{{Type: searchv1alpha1.ConditionReady, Status: metav1.ConditionTrue, Reason: searchv1alpha1.ReasonCached}}
	table, err := registryTable{}.ConvertToTable(context.Background(), &searchv1alpha1.ResourceRegistryList{Items: []searchv1alpha1.ResourceRegistry{r, {}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(table.Rows) != 2 || table.Rows[0].Cells[1] != "True" || table.Rows[0].Cells[2] != "Cached" || table.Rows[1].Cells[1] != "Unknown" {
		t.Errorf("rows %v: want READY True/Cached, then Unknown before the first sync", table.Rows)
	}
}
