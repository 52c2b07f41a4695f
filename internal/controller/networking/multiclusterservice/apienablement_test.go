package multiclusterservice

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// A cluster lacks EndpointSlices only when its complete API list does not
// have them; one that has not reported, or reported in part, is given the
// benefit of the doubt, as Karmada does.
func TestLacksEndpointSlices(t *testing.T) {
	complete := func(s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionCompleteAPIEnablements, Status: s}}
	}
	slices := []clusterv1alpha1.APIEnablement{{GroupVersion: "discovery.k8s.io/v1", Resources: []clusterv1alpha1.APIResource{{Name: "endpointslices", Kind: "EndpointSlice"}}}}
	apps := []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}}
	for _, tc := range []struct {
		name   string
		status clusterv1alpha1.ClusterStatus
		want   bool
	}{
		{"not reported yet", clusterv1alpha1.ClusterStatus{}, false},
		{"served", clusterv1alpha1.ClusterStatus{APIEnablements: slices, Conditions: complete(metav1.ConditionTrue)}, false},
		{"missing from a complete list", clusterv1alpha1.ClusterStatus{APIEnablements: apps, Conditions: complete(metav1.ConditionTrue)}, true},
		{"missing from an incomplete list", clusterv1alpha1.ClusterStatus{APIEnablements: apps, Conditions: complete(metav1.ConditionFalse)}, false},
	} {
		if got := lacksEndpointSlices(&clusterv1alpha1.Cluster{Status: tc.status}); got != tc.want {
			t.Errorf("%s: lacksEndpointSlices = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestIncompatibilityAndWithout(t *testing.T) {
	if err := incompatibility("provider", nil, "x"); err != nil {
		t.Errorf("no cluster: %v", err)
	}
	want := "consumer cluster(s) m2, m3 do not serve discovery.k8s.io/v1 EndpointSlice (status.apiEnablements): no EndpointSlice is dispatched to them"
	if err := incompatibility("consumer", []string{"m2", "m3"}, "no EndpointSlice is dispatched to them"); err == nil || err.Error() != want {
		t.Errorf("err = %v, want %s", err, want)
	}
	names := []string{"m1", "m2", "m3"}
	if diff := cmp.Diff([]string{"m1"}, without(names, []string{"m2", "m3"})); diff != "" {
		t.Errorf("without (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"m1", "m2", "m3"}, names); diff != "" {
		t.Errorf("without changed its input (-want +got):\n%s", diff)
	}
}
