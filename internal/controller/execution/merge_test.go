package execution

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func obj(m map[string]any) *unstructured.Unstructured { return &unstructured.Unstructured{Object: m} }

func TestSubset(t *testing.T) {
	existing := map[string]any{
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"app": "web", "extra": "x"}},
		"spec": map[string]any{"replicas": int64(2), "template": map[string]any{"spec": map[string]any{
			"containers":                    []any{map[string]any{"name": "c", "image": "nginx", "imagePullPolicy": "Always"}},
			"terminationGracePeriodSeconds": int64(30),
		}}},
		"status": map[string]any{"readyReplicas": int64(2)},
	}
	cases := map[string]struct {
		desired map[string]any
		want    bool
	}{
		"fields the member defaulted are ignored": {map[string]any{"spec": map[string]any{"replicas": int64(2),
			"template": map[string]any{"spec": map[string]any{"containers": []any{map[string]any{"name": "c", "image": "nginx"}}}}}}, true},
		"a changed replica count is drift": {map[string]any{"spec": map[string]any{"replicas": int64(5)}}, false},
		"a changed image is drift": {map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c", "image": "busybox"}}}}}}, false},
		"a list of different length is drift": {map[string]any{"spec": map[string]any{"template": map[string]any{"spec": map[string]any{
			"containers": []any{map[string]any{"name": "c"}, map[string]any{"name": "d"}}}}}}, false},
		"a label the member lacks is drift":   {map[string]any{"metadata": map[string]any{"labels": map[string]any{"team": "a"}}}, false},
		"status is never compared":            {map[string]any{"status": map[string]any{"readyReplicas": int64(9)}}, true},
		"empty desired values need not exist": {map[string]any{"spec": map[string]any{"paused": nil, "strategy": map[string]any{}}}, true},
		"an int equals the same float":        {map[string]any{"spec": map[string]any{"replicas": float64(2)}}, true},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			if got := Subset(tc.desired, existing); got != tc.want {
				t.Errorf("Subset = %v, want %v", got, tc.want)
			}
		})
	}
}

func TestMergeRetainsMemberOwnedFields(t *testing.T) {
	existing := obj(map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "resourceVersion": "42", "uid": "u1",
			"labels": map[string]any{"member-added": "yes"}, "annotations": map[string]any{"a": "old"}},
		"spec": map[string]any{"clusterIP": "10.96.0.7", "clusterIPs": []any{"10.96.0.7"}, "type": "NodePort",
			"ports": []any{map[string]any{"name": "http", "port": int64(80), "nodePort": int64(30080)}}},
	})
	desired := obj(map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"karmada.io/managed": "true"}, "annotations": map[string]any{"a": "new"}},
		"spec":     map[string]any{"type": "NodePort", "ports": []any{map[string]any{"name": "http", "port": int64(80)}}},
	})
	got := Merge(desired, existing)
	if got.GetResourceVersion() != "42" || string(got.GetUID()) != "u1" {
		t.Errorf("identity not kept: rv %q uid %q", got.GetResourceVersion(), got.GetUID())
	}
	if ip, _, _ := unstructured.NestedString(got.Object, "spec", "clusterIP"); ip != "10.96.0.7" {
		t.Errorf("clusterIP not retained: %q", ip)
	}
	ports, _, _ := unstructured.NestedSlice(got.Object, "spec", "ports")
	if np := ports[0].(map[string]any)["nodePort"]; np != int64(30080) {
		t.Errorf("nodePort not retained: %v", np)
	}
	if got.GetLabels()["member-added"] != "yes" || got.GetLabels()["karmada.io/managed"] != "true" || got.GetAnnotations()["a"] != "new" {
		t.Errorf("labels/annotations not merged with desired winning: %v %v", got.GetLabels(), got.GetAnnotations())
	}
	if _, set, _ := unstructured.NestedFieldNoCopy(desired.Object, "spec", "clusterIP"); set {
		t.Errorf("Merge modified its input")
	}
}

func TestMergeDropsKeysFlotillaNoLongerSets(t *testing.T) {
	existing := obj(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c",
		"labels":      map[string]any{"color": "blue", "team": "a", "member-own": "x"},
		"annotations": map[string]any{"resourcetemplate.karmada.io/managed-labels": "color,team"}}})
	desired := obj(map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "metadata": map[string]any{"name": "c",
		"labels":      map[string]any{"team": "a"},
		"annotations": map[string]any{"resourcetemplate.karmada.io/managed-labels": "team"}}})
	if Subset(desired.Object, existing.Object) {
		t.Fatal("a removed label must count as drift")
	}
	got := Merge(desired, existing).GetLabels()
	if _, ok := got["color"]; ok || got["team"] != "a" || got["member-own"] != "x" {
		t.Errorf("labels after merge: %v (want color removed, team and the member's own kept)", got)
	}
}
