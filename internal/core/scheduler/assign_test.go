package scheduler

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestStaticWeights(t *testing.T) {
	three := clusters(cluster("member1"), cluster("member2"), cluster("member3"))
	two := clusters(cluster("member1"), cluster("member2"))
	place := func(rs *policyv1alpha1.ReplicaSchedulingStrategy) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{ReplicaScheduling: rs}
	}
	twoToOne := staticWeights(weight(2, "member1"), weight(1, "member2"))
	evenly := staticWeights(weight(1, "member1"), weight(1, "member2"), weight(1, "member3"))
	runScheduleCases(t, []scheduleCase{
		{
			name: "2:1 with 3 replicas gives 2 and 1",
			in:   Input{Placement: place(twoToOne), Replicas: 3, Clusters: two},
			want: targets("member1", 2, "member2", 1),
		},
		{
			name: "2:1 with 6 replicas gives 4 and 2",
			in:   Input{Placement: place(twoToOne), Replicas: 6, Clusters: two},
			want: targets("member1", 4, "member2", 2),
		},
		{
			name: "2:1 with 4 replicas gives the remainder to the heavier cluster",
			in:   Input{Placement: place(twoToOne), Replicas: 4, Clusters: two},
			want: targets("member1", 3, "member2", 1),
		},
		{
			name: "1:1:1 with 10 replicas gives the remainder to the first name",
			in:   Input{Placement: place(evenly), Replicas: 10, Clusters: three},
			want: targets("member1", 4, "member2", 3, "member3", 3),
		},
		{
			name: "1:1:1 with 10 replicas gives the remainder by the template's UID, not by where it was before",
			in: Input{Resource: workv1alpha2.ObjectReference{UID: "7a1f3c2e-0000-4000-8000-000000000002"},
				Placement: place(evenly), Replicas: 10, Clusters: three, Previous: targets("member1", 4, "member2", 3, "member3", 3)},
			want: targets("member1", 3, "member2", 3, "member3", 4),
		},
		{
			name: "2:1 with 2 replicas gives 1 and 1, by Webster's method as in Karmada",
			in:   Input{Placement: place(twoToOne), Replicas: 2, Clusters: two},
			want: targets("member1", 1, "member2", 1),
		},
		{
			name: "clusters left with no replicas are omitted",
			in:   Input{Placement: place(evenly), Replicas: 2, Clusters: three},
			want: targets("member1", 1, "member2", 1),
		},
		{
			name: "entries can select clusters by labelSelector",
			in: Input{
				Placement: place(staticWeights(
					policyv1alpha1.StaticClusterWeight{Weight: 3, TargetCluster: policyv1alpha1.ClusterAffinity{
						LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"env": "prod"}}}},
					weight(1, "member3"),
				)),
				Replicas: 7,
				Clusters: clusters(cluster("member1").labels("env", "prod"), cluster("member2").labels("env", "prod"), cluster("member3")),
			},
			want: targets("member1", 3, "member2", 3, "member3", 1),
		},
		{
			name: "a cluster matching several entries takes the largest weight",
			in: Input{
				Placement: place(staticWeights(weight(1, "member1", "member2"), weight(3, "member2"))),
				Replicas:  8,
				Clusters:  two,
			},
			want: targets("member1", 2, "member2", 6),
		},
		{
			name: "a feasible cluster that matches no entry gets no replicas",
			in:   Input{Placement: place(staticWeights(weight(1, "member1"))), Replicas: 5, Clusters: three},
			want: targets("member1", 5),
		},
		{
			name: "when no cluster matches any entry, all weigh the same",
			in:   Input{Placement: place(staticWeights(weight(4, "elsewhere"))), Replicas: 4, Clusters: two},
			want: targets("member1", 2, "member2", 2),
		},
		{
			name: "weights whose sum passes int64 still leave an unlisted cluster without replicas",
			in:   Input{Placement: place(staticWeights(weight(math.MaxInt64, "member1"), weight(math.MaxInt64, "member2"))), Replicas: 4, Clusters: three},
			want: targets("member1", 2, "member2", 2),
		},
		{
			name: "Weighted without weightPreference weighs feasible clusters equally",
			in:   Input{Placement: place(divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)), Replicas: 5, Clusters: three},
			want: targets("member1", 2, "member2", 2, "member3", 1),
		},
		{
			name: "Divided without a division preference is Weighted with equal weights",
			in:   Input{Placement: place(divided("")), Replicas: 5, Clusters: three},
			want: targets("member1", 2, "member2", 2, "member3", 1),
		},
		{
			name: "static weights do not care about free resources",
			in:   Input{Placement: place(twoToOne), Replicas: 30, Clusters: clusters(cluster("member1").pods(1), cluster("member2").pods(1))},
			want: targets("member1", 20, "member2", 10),
		},
		{
			name: "spread constraints are ignored for static weights, as in Karmada",
			in: Input{
				Placement: &policyv1alpha1.Placement{ReplicaScheduling: evenly,
					SpreadConstraints: []policyv1alpha1.SpreadConstraint{spreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 1)}},
				Replicas: 3,
				Clusters: three,
			},
			want: targets("member1", 1, "member2", 1, "member3", 1),
		},
		{
			name: "a resource without replicas goes to every feasible cluster, weighted or not",
			in:   Input{Placement: place(staticWeights(weight(1, "member1"))), Replicas: 0, Clusters: two},
			want: targets("member1", 0, "member2", 0),
		},
		{
			name:       "an invalid targetCluster selector is a scheduler error",
			in:         Input{Placement: place(staticWeights(policyv1alpha1.StaticClusterWeight{Weight: 1, TargetCluster: policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "a", Operator: "Near"}}}}})), Replicas: 1, Clusters: two},
			wantReason: ReasonSchedulerError,
		},
	})
}

