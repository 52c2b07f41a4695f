package override

import (
	"encoding/json"
	"os"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/yaml"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// policyBuilder builds OverridePolicies and ClusterOverridePolicies fluently.
type policyBuilder struct {
	meta metav1.ObjectMeta
	spec policyv1alpha1.OverrideSpec
}

// newPolicy starts a policy; namespace is ignored by buildCluster.
func newPolicy(namespace, name string) *policyBuilder {
	return &policyBuilder{meta: metav1.ObjectMeta{Namespace: namespace, Name: name}}
}

func (b *policyBuilder) selecting(sels ...policyv1alpha1.ResourceSelector) *policyBuilder {
	b.spec.ResourceSelectors = append(b.spec.ResourceSelectors, sels...)
	return b
}

func (b *policyBuilder) rule(target *policyv1alpha1.ClusterAffinity, o policyv1alpha1.Overriders) *policyBuilder {
	b.spec.OverrideRules = append(b.spec.OverrideRules, policyv1alpha1.RuleWithCluster{TargetCluster: target, Overriders: o})
	return b
}

// deprecated sets the deprecated top-level targetCluster and overriders.
func (b *policyBuilder) deprecated(target *policyv1alpha1.ClusterAffinity, o policyv1alpha1.Overriders) *policyBuilder {
	b.spec.TargetCluster, b.spec.Overriders = target, o
	return b
}

func (b *policyBuilder) deleting() *policyBuilder {
	now := metav1.Now()
	b.meta.DeletionTimestamp = &now
	return b
}

func (b *policyBuilder) build() *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{ObjectMeta: *b.meta.DeepCopy(), Spec: *b.spec.DeepCopy()}
}

func (b *policyBuilder) buildCluster() *policyv1alpha1.ClusterOverridePolicy {
	meta := *b.meta.DeepCopy()
	meta.Namespace = ""
	return &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: meta, Spec: *b.spec.DeepCopy()}
}

func byKind(apiVersion, kind string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind}
}

func byName(apiVersion, kind, name string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, Name: name}
}

func byLabels(apiVersion, kind string, labels map[string]string) policyv1alpha1.ResourceSelector {
	return policyv1alpha1.ResourceSelector{APIVersion: apiVersion, Kind: kind, LabelSelector: &metav1.LabelSelector{MatchLabels: labels}}
}

func clusters(names ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: names}
}

// addLabel is an overriders value that adds one label.
func addLabel(key, value string) policyv1alpha1.Overriders {
	return policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{
		{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{key: value}}}}
}

func plaintext(op policyv1alpha1.OverriderOperator, path, valueJSON string) policyv1alpha1.PlaintextOverrider {
	return policyv1alpha1.PlaintextOverrider{Operator: op, Path: path, Value: rawJSON(valueJSON)}
}

func rawJSON(s string) apiextensionsv1.JSON {
	if s == "" {
		return apiextensionsv1.JSON{}
	}
	return apiextensionsv1.JSON{Raw: []byte(s)}
}

func member(name string, labels map[string]string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}
}

// object decodes a YAML manifest.
func object(t testing.TB, manifest string) *unstructured.Unstructured {
	t.Helper()
	asJSON, err := yaml.YAMLToJSON([]byte(manifest))
	if err != nil {
		t.Fatalf("YAMLToJSON: %v", err)
	}
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON(asJSON); err != nil {
		t.Fatalf("decode manifest: %v", err)
	}
	return u
}

// deployment is a Deployment in namespace "default" with one container per image, named
// c0, c1, ...
func deployment(t *testing.T, name string, labels map[string]string, images ...string) *unstructured.Unstructured {
	t.Helper()
	var containers []any
	for i, image := range images {
		containers = append(containers, map[string]any{"name": "c" + string(rune('0'+i)), "image": image})
	}
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1",
		"kind":       "Deployment",
		"metadata":   map[string]any{"name": name, "namespace": "default"},
		"spec": map[string]any{
			"replicas": int64(1),
			"template": map[string]any{"spec": map[string]any{"containers": containers}},
		},
	}}
	u.SetLabels(labels)
	return u
}

// referenceFile reads a file of Karmada's reference material (../shared/reference beside the
// checkout); without it the test is skipped (and fails under CI).
func referenceFile(t *testing.T, rel string) []byte {
	t.Helper()
	data, err := os.ReadFile(reftest.Shared(t, "reference", rel))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// decodeYAML decodes a YAML document into a typed value.
func decodeYAML(t *testing.T, data []byte, into any) {
	t.Helper()
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("decode YAML: %v", err)
	}
}

// mustJSON renders v for comparisons in failure messages.
func mustJSON(t *testing.T, v any) string {
	t.Helper()
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}
