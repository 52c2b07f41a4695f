package scheduler

import (
	"fmt"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// benchClusters builds n Ready clusters in four tiers (label tier=0..3), three regions, with
// a resource summary, a NoSchedule taint on every tenth one, and a few dozen API groups so that
// the API filter does realistic work.
func benchClusters(n int) []*clusterv1alpha1.Cluster {
	var extraAPIs []clusterv1alpha1.APIEnablement
	for i := range 40 {
		extraAPIs = append(extraAPIs, clusterv1alpha1.APIEnablement{
			GroupVersion: fmt.Sprintf("group%d.example.io/v1", i),
			Resources:    []clusterv1alpha1.APIResource{{Name: "things", Kind: "Thing"}, {Name: "others", Kind: "Other"}},
		})
	}
	out := make([]*clusterv1alpha1.Cluster, n)
	for i := range n {
		b := cluster(fmt.Sprintf("member%03d", i)).
			labels("tier", fmt.Sprint(i%4)).
			region(fmt.Sprintf("region-%d", i%3)).
			resources(resources("cpu", fmt.Sprint(16+i%32), "memory", "64Gi", "pods", "110"), resources("cpu", "4", "memory", "8Gi", "pods", "30"))
		if i%10 == 9 {
			b.taint("dedicated", "batch", corev1.TaintEffectNoSchedule)
		}
		b.c.Status.APIEnablements = slices.Concat(extraAPIs, b.c.Status.APIEnablements)
		out[i] = b.build()
	}
	return out
}

func tierWeight(tier string, w int64) policyv1alpha1.StaticClusterWeight {
	return policyv1alpha1.StaticClusterWeight{Weight: w, TargetCluster: policyv1alpha1.ClusterAffinity{
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": tier}}}}
}

// BenchmarkSchedule schedules one Deployment of 1000 replicas over 100 member clusters with
// Divided replica scheduling, rescheduling against its own previous result (the common
// steady-state case).
func BenchmarkSchedule(b *testing.B) {
	members := benchClusters(100)
	requirements := &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "250m", "memory", "256Mi")}
	placements := []struct {
		name string
		rs   *policyv1alpha1.ReplicaSchedulingStrategy
	}{
		{"Weighted/static-by-labelSelector", staticWeights(tierWeight("0", 4), tierWeight("1", 3), tierWeight("2", 2), tierWeight("3", 1))},
		{"Weighted/equal", divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)},
		{"Weighted/dynamic", dynamicWeights()},
		{"Aggregated", divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)},
	}
	for _, p := range placements {
		b.Run(p.name, func(b *testing.B) {
			in := Input{
				Resource: deployment,
				Placement: &policyv1alpha1.Placement{
					ClusterAffinity:   &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"member000"}},
					ReplicaScheduling: p.rs,
				},
				Replicas:            1000,
				ReplicaRequirements: requirements,
				Clusters:            members,
			}
			previous, err := Schedule(in)
			if err != nil {
				b.Fatal(err)
			}
			in.Previous = previous
			in.Replicas = 1100 // a scale-up, so the division does real work each time
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Schedule(in); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
