package override

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func labelsPolicy(name string, generation int64, key string) *policyv1alpha1.OverridePolicy {
	return &policyv1alpha1.OverridePolicy{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "demo", UID: types.UID("uid-" + name), Generation: generation},
		Spec: policyv1alpha1.OverrideSpec{OverrideRules: []policyv1alpha1.RuleWithCluster{{Overriders: policyv1alpha1.Overriders{
			LabelsOverrider: []policyv1alpha1.LabelAnnotationOverrider{{Operator: policyv1alpha1.OverriderOpAdd, Value: map[string]string{key: "x"}}}}}}},
	}
}

func TestInForceLeavesOutInvalidPolicies(t *testing.T) {
	var v Validity
	good, bad := labelsPolicy("good", 1, "team"), labelsPolicy("bad", 1, "bad key!")
	ops, _ := v.InForce([]*policyv1alpha1.OverridePolicy{good, bad}, nil)
	if len(ops) != 1 || ops[0] != good {
		t.Fatalf("InForce kept %d policies, want only the valid one", len(ops))
	}
	// Fixed in a new generation, the policy takes effect.
	fixed := labelsPolicy("bad", 2, "fixed")
	if ops, _ := v.InForce([]*policyv1alpha1.OverridePolicy{fixed}, nil); len(ops) != 1 {
		t.Error("a policy fixed in a new generation must take effect")
	}
}
