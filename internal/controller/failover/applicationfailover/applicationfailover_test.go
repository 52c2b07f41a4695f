package applicationfailover

import (
	"testing"
	"time"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestTrackCountsFromTheFirstUnhealthyReport(t *testing.T) {
	r := &Reconciler{}
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}}}
	status := func(h1 workv1alpha2.ResourceHealth) *workv1alpha2.ResourceBindingStatus {
		return &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
			{ClusterName: "member1", Health: h1}, {ClusterName: "member2", Health: workv1alpha2.ResourceHealthy}}}
	}
	t0 := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	if got := r.track("ns/b", spec, status(workv1alpha2.ResourceUnhealthy), t0); !got["member1"].Equal(t0) || len(got) != 1 {
		t.Fatalf("first: %v", got)
	}
	if got := r.track("ns/b", spec, status(workv1alpha2.ResourceUnhealthy), t0.Add(time.Minute)); !got["member1"].Equal(t0) {
		t.Fatalf("still unhealthy: %v", got)
	}
	if got := r.track("ns/b", spec, status(workv1alpha2.ResourceHealthy), t0.Add(2*time.Minute)); len(got) != 0 {
		t.Fatalf("recovered: %v", got)
	}
	if got := r.track("ns/b", spec, status(workv1alpha2.ResourceUnhealthy), t0.Add(3*time.Minute)); !got["member1"].Equal(t0.Add(3 * time.Minute)) {
		t.Fatalf("unhealthy again counts afresh: %v", got)
	}
}

func TestPreserve(t *testing.T) {
	var status any = map[string]any{"jobStatus": map[string]any{"state": "FAILED", "savepoint": "s3://b/1"}, "replicas": int64(2)}
	got, err := Preserve([]policyv1alpha1.StatePreservationRule{
		{AliasLabelName: "failover.example.io/savepoint", JSONPath: "{.jobStatus.savepoint}"},
		{AliasLabelName: "failover.example.io/replicas", JSONPath: "{.replicas}"},
		{AliasLabelName: "failover.example.io/missing", JSONPath: "{.nothing}"},
	}, status)
	if err == nil {
		t.Error("a rule that finds nothing is not reported")
	}
	if got["failover.example.io/savepoint"] != "s3://b/1" || got["failover.example.io/replicas"] != "2" || len(got) != 2 {
		t.Errorf("got %v", got)
	}
}
