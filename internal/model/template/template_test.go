package template

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

func TestWhatIsATemplate(t *testing.T) {
	for _, tc := range []struct {
		gvr  schema.GroupVersionResource
		want bool
	}{
		{schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, true},
		{schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}, true},
		{schema.GroupVersionResource{Version: "v1", Resource: "events"}, false},
		{schema.GroupVersionResource{Version: "v1", Resource: "namespaces"}, false},
		{schema.GroupVersionResource{Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"}, false},
		{schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}, false},
	} {
		if got := IsTemplateResource(tc.gvr); got != tc.want {
			t.Errorf("IsTemplateResource(%s) = %v, want %v", tc.gvr, got, tc.want)
		}
	}
	for ns, want := range map[string]bool{"default": false, "shop": false, "karmada-system": true, "kube-system": true, "karmada-es-member1": true} {
		if got := SkipNamespace(ns); got != want {
			t.Errorf("SkipNamespace(%q) = %v, want %v", ns, got, want)
		}
	}
}

type annotated map[string]string

func (a annotated) GetAnnotations() map[string]string { return a }

func deployment(rv string, generation int64, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}}
	u.SetResourceVersion(rv)
	u.SetGeneration(generation)
	u.SetLabels(labels)
	return u
}

func TestMatches(t *testing.T) {
	recorded := deployment("10", 2, map[string]string{"app": "web"})
	b := annotated{FingerprintAnnotation: Fingerprint(recorded)}
	for _, tc := range []struct {
		name string
		tmpl *unstructured.Unstructured
		want bool
	}{
		{"the very version the binding records", deployment("10", 2, map[string]string{"app": "web"}), true},
		{"a later version that differs only in status", deployment("11", 2, map[string]string{"app": "web"}), true},
		{"a new generation", deployment("12", 3, map[string]string{"app": "web"}), false},
		{"other labels", deployment("12", 2, map[string]string{"app": "shop"}), false},
		{"a kind without generation is told by its resourceVersion alone", deployment("13", 0, nil), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Matches(tc.tmpl, b, "10"); got != tc.want {
				t.Errorf("Matches = %v, want %v", got, tc.want)
			}
		})
	}
	if Fingerprint(deployment("1", 0, nil)) != "" {
		t.Error("a kind without generation has no fingerprint")
	}
}

func TestChangedByUser(t *testing.T) {
	base := func() *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{
			"apiVersion": "apps/v1", "kind": "Deployment",
			"spec":   map[string]any{"replicas": int64(2)},
			"status": map[string]any{"readyReplicas": int64(1)},
		}}
		u.SetName("web")
		u.SetNamespace("shop")
		u.SetResourceVersion("10")
		u.SetGeneration(1)
		u.SetLabels(map[string]string{"app": "web"})
		u.SetAnnotations(map[string]string{"note": "a"})
		return u
	}
	configMap := func(data string) *unstructured.Unstructured {
		u := &unstructured.Unstructured{Object: map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "data": map[string]any{"k": data}}}
		u.SetName("cfg")
		u.SetResourceVersion("3")
		return u
	}
	for _, tc := range []struct {
		name   string
		change func(u *unstructured.Unstructured)
		want   bool
	}{
		{"nothing changed", func(*unstructured.Unstructured) {}, false},
		{"a status write is no change", func(u *unstructured.Unstructured) {
			u.SetResourceVersion("11")
			_ = unstructured.SetNestedField(u.Object, int64(2), "status", "readyReplicas")
		}, false},
		{"the claim written by the control plane (and the generation it bumps) is no change", func(u *unstructured.Unstructured) {
			u.SetResourceVersion("12")
			u.SetGeneration(2)
			u.SetLabels(map[string]string{"app": "web", "propagationpolicy.karmada.io/permanent-id": "id"})
			u.SetAnnotations(map[string]string{"note": "a", "propagationpolicy.karmada.io/name": "pp", "propagationpolicy.karmada.io/namespace": "shop"})
		}, false},
		{"removing the claim is no change", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web"})
		}, false},
		{"a spec edit is a change", func(u *unstructured.Unstructured) {
			u.SetGeneration(2)
			_ = unstructured.SetNestedField(u.Object, int64(3), "spec", "replicas")
		}, true},
		{"a new label is a change", func(u *unstructured.Unstructured) {
			u.SetLabels(map[string]string{"app": "web", "refresh-time": "1"})
		}, true},
		{"a changed annotation is a change", func(u *unstructured.Unstructured) {
			u.SetAnnotations(map[string]string{"note": "b"})
		}, true},
		{"a removed annotation is a change", func(u *unstructured.Unstructured) {
			u.SetAnnotations(nil)
		}, true},
		{"a finalizer is a change", func(u *unstructured.Unstructured) {
			u.SetFinalizers([]string{"example.com/hold"})
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			older, newer := base(), base()
			tc.change(newer)
			if got := ChangedByUser(older, newer); got != tc.want {
				t.Errorf("ChangedByUser() = %v, want %v", got, tc.want)
			}
		})
	}
	if !ChangedByUser(configMap("1"), configMap("2")) {
		t.Error("new data in a ConfigMap (no generation) is a change")
	}
	if ChangedByUser(configMap("1"), configMap("1")) {
		t.Error("the same ConfigMap is no change")
	}
	for key, want := range map[string]bool{
		"propagationpolicy.karmada.io/name": true, "karmada.io/x": true, "work.karmada.io/conflict-resolution": true,
		"app": false, "example.com/karmada.io": false, "notkarmada.io/x": false,
	} {
		if got := IsKarmadaKey(key); got != want {
			t.Errorf("IsKarmadaKey(%q) = %v, want %v", key, got, want)
		}
	}
}
