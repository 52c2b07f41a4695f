package validation

import (
	"encoding/json"
	"strings"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// FuzzClusterAffinity admits a PropagationPolicy or a ClusterOverridePolicy whose every
// cluster affinity (placement.clusterAffinity, a clusterAffinities term and a static weight's
// targetCluster; an override rule's and the deprecated spec-level targetCluster) is a fuzzed
// JSON document, then compiles each affinity the way the scheduler and the override manager
// do and matches it against a cluster built from fuzzed labels, provider, region and zones.
// Invariants: neither admission nor matching panics; an affinity of an admitted policy
// compiles, unless its labelSelector is one metav1.LabelSelectorAsSelector refuses (admission
// leaves label selectors unchecked, as Karmada's webhook does), and then the error names that
// labelSelector; Match and Reason agree (a cluster matches exactly when there is no reason).
func FuzzClusterAffinity(f *testing.F) {
	for _, seed := range []struct {
		affinity                string
		override                bool
		key, value              string
		provider, region, zone1 string
	}{
		{`{"clusterNames":["m1"],"exclude":["m2"]}`, false, "env", "prod", "aws", "us-east-1", "a"},
		{`{"labelSelector":{"matchLabels":{"env":"prod"}}}`, true, "env", "prod", "", "", ""},
		{`{"labelSelector":{"matchExpressions":[{"key":"env","operator":"In","values":["prod","dev"]}]}}`, false, "env", "dev", "", "", ""},
		{`{"labelSelector":{"matchExpressions":[{"key":"env","operator":"Exists"},{"key":"tier","operator":"DoesNotExist"}]}}`, false, "env", "", "", "", ""},
		{`{"labelSelector":{"matchExpressions":[{"key":"env","operator":"In","values":[]}]}}`, false, "env", "x", "", "", ""},
		{`{"labelSelector":{"matchLabels":{"not a key!":"v"}}}`, true, "k", "v", "", "", ""},
		{`{"labelSelector":{"matchExpressions":[{"key":"env","operator":"Gt","values":["1"]}]}}`, false, "env", "2", "", "", ""},
		{`{"fieldSelector":{"matchExpressions":[{"key":"region","operator":"In","values":["us-east-1"]}]}}`, false, "", "", "aws", "us-east-1", "a"},
		{`{"fieldSelector":{"matchExpressions":[{"key":"zone","operator":"NotIn","values":["a"]},{"key":"provider","operator":"In","values":["aws"]}]}}`, true, "", "", "aws", "eu", "b"},
		{`{"fieldSelector":{"matchExpressions":[{"key":"zone","operator":"Exists"}]}}`, false, "", "", "", "", "a"},
		{`{"fieldSelector":{"matchExpressions":[{"key":"color","operator":"In","values":["red"]}]}}`, false, "", "", "", "", ""},
		{`{"fieldSelector":{"matchExpressions":[{"key":"region","operator":"Lt"}]}}`, true, "", "", "", "r", ""},
		{`{"fieldSelector":{"matchExpressions":[{"key":"region"}]}}`, false, "", "", "", "", ""},
		{`{"fieldSelector":{"matchExpressions":[null,{}]},"labelSelector":{}}`, false, "", "", "", "", ""},
		{`{"clusterNames":"m1"}`, false, "", "", "", "", ""},
		{`{"labelSelector":{"matchLabels":{"a":1}}}`, true, "", "", "", "", ""},
		{`{}`, false, "", "", "", "", ""},
	} {
		f.Add([]byte(seed.affinity), seed.override, seed.key, seed.value, seed.provider, seed.region, seed.zone1)
	}
	f.Fuzz(func(t *testing.T, affinityJSON []byte, override bool, key, value, provider, region, zone string) {
		var affinity map[string]any
		if json.Unmarshal(affinityJSON, &affinity) != nil || affinity == nil {
			return
		}
		obj, gr, gk := fuzzPolicy(affinity, override)
		if err := Validate(gr, gk, "p", obj); err != nil {
			return
		}
		affinities, err := policyAffinities(obj, override)
		if err != nil {
			t.Fatalf("admitted a policy the typed API cannot hold: %v", err)
		}
		member := &clusterv1alpha1.Cluster{
			ObjectMeta: metav1.ObjectMeta{Name: "m1", Labels: map[string]string{key: value}},
			Spec:       clusterv1alpha1.ClusterSpec{Provider: provider, Region: region, Zones: []string{zone, "z"}},
		}
		for path, a := range affinities {
			m, err := clusteraffinity.Compile(path, a)
			if err != nil {
				// Label selectors are not checked at admission, as Karmada's webhook does not
				// check them: only a label selector may keep an admitted affinity from compiling.
				if _, lerr := metav1.LabelSelectorAsSelector(a.LabelSelector); lerr == nil || !strings.Contains(err.Error(), path+".labelSelector") {
					t.Fatalf("admitted affinity %s does not compile: %v", affinityJSON, err)
				}
				continue
			}
			if match, reason := m.Match(member), m.Reason(member); match != (reason == "") {
				t.Fatalf("affinity %s: Match %v but Reason %q", affinityJSON, match, reason)
			}
		}
	})
}

// fuzzPolicy returns a PropagationPolicy (or, for override, a ClusterOverridePolicy) with
// affinity in every place a policy of its kind holds a cluster affinity, and its resource and
// kind.
func fuzzPolicy(affinity map[string]any, override bool) (map[string]any, schema.GroupResource, schema.GroupKind) {
	term := map[string]any{"affinityName": "first"}
	for k, v := range affinity {
		term[k] = v
	}
	spec := map[string]any{
		"resourceSelectors": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment"}},
		"placement": map[string]any{
			"clusterAffinity":   affinity,
			"clusterAffinities": []any{term},
			"replicaScheduling": map[string]any{"replicaSchedulingType": "Divided", "weightPreference": map[string]any{
				"staticWeightList": []any{map[string]any{"targetCluster": affinity, "weight": int64(1)}}}},
		},
	}
	kind, resource := "PropagationPolicy", "propagationpolicies"
	if override {
		kind, resource = "ClusterOverridePolicy", "clusteroverridepolicies"
		spec = map[string]any{
			"resourceSelectors": spec["resourceSelectors"],
			"targetCluster":     affinity,
			"overrideRules":     []any{map[string]any{"targetCluster": affinity}},
		}
	}
	obj := map[string]any{
		"apiVersion": policyv1alpha1.SchemeGroupVersion.String(), "kind": kind,
		"metadata": map[string]any{"name": "p", "namespace": "default"}, "spec": spec,
	}
	return obj, policyv1alpha1.SchemeGroupVersion.WithResource(resource).GroupResource(), policyv1alpha1.SchemeGroupVersion.WithKind(kind).GroupKind()
}

// policyAffinities decodes obj as the typed policy and returns its cluster affinities by path.
func policyAffinities(obj map[string]any, override bool) (map[string]*policyv1alpha1.ClusterAffinity, error) {
	if override {
		var p policyv1alpha1.ClusterOverridePolicy
		if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &p); err != nil {
			return nil, err
		}
		return map[string]*policyv1alpha1.ClusterAffinity{
			"targetCluster":                  p.Spec.TargetCluster,
			"overrideRules[0].targetCluster": p.Spec.OverrideRules[0].TargetCluster,
		}, nil
	}
	var p policyv1alpha1.PropagationPolicy
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(obj, &p); err != nil {
		return nil, err
	}
	pl := &p.Spec.Placement
	return map[string]*policyv1alpha1.ClusterAffinity{
		"clusterAffinity":                   pl.ClusterAffinity,
		"clusterAffinities[first]":          &pl.ClusterAffinities[0].ClusterAffinity,
		"staticWeightList[0].targetCluster": &pl.ReplicaScheduling.WeightPreference.StaticWeightList[0].TargetCluster,
	}, nil
}
