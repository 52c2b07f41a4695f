package detector

import (
	"context"
	"testing"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	fakediscovery "k8s.io/client-go/discovery/fake"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	clienttesting "k8s.io/client-go/testing"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// preferredDiscovery serves a fixed ServerPreferredResources (client-go's
// fake discovery answers it with nothing).
type preferredDiscovery struct {
	*fakediscovery.FakeDiscovery
	lists []*metav1.APIResourceList
}

func (p preferredDiscovery) ServerPreferredResources() ([]*metav1.APIResourceList, error) {
	return p.lists, nil
}

// A standby replica lists its templates (Warmup) but reconciles none of
// them until it leads (Start); /readyz (Synced) passes once they are listed.
func TestWarmupListsTemplatesAndOnlyStartReconcilesThem(t *testing.T) {
	scheme := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{clientgoscheme.AddToScheme, policyv1alpha1.AddToScheme,
		workv1alpha2.AddToScheme, apiextensionsv1.AddToScheme} {
		if err := add(scheme); err != nil {
			t.Fatal(err)
		}
	}
	deployments := schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}
	web := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "web", "namespace": "default"},
	}}
	dyn := dynamicfake.NewSimpleDynamicClientWithCustomListKinds(runtime.NewScheme(),
		map[schema.GroupVersionResource]string{deployments: "DeploymentList"}, web)
	disc := preferredDiscovery{FakeDiscovery: &fakediscovery.FakeDiscovery{Fake: &clienttesting.Fake{}},
		lists: []*metav1.APIResourceList{{GroupVersion: "apps/v1", APIResources: []metav1.APIResource{{
			Name: "deployments", Kind: "Deployment", Namespaced: true,
			Verbs: metav1.Verbs{"create", "delete", "get", "list", "patch", "update", "watch"},
		}}}}}
	d := New(fake.NewClientBuilder().WithScheme(scheme).Build(), &informertest.FakeInformers{Scheme: scheme}, dyn, disc)

	if err := d.Synced(nil); err == nil {
		t.Fatal("Synced before Warmup: want an error, got nil")
	}
	if err := d.Warmup(t.Context()); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the templates listed", func() bool { return d.Synced(nil) == nil })
	if _, found, err := d.Template(schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, "default", "web"); err != nil || !found {
		t.Fatalf("Template after Warmup: found %t, err %v; want the listed Deployment", found, err)
	}
	// Not leading: what the first list found waits.
	time.Sleep(100 * time.Millisecond)
	if n := d.backlog.Len(); n != 1 {
		t.Fatalf("backlog before Start: %d templates, want 1 (nothing reconciled before leading)", n)
	}

	leading, stepDown := context.WithCancel(t.Context())
	stopped := make(chan struct{})
	go func() { _ = d.Start(leading); close(stopped) }()
	waitUntil(t, "the backlog handed to the workers", func() bool { return d.backlog.Len() == 0 && d.queue.Len() == 0 })

	// Leadership ends before the manager does: Start returns and its
	// workers stop with it, although the informers run on.
	stepDown()
	select {
	case <-stopped:
	case <-time.After(10 * time.Second):
		t.Fatal("Start did not return after its context ended")
	}
	if !d.queue.ShuttingDown() {
		t.Fatal("the detector's queue is still open after Start returned; its workers would run on")
	}
}

func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
