package detector

import (
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/tools/cache"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// cached is a template informer (never started) holding the given
// Deployments, "namespace/name" or "name" with labels app=<name>.
func cached(t *testing.T, namespaced bool, keys ...string) *watched {
	t.Helper()
	inf := cache.NewSharedIndexInformer(&cache.ListWatch{}, &unstructured.Unstructured{}, 0,
		cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc, nameIndex: indexByName})
	for _, k := range keys {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
		ns, name, _ := cache.SplitMetaNamespaceKey(k)
		u.SetNamespace(ns)
		u.SetName(name)
		u.SetLabels(map[string]string{"app": name})
		if err := inf.GetIndexer().Add(u); err != nil {
			t.Fatal(err)
		}
	}
	return &watched{gvk: schema.GroupVersionKind{Group: "apps", Version: "v1", Kind: "Deployment"}, namespaced: namespaced, informer: inf}
}

func TestSelectedTemplatesTouchOnlyWhatTheSelectorSelects(t *testing.T) {
	w := cached(t, true, "foo/web", "foo/api", "bar/web", "bar/db")
	byName := func(ns, name string) policyv1alpha1.ResourceSelector {
		return policyv1alpha1.ResourceSelector{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: name}
	}
	byLabel := func(app string) policyv1alpha1.ResourceSelector {
		s := byName("", "")
		s.LabelSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
		return s
	}
	tests := []struct {
		name            string
		policyNamespace string
		sel             policyv1alpha1.ResourceSelector
		want            []string
	}{
		{"a PP naming a template: that one", "foo", byName("", "web"), []string{"foo/web"}},
		{"a PP naming a missing template: none", "foo", byName("", "nosuch"), nil},
		{"a PP's selector naming another namespace: none", "foo", byName("bar", "web"), nil},
		{"a PP by kind: its namespace", "foo", byName("", ""), []string{"foo/api", "foo/web"}},
		{"a PP by label: the matching ones of its namespace", "foo", byLabel("api"), []string{"foo/api"}},
		{"a CPP naming namespace and name: that one", "", byName("bar", "db"), []string{"bar/db"}},
		{"a CPP naming only a name: that name in every namespace", "", byName("", "web"), []string{"bar/web", "foo/web"}},
		{"a CPP by kind in a namespace: that namespace", "", byName("bar", ""), []string{"bar/db", "bar/web"}},
		{"a CPP by label everywhere: the matching ones", "", byLabel("web"), []string{"bar/web", "foo/web"}},
		{"a CPP by kind everywhere: all", "", byName("", ""), []string{"bar/db", "bar/web", "foo/api", "foo/web"}},
		{"an invalid label selector: none", "", func() policyv1alpha1.ResourceSelector {
			s := byName("", "")
			s.LabelSelector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "app", Operator: "Bogus"}}}
			return s
		}(), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, o := range selectedTemplates(w, tt.policyNamespace, tt.sel) {
				got = append(got, o.GetNamespace()+"/"+o.GetName())
			}
			slices.Sort(got)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("selectedTemplates() mismatch (-want +got):\n%s", diff)
			}
		})
	}
	cluster := cached(t, false, "reader", "writer")
	sel := policyv1alpha1.ResourceSelector{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: "reader"}
	if got := selectedTemplates(cluster, "", sel); len(got) != 1 || got[0].GetName() != "reader" {
		t.Errorf("a CPP naming a cluster-scoped template selects %v, want reader", got)
	}
	if got := selectedTemplates(cluster, "foo", sel); len(got) != 0 {
		t.Errorf("a PP selects cluster-scoped templates %v", got)
	}
}

func TestActivationOrdersTemplateAndPolicyChanges(t *testing.T) {
	web := templateKey{Namespace: "foo", Name: "web"}
	lazyAt := func(rv string) *policyv1alpha1.PropagationPolicy {
		return &policyv1alpha1.PropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: "lazy", UID: "lazy-uid", ResourceVersion: rv}}
	}
	t.Run("by resourceVersion, whatever order the events came in", func(t *testing.T) {
		var a activation
		if a.changedSince(web, "lazy-uid") {
			t.Error("nothing recorded: no change")
		}
		a.policyChanged(lazyAt("20"))
		a.templateChanged(web, "10") // created before the policy, seen after it
		if a.changedSince(web, "lazy-uid") {
			t.Error("a template created before the policy has not changed since")
		}
		a.templateChanged(web, "30") // a user edit
		if !a.changedSince(web, "lazy-uid") {
			t.Error("a template edited after the policy has changed since")
		}
		a.policyChanged(cache.DeletedFinalStateUnknown{Obj: lazyAt("40")}) // the policy changes again
		if a.changedSince(web, "lazy-uid") {
			t.Error("a policy change waits for the template's next change")
		}
		a.templateChanged(web, "100") // longer is later
		if !a.changedSince(web, "lazy-uid") {
			t.Error("resourceVersions compare as numbers")
		}
		a.policyGone(lazyAt("40"))
		if a.changedSince(web, "lazy-uid") {
			t.Error("a policy not seen counts as newer than every template")
		}
		a.policyChanged(lazyAt("50"))
		a.templateGone(web)
		if a.changedSince(web, "lazy-uid") {
			t.Error("a deleted template forgets its changes")
		}
	})
	t.Run("by the order seen, when a resourceVersion is not a revision", func(t *testing.T) {
		var a activation
		a.templateChanged(web, "a")
		a.policyChanged(lazyAt("b"))
		if a.changedSince(web, "lazy-uid") {
			t.Error("a template seen before the policy has not changed since")
		}
		a.templateChanged(web, "c")
		if !a.changedSince(web, "lazy-uid") {
			t.Error("a template seen changing after the policy has changed since")
		}
	})
}
