package binding

import (
	"testing"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestMergeSuspensionKeepsTheBindingsSchedulingSwitch(t *testing.T) {
	onMember2 := &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}
	scheduling := &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
	for _, tc := range []struct {
		name    string
		current *workv1alpha2.Suspension
		policy  *policyv1alpha1.Suspension
		want    *workv1alpha2.Suspension
	}{
		{"nothing anywhere", nil, nil, nil},
		{"the policy's fields are copied", nil, onMember2, &workv1alpha2.Suspension{Suspension: *onMember2}},
		{"a third party's scheduling switch is kept", scheduling, onMember2, &workv1alpha2.Suspension{Suspension: *onMember2, Scheduling: ptr.To(true)}},
		{"lifting the policy's suspension keeps the switch", &workv1alpha2.Suspension{Suspension: *onMember2, Scheduling: ptr.To(true)}, nil, scheduling},
		{"lifting the policy's suspension clears it", &workv1alpha2.Suspension{Suspension: *onMember2}, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := MergeSuspension(tc.current, tc.policy)
			if !equality.Semantic.DeepEqual(got, tc.want) {
				t.Errorf("MergeSuspension = %+v, want %+v", got, tc.want)
			}
		})
	}
}

func TestDispatchSuspended(t *testing.T) {
	all := &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(true)}}
	off := &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{Dispatching: ptr.To(false)}}
	some := &workv1alpha2.Suspension{Suspension: policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}}
	onlyScheduling := &workv1alpha2.Suspension{Scheduling: ptr.To(true)}
	for _, tc := range []struct {
		s       *workv1alpha2.Suspension
		cluster string
		want    bool
	}{
		{nil, "member1", false},
		{all, "member1", true},
		{off, "member1", false},
		{some, "member1", false},
		{some, "member2", true},
		{onlyScheduling, "member1", false},
	} {
		if got := DispatchSuspended(tc.s, tc.cluster); got != tc.want {
			t.Errorf("DispatchSuspended(%+v, %s) = %v, want %v", tc.s, tc.cluster, got, tc.want)
		}
	}
}

func TestWorkloadGroups(t *testing.T) {
	wa := &policyv1alpha1.WorkloadAffinity{
		Affinity:     &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.group"},
		AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "replica.set"},
	}
	got := WorkloadGroups(map[string]string{"app.group": "fe", "replica.set": "a"}, wa)
	if got == nil || got.AffinityGroup != "app.group=fe" || got.AntiAffinityGroup != "replica.set=a" {
		t.Errorf("WorkloadGroups = %+v", got)
	}
	if got := WorkloadGroups(map[string]string{"other": "x"}, wa); got != nil {
		t.Errorf("a template without the keys is in no group: %+v", got)
	}
	if got := WorkloadGroups(map[string]string{"app.group": "fe"}, nil); got != nil {
		t.Errorf("no workloadAffinity, no group: %+v", got)
	}
}