func TestStaticWeightsAreDeterministic(t *testing.T) {
	in := Input{
		Resource:  deployment,
		Placement: &policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)},
		Replicas:  10,
		Clusters:  clusters(cluster("member3"), cluster("member1"), cluster("member2")),
	}
	first, err := Schedule(in)
	if err != nil {
		t.Fatal(err)
	}
	for range 50 {
		in.Clusters[0], in.Clusters[2] = in.Clusters[2], in.Clusters[0]
		got, err := Schedule(in)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(first, got); diff != "" {
			t.Fatalf("Schedule() changed with cluster order (-first +now):\n%s", diff)
		}
	}
}

func TestAggregated(t *testing.T) {
	aggregated := &policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)}
	sized := clusters(cluster("member1").pods(10), cluster("member2").pods(8), cluster("member3").pods(4))
	runScheduleCases(t, []scheduleCase{
		{
			name: "replicas that fit in the largest cluster all go there",
			in:   Input{Placement: aggregated, Replicas: 6, Clusters: sized},
			want: targets("member1", 6),
		},
		{
			name: "replicas spill into the next largest cluster, divided in proportion to free room",
			in:   Input{Placement: aggregated, Replicas: 12, Clusters: sized},
			want: targets("member1", 7, "member2", 5),
		},
		{
			name:       "replicas that do not fit anywhere are unschedulable, saying how many fit",
			in:         Input{Placement: aggregated, Replicas: 30, Clusters: sized},
			wantErr:    "not enough resources: the selected clusters can take 22 more replica(s), 30 needed",
			wantReason: ReasonUnschedulable,
		},
		{
			name: "free room is computed from per-replica requests",
			in: Input{
				Placement:           aggregated,
				Replicas:            7,
				ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: resources("cpu", "500m", "memory", "1Gi")},
				Clusters: clusters(
					cluster("member1").resources(resources("cpu", "4", "memory", "16Gi", "pods", "110"), resources("cpu", "1")),
					cluster("member2").resources(resources("cpu", "8", "memory", "4Gi", "pods", "110"), nil),
				),
			},
			want: targets("member1", 4, "member2", 3),
		},
		{
			name: "an unchanged replica count keeps the previous assignment",
			in:   Input{Placement: aggregated, Replicas: 6, Clusters: sized, Previous: targets("member2", 6)},
			want: targets("member2", 6),
		},
		{
			name: "scaling up fills previous holders first",
			in:   Input{Placement: aggregated, Replicas: 8, Clusters: sized, Previous: targets("member2", 3)},
			want: targets("member2", 8),
		},
		{
			name: "scaling up beyond the previous holders spills into the largest other cluster",
			in:   Input{Placement: aggregated, Replicas: 9, Clusters: sized, Previous: targets("member3", 3)},
			want: targets("member1", 4, "member3", 5),
		},
		{
			name: "scaling down keeps the largest previous holders",
			in:   Input{Placement: aggregated, Replicas: 6, Clusters: sized, Previous: targets("member1", 7, "member2", 5)},
			want: targets("member1", 6),
		},
		{
			name: "replicas of a cluster that is no longer feasible move to others",
			in: Input{Placement: aggregated, Replicas: 6, Previous: targets("member1", 4, "member2", 2),
				Clusters: clusters(cluster("member1").pods(10).taint("gone", "", "NoExecute"), cluster("member2").pods(8))},
			want: targets("member2", 6),
		},
	})
}

