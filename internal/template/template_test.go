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
