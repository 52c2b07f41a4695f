package binding

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/util/validation"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestTargetsIsTheUnionOfClustersAndRequiredBy(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{
		Clusters: []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 3}},
		RequiredBy: []workv1alpha2.BindingSnapshot{
			{Namespace: "shop", Name: "a-deployment", Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}}},
			{Namespace: "shop", Name: "b-deployment", Clusters: []workv1alpha2.TargetCluster{{Name: "member3"}, {Name: "member1"}}},
		},
	}
	want := []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 3}, {Name: "member1"}, {Name: "member3"}}
	if diff := cmp.Diff(want, Targets(spec)); diff != "" {
		t.Errorf("Targets (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(spec.Clusters, Targets(&workv1alpha2.ResourceBindingSpec{Clusters: spec.Clusters})); diff != "" {
		t.Errorf("Targets without requiredBy is not spec.clusters:\n%s", diff)
	}
}

func TestDependedByLabelIsAValidKeyForLongNames(t *testing.T) {
	a := DependedByLabel("shop", strings.Repeat("x", 250))
	if errs := validation.IsQualifiedName(a); len(errs) > 0 {
		t.Errorf("%s: %v", a, errs)
	}
	if a == DependedByLabel("shop", strings.Repeat("x", 249)) {
		t.Errorf("two bindings share a label key")
	}
	if !strings.HasPrefix(a, DependedByLabelPrefix) {
		t.Errorf("%s lacks Karmada's prefix", a)
	}
}
