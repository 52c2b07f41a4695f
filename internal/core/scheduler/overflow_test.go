package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestOverflowAffinities(t *testing.T) {
	// idc is preferred; cloud-a and then cloud-b take what it cannot.
	tiered := func(rs *policyv1alpha1.ReplicaSchedulingStrategy) *policyv1alpha1.Placement {
		return &policyv1alpha1.Placement{
			ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
				AffinityName:    "idc",
				ClusterAffinity: *names("member1"),
				OverflowAffinities: []policyv1alpha1.OverflowClusterAffinityTerm{
					{AffinityName: "cloud-a", ClusterAffinity: *names("member2")},
					{AffinityName: "cloud-b", ClusterAffinity: *names("member2", "member3")},
				},
			}},
			ReplicaScheduling: rs,
		}
	}
	aggregated := divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)
	tests := []struct {
		name    string
		in      Input
		want    []workv1alpha2.TargetCluster
		wantErr string
	}{
		{
			name: "the preferred group takes what it can, the first overflow group the rest",
			in: Input{Placement: tiered(aggregated), Replicas: 8,
				Clusters: clusters(cluster("member1").pods(4), cluster("member2").pods(10), cluster("member3").pods(10))},
			want: targets("member1", 4, "member2", 4),
		},
		{
			name: "a preferred group with room takes everything, though an overflow cluster has more",
			in: Input{Placement: tiered(aggregated), Replicas: 3,
				Clusters: clusters(cluster("member1").pods(4), cluster("member2").pods(10), cluster("member3").pods(10))},
			want: targets("member1", 3),
		},
		{
			name: "groups spill in order: a cluster in two overflow groups belongs to the first",
			in: Input{Placement: tiered(aggregated), Replicas: 9,
				Clusters: clusters(cluster("member1").pods(4), cluster("member2").pods(3), cluster("member3").pods(10))},
			want: targets("member1", 4, "member2", 3, "member3", 2),
		},
		{
			name: "scaling in takes replicas back from the last group first",
			in: Input{Placement: tiered(aggregated), Replicas: 6, Previous: targets("member1", 4, "member2", 3, "member3", 2),
				Clusters: clusters(cluster("member1").pods(0), cluster("member2").pods(0), cluster("member3").pods(8))},
			want: targets("member1", 4, "member2", 2),
		},
		{
			name: "scaling in below the preferred group's share leaves it alone",
			in: Input{Placement: tiered(aggregated), Replicas: 4, Previous: targets("member1", 4, "member2", 4),
				Clusters: clusters(cluster("member1").pods(0), cluster("member2").pods(0), cluster("member3").pods(8))},
			want: targets("member1", 4),
		},
		{
			name: "scaling in never moves replicas into the preferred group, though it has room again",
			in: Input{Placement: tiered(aggregated), Replicas: 5, Previous: targets("member1", 3, "member2", 3),
				Clusters: clusters(cluster("member1").pods(3), cluster("member2").pods(0), cluster("member3").pods(8))},
			want: targets("member1", 3, "member2", 2),
		},
		{
			name: "scaling out keeps what each group holds and fills the preferred one first",
			in: Input{Placement: tiered(aggregated), Replicas: 10, Previous: targets("member1", 2, "member2", 2),
				Clusters: clusters(cluster("member1").pods(2), cluster("member2").pods(10), cluster("member3").pods(10))},
			want: targets("member1", 4, "member2", 6),
		},
		{
			name: "an unchanged placement stands, though the preferred group reports room it has just given",
			in: Input{Placement: tiered(aggregated), Replicas: 8, Previous: targets("member1", 4, "member2", 4),
				Clusters: clusters(cluster("member1").pods(4), cluster("member2").pods(6), cluster("member3").pods(10))},
			want: targets("member1", 4, "member2", 4),
		},
		{
			name: "dynamic weight divides within a group by free room",
			in: Input{Placement: &policyv1alpha1.Placement{
				ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
					AffinityName:       "idc",
					ClusterAffinity:    *names("member1", "member2"),
					OverflowAffinities: []policyv1alpha1.OverflowClusterAffinityTerm{{AffinityName: "cloud", ClusterAffinity: *names("member3")}},
				}},
				ReplicaScheduling: dynamicWeights(),
			}, Replicas: 12,
				Clusters: clusters(cluster("member1").pods(6), cluster("member2").pods(3), cluster("member3").pods(10))},
			want: targets("member1", 6, "member2", 3, "member3", 3),
		},
		{
			name: "spread constraints choose the preferred group first, whatever its room",
			in: Input{Placement: func() *policyv1alpha1.Placement {
				p := tiered(aggregated)
				p.SpreadConstraints = []policyv1alpha1.SpreadConstraint{spreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 2)}
				return p
			}(), Replicas: 6,
				Clusters: clusters(cluster("member1").pods(2), cluster("member2").pods(5), cluster("member3").pods(10))},
			want: targets("member1", 2, "member2", 4),
		},
		{
			name: "not enough room in every group together is unschedulable",
			in: Input{Placement: tiered(aggregated), Replicas: 20,
				Clusters: clusters(cluster("member1").pods(4), cluster("member2").pods(3), cluster("member3").pods(10))},
			wantErr: "not enough resources: the clusters of the preferred group and its overflowAffinities can take 17 replica(s), 20 needed",
		},
		{
			name: "a cluster in no group is rejected, naming the overflow groups too",
			in: Input{Placement: tiered(aggregated), Replicas: 2,
				Clusters: clusters(cluster("member1").notReady(), cluster("member4"))},
			wantErr: "0/2 clusters are available in clusterAffinities[idc]: member1: cluster is not Ready; member4: not in clusterAffinities[idc].clusterNames, nor in any of its overflowAffinities",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.in.Resource = deployment
			d, err := Decide(tt.in)
			if tt.wantErr != "" {
				if err == nil || err.Error() != tt.wantErr {
					t.Fatalf("error = %v, want %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, d.Clusters); diff != "" {
				t.Errorf("clusters (-want +got):\n%s", diff)
			}
			if d.AffinityName != "idc" {
				t.Errorf("affinity name %q, want the term's, idc", d.AffinityName)
			}
		})
	}
}

func TestGroupsNameEachClustersFirstGroup(t *testing.T) {
	in := Input{Placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{{
		AffinityName:    "idc",
		ClusterAffinity: *names("member1"),
		OverflowAffinities: []policyv1alpha1.OverflowClusterAffinityTerm{
			{AffinityName: "cloud", ClusterAffinity: *names("member1", "member2")},
			{AffinityName: "any"},
		},
	}}}, Clusters: clusters(cluster("member3"), cluster("member1"), cluster("member2"))}
	got, err := Groups(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []Group{{Name: "idc", Clusters: []string{"member1"}}, {Name: "cloud", Overflow: true, Clusters: []string{"member2"}}, {Name: "any", Overflow: true, Clusters: []string{"member3"}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	in.Placement.ClusterAffinities[0].OverflowAffinities = nil
	if got, _ := Groups(in); got != nil {
		t.Errorf("a term without overflow: %v, want nil", got)
	}
}
