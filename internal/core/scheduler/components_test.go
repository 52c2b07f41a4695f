package scheduler

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// A FlinkDeployment-like workload (one 4-CPU job manager, four 2-CPU task managers: 12 CPU a
// set) pinned to one cluster goes where a whole set fits, with its components recorded.
func TestComponentSetsPinnedToOneCluster(t *testing.T) {
	components := []workv1alpha2.Component{
		{Name: "jobmanager", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: resources("cpu", "4")}},
		{Name: "taskmanager", Replicas: 4, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: resources("cpu", "2")}},
	}
	pinned := &policyv1alpha1.Placement{SpreadConstraints: []policyv1alpha1.SpreadConstraint{spreadBy(policyv1alpha1.SpreadByFieldCluster, 1, 1)}}
	in := Input{Resource: deployment, Placement: pinned, Components: components, MultiplePodTemplates: true,
		Clusters: clusters(
			cluster("member1").resources(resources("cpu", "8", "pods", "110"), nil),
			cluster("member2").resources(resources("cpu", "16", "pods", "110"), nil))}
	d, err := Decide(in)
	if err != nil {
		t.Fatal(err)
	}
	want := []workv1alpha2.TargetCluster{{Name: "member2", Components: []workv1alpha2.ComponentReplicas{{Name: "jobmanager", Replicas: 1}, {Name: "taskmanager", Replicas: 4}}}}
	if diff := cmp.Diff(want, d.Clusters); diff != "" {
		t.Errorf("clusters (-want +got):\n%s", diff)
	}

	in.Clusters = clusters(cluster("member1").resources(resources("cpu", "8", "pods", "110"), nil))
	if _, err := Decide(in); err == nil || ConditionReason(err) != ReasonUnschedulable {
		t.Errorf("no cluster fits a set: err %v, want Unschedulable", err)
	}

	// Without the gate the components do not count: member1, whose 8 CPU hold no set, may be chosen.
	in.MultiplePodTemplates = false
	if _, err := Decide(in); err != nil {
		t.Errorf("without MultiplePodTemplatesScheduling: %v", err)
	}
}
