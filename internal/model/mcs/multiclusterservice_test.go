package mcs

import (
	"slices"
	"testing"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
)

// Each version's fields name the clusters, the newest first; none means
// every registered cluster; unknown names are returned apart.
func TestProvidersAndConsumers(t *testing.T) {
	clusters := []string{"member1", "member2", "member3"}
	sel := func(names ...string) []networkingv1alpha1.ClusterSelector {
		var out []networkingv1alpha1.ClusterSelector
		for _, n := range names {
			out = append(out, networkingv1alpha1.ClusterSelector{Name: n})
		}
		return out
	}
	cases := []struct {
		name                         string
		spec                         networkingv1alpha1.MultiClusterServiceSpec
		providers, consumers, absent []string
	}{
		{name: "v1.7 range.clusterNames are the consumers",
			spec:      networkingv1alpha1.MultiClusterServiceSpec{Range: networkingv1alpha1.ExposureRange{ClusterNames: []string{"member2"}}},
			providers: clusters, consumers: []string{"member2"}},
		{name: "v1.8 fields",
			spec:      networkingv1alpha1.MultiClusterServiceSpec{ServiceProvisionClusters: []string{"member1"}, ServiceConsumptionClusters: []string{"member3"}},
			providers: []string{"member1"}, consumers: []string{"member3"}},
		{name: "v1.9 fields win over the older ones",
			spec: networkingv1alpha1.MultiClusterServiceSpec{ProviderClusters: sel("member2", "member1"), ConsumerClusters: sel("member3"),
				ServiceProvisionClusters: []string{"member3"}, Range: networkingv1alpha1.ExposureRange{ClusterNames: []string{"member1"}}},
			providers: []string{"member1", "member2"}, consumers: []string{"member3"}},
		{name: "no lists: every cluster", providers: clusters, consumers: clusters},
		{name: "unknown names apart",
			spec:      networkingv1alpha1.MultiClusterServiceSpec{ProviderClusters: sel("member1", "member9"), ConsumerClusters: sel("member9")},
			providers: []string{"member1"}, consumers: nil, absent: []string{"member9"}},
	}
	for _, tc := range cases {
		m := &networkingv1alpha1.MultiClusterService{Spec: tc.spec}
		p, up := Providers(m, clusters)
		c, uc := Consumers(m, clusters)
		unknown := slices.Compact(slices.Sorted(slices.Values(append(up, uc...))))
		if !slices.Equal(p, tc.providers) || !slices.Equal(c, tc.consumers) || !slices.Equal(unknown, tc.absent) {
			t.Errorf("%s: providers %v consumers %v unknown %v; want %v %v %v", tc.name, p, c, unknown, tc.providers, tc.consumers, tc.absent)
		}
	}
}

func TestManagedBy(t *testing.T) {
	if got := JoinManagedBy([]string{ManagedByServiceExport, ManagedByMultiClusterService, ManagedByServiceExport}); got != "MultiClusterService.ServiceExport" {
		t.Errorf("JoinManagedBy = %q", got)
	}
	if got := ManagedBy("MultiClusterService.ServiceExport"); !slices.Equal(got, []string{"MultiClusterService", "ServiceExport"}) {
		t.Errorf("ManagedBy = %v", got)
	}
	if ManagedBy("") != nil || JoinManagedBy(nil) != "" {
		t.Error("no owners is the empty value")
	}
}
