package execution

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
			"labels": map[string]any{"member-added": "yes"}, "annotations": map[string]any{"a": "old"},
			"finalizers":      []any{"service.kubernetes.io/load-balancer-cleanup"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "o1"}}},
		"spec": map[string]any{"clusterIP": "10.96.0.7", "clusterIPs": []any{"10.96.0.7"}, "type": "NodePort",
			"ports": []any{map[string]any{"name": "http", "port": int64(80), "nodePort": int64(30080)}}},
		"status": map[string]any{"loadBalancer": map[string]any{}},
	})
	desired := obj(map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "labels": map[string]any{"karmada.io/managed": "true"}, "annotations": map[string]any{"a": "new"}},
		"spec":     map[string]any{"type": "NodePort", "ports": []any{map[string]any{"name": "http", "port": int64(80), "nodePort": int64(30080)}}},
	})
	before := desired.DeepCopy()
	got, err := Merge(context.Background(), nil, desired, existing)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	want := obj(map[string]any{
		"apiVersion": "v1", "kind": "Service",
		"metadata": map[string]any{"name": "web", "resourceVersion": "42", "uid": "u1",
			"labels":          map[string]any{"member-added": "yes", "karmada.io/managed": "true"},
			"annotations":     map[string]any{"a": "new"},
			"finalizers":      []any{"service.kubernetes.io/load-balancer-cleanup"},
			"ownerReferences": []any{map[string]any{"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": "o1"}}},
		"spec": map[string]any{"clusterIP": "10.96.0.7", "clusterIPs": []any{"10.96.0.7"}, "type": "NodePort",
			"ports": []any{map[string]any{"name": "http", "port": int64(80), "nodePort": int64(30080)}}},
		"status": map[string]any{"loadBalancer": map[string]any{}},
	})
	if diff := cmp.Diff(want.Object, got.Object); diff != "" {
		t.Errorf("Merge (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(before.Object, desired.Object); diff != "" {
		t.Errorf("Merge modified desired (-before +after):\n%s", diff)
	}
}

// reportJob is the member's copy of the Job: the selector and pod
// labels its API server generated, no TTL (pruned before it was sent).
func reportJob() *unstructured.Unstructured {
	return obj(map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "report", "namespace": "t", "resourceVersion": "7", "uid": "m1",
			"labels":      map[string]any{"app": "report", "karmada.io/managed": "true"},
			"annotations": map[string]any{"resourcetemplate.karmada.io/managed-labels": "app,karmada.io/managed"}},
		"spec": map[string]any{"backoffLimit": int64(0),
			"selector": map[string]any{"matchLabels": map[string]any{"batch.kubernetes.io/controller-uid": "m1"}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "report",
					"batch.kubernetes.io/controller-uid": "m1", "controller-uid": "m1",
					"batch.kubernetes.io/job-name": "report", "job-name": "report"}},
				"spec": map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}}}}},
	})
}

// reportManifest is the rendered manifest of the Job with the given
// labels (and the managed-labels annotation listing them).
func reportManifest(labels map[string]any) *unstructured.Unstructured {
	keys := slices.Sorted(maps.Keys(labels))
	return obj(map[string]any{
		"apiVersion": "batch/v1", "kind": "Job",
		"metadata": map[string]any{"name": "report", "namespace": "t", "labels": labels,
			"annotations": map[string]any{"resourcetemplate.karmada.io/managed-labels": strings.Join(keys, ",")}},
		"spec": map[string]any{"backoffLimit": int64(0),
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": "report"}},
				"spec":     map[string]any{"restartPolicy": "Never", "containers": []any{map[string]any{"name": "main", "image": "busybox:1.36"}}}}},
	})
}

func TestMergeKeepsTheJobSelectorTheMemberGenerated(t *testing.T) {
	existing := reportJob()
	got, err := Merge(context.Background(), nil, reportManifest(map[string]any{"app": "report", "karmada.io/managed": "true", "run": "2"}), existing)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	for _, path := range [][]string{{"spec", "selector"}, {"spec", "template", "metadata", "labels"}} {
		want, _, _ := unstructured.NestedFieldNoCopy(existing.Object, path...)
		have, _, _ := unstructured.NestedFieldNoCopy(got.Object, path...)
		if diff := cmp.Diff(want, have); diff != "" {
			t.Errorf("%v is immutable and must be sent as the member has it (-member +sent):\n%s", path, diff)
		}
	}
	if got.GetLabels()["run"] != "2" {
		t.Errorf("the new label is not sent: %v", got.GetLabels())
	}
}

func TestInSync(t *testing.T) {
	sa := func(secrets ...string) *unstructured.Unstructured {
		refs := []any{}
		for _, s := range secrets {
			refs = append(refs, map[string]any{"name": s})
		}
		return obj(map[string]any{"apiVersion": "v1", "kind": "ServiceAccount", "metadata": map[string]any{"name": "b"}, "secrets": refs})
	}
	podWith := func(volume string) *unstructured.Unstructured {
		return obj(map[string]any{"apiVersion": "v1", "kind": "Pod", "metadata": map[string]any{"name": "p"},
			"spec": map[string]any{"nodeName": "n1", "volumes": []any{map[string]any{"name": volume}},
				"containers": []any{map[string]any{"name": "c", "image": "nginx", "volumeMounts": []any{map[string]any{"name": volume}}}}}})
	}
	cases := map[string]struct {
		desired, existing *unstructured.Unstructured
		want              bool
	}{
		"a member Job with its generated selector is in sync with the pruned manifest": {
			reportManifest(map[string]any{"app": "report", "karmada.io/managed": "true"}), reportJob(), true},
		"a label added to the template is drift": {
			reportManifest(map[string]any{"app": "report", "karmada.io/managed": "true", "run": "2"}), reportJob(), false},
		"pod labels the member's Job must keep are not drift": {
			func() *unstructured.Unstructured {
				m := reportManifest(map[string]any{"app": "report", "karmada.io/managed": "true"})
				_ = unstructured.SetNestedStringMap(m.Object, map[string]string{"app": "report", "tier": "batch"}, "spec", "template", "metadata", "labels")
				return m
			}(), reportJob(), true},
		"a Pod's volumes as the member mounted them are not drift": {podWith("kube-api-access-cp"), podWith("kube-api-access-m1"), true},
		// Merge sends the template's secrets first: once it has, the
		// member's order is that one.
		"a secret the member added to a ServiceAccount is not drift": {sa("registry"), sa("registry", "b-token-m1"), true},
		"a secret the member lost is drift":                          {sa("registry", "extra"), sa("registry"), false},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			got, err := InSync(context.Background(), nil, tc.desired, tc.existing)
			if err != nil {
				t.Fatalf("InSync: %v", err)
			}
			if got != tc.want {
				t.Errorf("InSync = %v, want %v", got, tc.want)
			}
			if !got {
				return
			}
			// In sync must be stable: what Merge would send changes nothing.
			merged, err := Merge(context.Background(), nil, tc.desired, tc.existing)
			if err != nil {
				t.Fatalf("Merge: %v", err)
			}
			if !Subset(merged.Object, tc.existing.Object) {
				t.Errorf("in sync, yet Merge would send a change")
			}
		})
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
	merged, err := Merge(context.Background(), nil, desired, existing)
	if err != nil {
		t.Fatalf("Merge: %v", err)
	}
	got := merged.GetLabels()
	if _, ok := got["color"]; ok || got["team"] != "a" || got["member-own"] != "x" {
		t.Errorf("labels after merge: %v (want color removed, team and the member's own kept)", got)
	}
}