func TestDynamicWeight(t *testing.T) {
	dynamic := &policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights()}
	sized := clusters(cluster("a").pods(6), cluster("b").pods(12), cluster("c").pods(18))
	runScheduleCases(t, []scheduleCase{
		{
			name: "replicas follow free room: 6/12/18 available divide 12 replicas 2/4/6",
			in:   Input{Placement: dynamic, Replicas: 12, Clusters: sized},
			want: targets("a", 2, "b", 4, "c", 6),
		},
		{
			name: "a cluster with no room gets nothing",
			in:   Input{Placement: dynamic, Replicas: 4, Clusters: clusters(cluster("a").pods(0), cluster("b").pods(8))},
			want: targets("b", 4),
		},
		{
			name:       "more replicas than room is unschedulable",
			in:         Input{Placement: dynamic, Replicas: 40, Clusters: sized},
			wantErr:    "not enough resources: the selected clusters can take 36 more replica(s), 40 needed",
			wantReason: ReasonUnschedulable,
		},
		{
			name: "scaling up divides only the new replicas by free room",
			in:   Input{Placement: dynamic, Replicas: 18, Clusters: sized, Previous: targets("a", 2, "b", 4, "c", 6)},
			want: targets("a", 3, "b", 6, "c", 9),
		},
		{
			name: "scaling down divides by what each cluster held",
			in:   Input{Placement: dynamic, Replicas: 6, Clusters: sized, Previous: targets("a", 2, "b", 4, "c", 6)},
			want: targets("a", 1, "b", 2, "c", 3),
		},
		{
			name: "clusters without a resource summary count as unlimited",
			in:   Input{Placement: dynamic, Replicas: 5, Clusters: clusters(cluster("a"), cluster("b"))},
			want: targets("a", 3, "b", 2),
		},
		{
			name:       "an unknown dynamicWeight is a scheduler error",
			in:         Input{Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: "Cost"}}}, Replicas: 1, Clusters: sized},
			wantErr:    `replicaScheduling: unknown weightPreference.dynamicWeight "Cost"`,
			wantReason: ReasonSchedulerError,
		},
	})
}

