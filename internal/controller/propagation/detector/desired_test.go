package detector

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/template"
)

func deploymentTemplate(rv string, generation int64, labels map[string]string) *unstructured.Unstructured {
	u := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment",
		"metadata": map[string]any{"name": "nginx", "namespace": "default", "uid": "tmpl-uid"},
		"spec":     map[string]any{"replicas": int64(3)},
	}}
	u.SetResourceVersion(rv)
	u.SetGeneration(generation)
	u.SetLabels(labels)
	return u
}

func nginxPolicy() *policy {
	spec := &policyv1alpha1.PropagationSpec{Placement: policyv1alpha1.Placement{
		ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}}}
	return &policy{claim: policymatch.Claim{Kind: policymatch.KindPropagationPolicy, Namespace: "default", Name: "nginx", PermanentID: "pp-id"}, spec: spec}
}

func TestDesiredBindingOfANewTemplate(t *testing.T) {
	tmpl := deploymentTemplate("10", 1, map[string]string{"app": "nginx"})
	b := desiredBinding(binding.New("default", "nginx-deployment"), nil, tmpl, nginxPolicy(), applyPlacement, shapeOf(t, tmpl))
	spec := binding.Spec(b)
	if spec.Resource.ResourceVersion != "10" || spec.Resource.UID != "tmpl-uid" || spec.Resource.Kind != "Deployment" {
		t.Errorf("spec.resource = %+v", spec.Resource)
	}
	if spec.Replicas != 3 {
		t.Errorf("spec.replicas = %d, want 3 from the template", spec.Replicas)
	}
	if diff := cmp.Diff([]string{"member1"}, spec.Placement.ClusterAffinity.ClusterNames); diff != "" {
		t.Errorf("placement not copied from the policy (-want +got):\n%s", diff)
	}
	if got := b.GetLabels()[policymatch.PropagationPolicyPermanentIDLabel]; got != "pp-id" {
		t.Errorf("claim label = %q, want pp-id", got)
	}
	if b.GetLabels()[binding.PermanentIDLabel] == "" {
		t.Error("a new binding gets its own permanent id")
	}
	if got := b.GetAnnotations()[template.FingerprintAnnotation]; got != template.Fingerprint(tmpl) {
		t.Errorf("fingerprint annotation = %q, want %q", got, template.Fingerprint(tmpl))
	}
	if refs := b.GetOwnerReferences(); len(refs) != 1 || refs[0].UID != "tmpl-uid" || refs[0].Controller == nil || !*refs[0].Controller {
		t.Errorf("owner references = %+v, want the template as controller", refs)
	}
}

func TestDesiredBindingKeepsTheRecordedVersionWhenOnlyStatusMoved(t *testing.T) {
	first := deploymentTemplate("10", 1, nil)
	current := desiredBinding(binding.New("default", "nginx-deployment"), nil, first, nginxPolicy(), applyPlacement, shapeOf(t, first))
	id := current.GetLabels()[binding.PermanentIDLabel]
	for _, tc := range []struct {
		name   string
		tmpl   *unstructured.Unstructured
		wantRV string
	}{
		{"a status write (same generation, labels and annotations) keeps the binding as it is", deploymentTemplate("11", 1, nil), "10"},
		{"a spec change (new generation) is recorded", deploymentTemplate("12", 2, nil), "12"},
		{"a label change is recorded", deploymentTemplate("13", 1, map[string]string{"tier": "web"}), "13"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := desiredBinding(current.DeepCopyObject().(binding.Object), current, tc.tmpl, nginxPolicy(), applyPlacement, shapeOf(t, tc.tmpl))
			if got := binding.Spec(b).Resource.ResourceVersion; got != tc.wantRV {
				t.Errorf("recorded resourceVersion = %s, want %s", got, tc.wantRV)
			}
			if got := b.GetLabels()[binding.PermanentIDLabel]; got != id {
				t.Errorf("permanent id changed from %s to %s", id, got)
			}
		})
	}
}

func TestDesiredBindingOfALazyPolicyKeepsThePlacementAndTakesTheClaim(t *testing.T) {
	first := deploymentTemplate("10", 1, nil)
	current := desiredBinding(binding.New("default", "nginx-deployment"), nil, first, nginxPolicy(), applyPlacement, shapeOf(t, first))
	lazy := &policy{
		claim: policymatch.Claim{Kind: policymatch.KindClusterPropagationPolicy, Name: "lazy", PermanentID: "lazy-id"},
		spec: &policyv1alpha1.PropagationSpec{ActivationPreference: policyv1alpha1.LazyActivation, Placement: policyv1alpha1.Placement{
			ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member2"}}}},
	}
	claimedTemplate := deploymentTemplate("11", 2, map[string]string{policymatch.ClusterPropagationPolicyPermanentIDLabel: "lazy-id"})
	b := desiredBinding(current.DeepCopyObject().(binding.Object), current, claimedTemplate, lazy, keepPlacement, shapeOf(t, claimedTemplate))
	if diff := cmp.Diff([]string{"member1"}, binding.Spec(b).Placement.ClusterAffinity.ClusterNames); diff != "" {
		t.Errorf("the placement changed (-want +got):\n%s", diff)
	}
	wantLabels := map[string]string{policymatch.ClusterPropagationPolicyPermanentIDLabel: "lazy-id", binding.PermanentIDLabel: current.GetLabels()[binding.PermanentIDLabel]}
	if diff := cmp.Diff(wantLabels, b.GetLabels()); diff != "" {
		t.Errorf("labels: the claim is not the Lazy policy's alone (-want +got):\n%s", diff)
	}
	for _, k := range []string{policymatch.PropagationPolicyNameAnnotation, policymatch.PropagationPolicyNamespaceAnnotation} {
		if _, ok := b.GetAnnotations()[k]; ok {
			t.Errorf("annotation %s of the previous claim is left", k)
		}
	}
	if b.GetAnnotations()[policymatch.ClusterPropagationPolicyNameAnnotation] != "lazy" {
		t.Errorf("annotations %v lack the Lazy policy's name", b.GetAnnotations())
	}
	if got := binding.Spec(b).Resource.ResourceVersion; got != "11" || b.GetAnnotations()[template.FingerprintAnnotation] != template.Fingerprint(claimedTemplate) {
		t.Errorf("the binding does not follow the template's version (%s), so its Works would wait for it", got)
	}
}

func shapeOf(t *testing.T, obj *unstructured.Unstructured) workloadShape {
	t.Helper()
	s, err := workloadShapeOf(context.Background(), interpreter.Or(nil), obj)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
