package metricsadapter

import (
	"slices"
	"testing"

	"k8s.io/apimachinery/pkg/labels"

	"github.com/flotilla-io/flotilla/internal/core/hpa"
)

func TestClustersNamedSplitsTheClusterRequirementOff(t *testing.T) {
	for _, tc := range []struct {
		selector, rest string
		clusters       []string
		restricted     bool
	}{
		{"app=web", "app=web", nil, false},
		{"app=web," + hpa.QueryFromClusterLabel + "=member1", "app=web", []string{"member1"}, true},
		{hpa.QueryFromClusterLabel + " in (member1,member2),tier!=db", "tier!=db", []string{"member1", "member2"}, true},
		{hpa.QueryFromClusterLabel + "!=member1", hpa.QueryFromClusterLabel + "!=member1", nil, false},
	} {
		sel, err := labels.Parse(tc.selector)
		if err != nil {
			t.Fatal(err)
		}
		rest, clusters, restricted := clustersNamed(sel)
		slices.Sort(clusters)
		if rest.String() != tc.rest || !slices.Equal(clusters, tc.clusters) || restricted != tc.restricted {
			t.Errorf("%s: rest %q, clusters %v, restricted %v; want %q, %v, %v", tc.selector, rest, clusters, restricted, tc.rest, tc.clusters, tc.restricted)
		}
	}
}