func TestSpreadConstraints(t *testing.T) {
	byCluster := func(minGroups, maxGroups int) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			spreadBy(policyv1alpha1.SpreadByFieldCluster, minGroups, maxGroups)}}
	}
	byRegion := func(regionMin, regionMax, clusterMin, clusterMax int) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
			spreadBy(policyv1alpha1.SpreadByFieldRegion, regionMin, regionMax),
			spreadBy(policyv1alpha1.SpreadByFieldCluster, clusterMin, clusterMax)}}
	}
	sized := clusters(cluster("member1").pods(10), cluster("member2").pods(5), cluster("member3").pods(20))
	regional := clusters(
		cluster("east1").region("us-east").pods(10), cluster("east2").region("us-east").pods(9),
		cluster("west1").region("us-west").pods(30),
		cluster("eu1").region("eu").pods(5), cluster("eu2").region("eu").pods(5),
	)
	runScheduleCases(t, []scheduleCase{
		{
			name: "maxGroups by cluster keeps the clusters with the most free room",
			in:   Input{Placement: byCluster(1, 2), Replicas: 2, Clusters: sized},
			want: targets("member1", 2, "member3", 2),
		},
		{
			name: "maxGroups by cluster prefers previous holders over bigger clusters",
			in:   Input{Placement: byCluster(1, 1), Replicas: 2, Clusters: sized, Previous: targets("member2", 2)},
			want: targets("member2", 2),
		},
		{
			name: "maxGroups by cluster then divides replicas among the chosen clusters",
			in: Input{Placement: &policyv1alpha1.Placement{ReplicaScheduling: dynamicWeights(),
				SpreadConstraints: byCluster(1, 2).SpreadConstraints}, Replicas: 6, Clusters: sized},
			want: targets("member1", 2, "member3", 4),
		},
		{
			name:       "fewer feasible clusters than minGroups is unschedulable",
			in:         Input{Placement: byCluster(4, 0), Replicas: 2, Clusters: sized},
			wantErr:    "spreadConstraints: 3 cluster(s) feasible, fewer than minGroups 4 by cluster",
			wantReason: ReasonUnschedulable,
		},
		{
			name: "spreading by region takes the best regions, one cluster each first",
			in:   Input{Placement: byRegion(1, 2, 1, 2), Replicas: 1, Clusters: regional},
			want: targets("east1", 1, "west1", 1),
		},
		{
			name: "spreading by region fills up to the cluster limit within the chosen regions",
			in:   Input{Placement: byRegion(2, 2, 1, 3), Replicas: 1, Clusters: regional},
			want: targets("east1", 1, "east2", 1, "west1", 1),
		},
		{
			name: "spreading by region without a cluster limit takes every cluster of the chosen regions",
			in:   Input{Placement: byRegion(2, 2, 1, 0), Replicas: 1, Clusters: regional},
			want: targets("east1", 1, "east2", 1, "west1", 1),
		},
		{
			name:       "too few regions is unschedulable",
			in:         Input{Placement: byRegion(4, 4, 1, 0), Replicas: 1, Clusters: regional},
			wantErr:    "spreadConstraints: feasible clusters span 3 region(s), fewer than minGroups 4",
			wantReason: ReasonUnschedulable,
		},
		{
			name:       "a cluster limit below the region minimum is unschedulable",
			in:         Input{Placement: byRegion(3, 3, 1, 2), Replicas: 1, Clusters: regional},
			wantErr:    "spreadConstraints: maxGroups 2 by cluster cannot cover minGroups 3 by region",
			wantReason: ReasonUnschedulable,
		},
		{
			name: "spreading by zone groups multi-zone clusters by their first zone",
			in: Input{
				Placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
					spreadBy(policyv1alpha1.SpreadByFieldZone, 2, 2), spreadBy(policyv1alpha1.SpreadByFieldCluster, 2, 2)}},
				Replicas: 1,
				Clusters: clusters(cluster("a").zones("z1", "z2").pods(9), cluster("b").zones("z1").pods(8), cluster("c").zones("z2").pods(1)),
			},
			want: targets("a", 1, "c", 1),
		},
		{
			name: "spreadByLabel is not supported yet",
			in: Input{Placement: &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{
				{SpreadByLabel: "topology", MinGroups: 1}}}, Replicas: 1, Clusters: sized},
			wantErr:    "spreadConstraints: spreadByLabel is not supported",
			wantReason: ReasonSchedulerError,
		},
	})
}
