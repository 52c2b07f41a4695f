package scheduling

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler"
)

// freeCluster is a Ready member serving Deployments with cpu CPUs free.
func freeCluster(name, cpu string) *clusterv1alpha1.Cluster {
	return &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Status: clusterv1alpha1.ClusterStatus{
			Conditions:     []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
			APIEnablements: []clusterv1alpha1.APIEnablement{{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{Allocatable: corev1.ResourceList{
				corev1.ResourceCPU: resource.MustParse(cpu), corev1.ResourcePods: resource.MustParse("110")}},
		},
	}
}

// Two Aggregated workloads scheduled one after the other, each fitting only one member: with
// overcommit protection the second sees the first's replicas and goes to the other member;
// without, both take member1's room.
func TestOvercommitProtectionKeepsTwoDecisionsApart(t *testing.T) {
	clusters := []*clusterv1alpha1.Cluster{freeCluster("member1", "4"), freeCluster("member2", "3")}
	spec := func(name string) *workv1alpha2.ResourceBindingSpec {
		return &workv1alpha2.ResourceBindingSpec{
			Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: name},
			Replicas: 3,
			Placement: &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{
				ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: policyv1alpha1.ReplicaDivisionPreferenceAggregated}},
			ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1")}},
		}
	}
	place := func(c *Capacity, key string) []workv1alpha2.TargetCluster {
		s := spec(key)
		in := scheduler.Input{Resource: s.Resource, Placement: s.Placement, Replicas: s.Replicas, ReplicaRequirements: s.ReplicaRequirements, Clusters: clusters}
		d, err := c.decide("default/"+key, s, &in, func() (scheduler.Decision, error) { return scheduler.Decide(in) })
		if err != nil {
			t.Fatalf("schedule %s: %v", key, err)
		}
		return d.Clusters
	}
	on := &Capacity{Overcommit: true}
	if got := place(on, "a"); len(got) != 1 || got[0].Name != "member1" {
		t.Fatalf("a went to %v, want member1 (most room)", got)
	}
	if got := place(on, "b"); len(got) != 1 || got[0].Name != "member2" {
		t.Errorf("with overcommit protection b went to %v, want member2: member1 has 1 CPU left after a", got)
	}
	// Deciding a binding again keeps what it still has to start, and does not add to it.
	if got := place(on, "a"); len(got) != 1 || got[0].Name != "member1" {
		t.Errorf("rescheduling a moved it to %v", got)
	}
	if got := on.others("default/c", "member1"); len(got) != 1 || got[0].Replicas != 3 {
		t.Errorf("member1 holds %v after a was decided again, want a's 3 replicas", got)
	}
	if n := len(on.others("default/c", "member1")); n != 1 {
		t.Errorf("member1 holds %d assumptions, want a's one", n)
	}
	off := &Capacity{}
	place(off, "a")
	if got := place(off, "b"); len(got) != 1 || got[0].Name != "member1" {
		t.Errorf("without overcommit protection b went to %v; Karmada's default would take member1 again", got)
	}

	// Released once a's member reports it Healthy, or at the TTL.
	was := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "a"}}
	was.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member1", Health: workv1alpha2.ResourceUnhealthy}}
	on.release("default/a", was, was)
	if n := len(on.others("default/c", "member1")); n != 1 {
		t.Errorf("a's assumption went before its member reported it Healthy: %d left", n)
	}
	is := was.DeepCopy()
	is.Status.AggregatedStatus[0].Health = workv1alpha2.ResourceHealthy
	on.release("default/a", was, is)
	if n := len(on.others("default/c", "member1")); n != 0 {
		t.Errorf("a's assumption outlived its Healthy report: %d left", n)
	}
	on.assumed["default/b"] = assumption{added: on.assumed["default/b"].added, expires: time.Now().Add(-time.Second)}
	if n := len(on.others("default/c", "member2")); n != 0 {
		t.Errorf("b's assumption outlived its TTL: %d left", n)
	}
}
