package dependencies

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Requirers that all overwrite, or all abort, agree; a mix resolves to
// Overwrite and is Karmada's DependencyPolicyConflict, naming both sides.
func TestResolveConflictResolution(t *testing.T) {
	rb := func(name string, cr policyv1alpha1.ConflictResolution) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{ConflictResolution: cr}}
	}
	for _, tc := range []struct {
		name      string
		requirers []*workv1alpha2.ResourceBinding
		want      policyv1alpha1.ConflictResolution
		conflict  string
	}{
		{"none", nil, policyv1alpha1.ConflictAbort, ""},
		{"an empty value aborts", []*workv1alpha2.ResourceBinding{rb("a", ""), rb("b", policyv1alpha1.ConflictAbort)}, policyv1alpha1.ConflictAbort, ""},
		{"all overwrite", []*workv1alpha2.ResourceBinding{rb("a", policyv1alpha1.ConflictOverwrite), rb("b", policyv1alpha1.ConflictOverwrite)}, policyv1alpha1.ConflictOverwrite, ""},
		{"a mix", []*workv1alpha2.ResourceBinding{rb("a", ""), rb("b", policyv1alpha1.ConflictOverwrite), rb("c", policyv1alpha1.ConflictAbort)}, policyv1alpha1.ConflictOverwrite,
			"the workloads that require this dependency disagree on conflictResolution: Overwrite in ResourceBinding(ns/b), Abort in ResourceBinding(ns/a), ResourceBinding(ns/c); Overwrite is used"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := resolveConflictResolution(tc.requirers)
			msg := ""
			if err != nil {
				msg = err.Error()
			}
			if got != tc.want || msg != tc.conflict {
				t.Errorf("got %s, %q; want %s, %q", got, msg, tc.want, tc.conflict)
			}
		})
	}
}

// Any requirer that preserves its resources makes a shared dependency
// preserved; a mix is a DependencyPolicyConflict naming both sides.
func TestResolvePreserve(t *testing.T) {
	rb := func(name string, preserve *bool) *workv1alpha2.ResourceBinding {
		return &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: name},
			Spec: workv1alpha2.ResourceBindingSpec{PreserveResourcesOnDeletion: preserve}}
	}
	yes, no := new(true), new(false)
	if got, err := resolvePreserve([]*workv1alpha2.ResourceBinding{rb("a", nil), rb("b", no)}); got != nil || err != nil {
		t.Errorf("none preserves: %v, %v", got, err)
	}
	if got, err := resolvePreserve([]*workv1alpha2.ResourceBinding{rb("a", yes)}); got == nil || !*got || err != nil {
		t.Errorf("all preserve: %v, %v", got, err)
	}
	got, err := resolvePreserve([]*workv1alpha2.ResourceBinding{rb("a", yes), rb("b", nil)})
	if got == nil || !*got || err == nil || err.Error() != "the workloads that require this dependency disagree on preserveResourcesOnDeletion: true in ResourceBinding(ns/a), false in ResourceBinding(ns/b); true is used" {
		t.Errorf("a mix: %v, %v", got, err)
	}
}
