package scheduler

import (
	"strings"
	"testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestWorkloadAffinityFilters(t *testing.T) {
	members := clusters(cluster("member1"), cluster("member2"), cluster("member3"))
	aggregated := &policyv1alpha1.Placement{ReplicaScheduling: divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated)}
	runScheduleCases(t, []scheduleCase{
		{
			name: "the first workload of an affinity group is never blocked",
			in: Input{Replicas: 1, Clusters: members, Placement: aggregated,
				Workloads: &WorkloadGroups{AffinityGroup: "app.group=fe", Affinity: []Peer{{Name: "api-deployment"}}}},
			want: targets("member1", 1),
		},
		{
			name: "affinity keeps a group on the clusters its placed workloads share",
			in: Input{Replicas: 1, Clusters: members, Placement: aggregated,
				Workloads: &WorkloadGroups{AffinityGroup: "app.group=fe", Affinity: []Peer{{Name: "api-deployment", Clusters: []string{"member2", "member3"}}, {Name: "ui-deployment", Clusters: []string{"member3"}}}}},
			want: targets("member3", 1),
		},
		{
			name: "anti-affinity keeps a group apart",
			in: Input{Replicas: 0, Clusters: members,
				Workloads: &WorkloadGroups{AntiAffinityGroup: "app.group=fe", AntiAffinity: []Peer{{Name: "api-deployment", Clusters: []string{"member1"}}, {Name: "ui-deployment", Clusters: []string{"member3"}}}}},
			want: targets("member2", 0),
		},
		{
			name: "a cluster that already holds the workload is kept",
			in: Input{Replicas: 0, Clusters: members, Previous: targets("member1", 0),
				Workloads: &WorkloadGroups{AntiAffinityGroup: "app.group=fe", AntiAffinity: []Peer{{Name: "api-deployment", Clusters: []string{"member1", "member2"}}}}},
			want: targets("member1", 0, "member3", 0),
		},
	})
	in := Input{Resource: deployment, Replicas: 1, Clusters: members, Placement: aggregated,
		Workloads: &WorkloadGroups{AntiAffinityGroup: "app.group=fe", AntiAffinity: []Peer{{Name: "api-deployment", Clusters: []string{"member1", "member2", "member3"}}}}}
	rejections, err := Rejections(in)
	if err != nil {
		t.Fatal(err)
	}
	if len(rejections) != 3 || !strings.Contains(rejections[0].Reason, "workload anti-affinity group app.group=fe: api-deployment is placed on it") {
		t.Errorf("rejections name the rule and the other workload: %+v", rejections)
	}
}
