package namespace

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/override"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

func TestNamespaceManifestAppliesClusterOverridePolicies(t *testing.T) {
	ns := &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "shop",
		Labels:      map[string]string{"team": "a", "kubernetes.io/metadata.name": "shop"},
		Annotations: map[string]string{"owner": "a@example.com", corev1.LastAppliedConfigAnnotation: "{}"}}}
	cop := &policyv1alpha1.ClusterOverridePolicy{ObjectMeta: metav1.ObjectMeta{Name: "mesh"}, Spec: policyv1alpha1.OverrideSpec{
		ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "Namespace", Name: "shop"}},
		OverrideRules: []policyv1alpha1.RuleWithCluster{{
			TargetCluster: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}},
			Overriders: policyv1alpha1.Overriders{LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{
				Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{"mesh-injection": "enabled"}}}},
		}},
	}}
	w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Namespace: "karmada-es-member1", Name: "shop-1234"}}
	for _, tc := range []struct {
		cluster, wantMesh string
	}{{"member1", "enabled"}, {"member2", ""}} {
		t.Run(tc.cluster, func(t *testing.T) {
			c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: tc.cluster}}
			m, applied, workAnnotations, err := namespaceManifest(w, ns, c, []*policyv1alpha1.ClusterOverridePolicy{cop})
			if err != nil {
				t.Fatal(err)
			}
			// The applied override is recorded for the Work, not on the manifest.
			if got := applied.ClusterOverridePolicyNames(); (tc.wantMesh != "") != (len(got) == 1) {
				t.Errorf("applied ClusterOverridePolicies %v", got)
			}
			if _, on := m.GetAnnotations()[override.AppliedClusterOverridesAnnotation]; on {
				t.Errorf("the manifest carries %s; Karmada records it on the Work", override.AppliedClusterOverridesAnnotation)
			}
			if _, rec := workAnnotations[override.AppliedClusterOverridesAnnotation]; rec != (tc.wantMesh != "") {
				t.Errorf("Work annotations %v", workAnnotations)
			}
			l, a := m.GetLabels(), m.GetAnnotations()
			if l["mesh-injection"] != tc.wantMesh {
				t.Errorf("mesh-injection = %q, want %q", l["mesh-injection"], tc.wantMesh)
			}
			if l["team"] != "a" || l["kubernetes.io/metadata.name"] != "" {
				t.Errorf("labels = %v: the namespace's own labels, without the API server's name label", l)
			}
			if a["owner"] != "a@example.com" || a[corev1.LastAppliedConfigAnnotation] != "" {
				t.Errorf("annotations = %v: the namespace's own, without kubectl's last-applied", a)
			}
			if a[binding.WorkNameAnnotation] != w.Name || a[policymatch.ConflictResolutionAnnotation] != policymatch.ConflictResolutionOverwrite {
				t.Errorf("managed annotations missing: %v", a)
			}
		})
	}
}
