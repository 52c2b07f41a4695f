package binding

import (
	"testing"
	"time"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestEvict(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 2}}}
	now := time.Now()
	if !Evict(spec, "member1", true, workv1alpha2.GracefulEvictionTask{Reason: EvictionReasonTaintUntolerated, Producer: EvictionProducerTaintManager}, now) {
		t.Fatal("nothing changed")
	}
	if len(spec.Clusters) != 1 || spec.Clusters[0].Name != "member2" {
		t.Errorf("clusters = %v", spec.Clusters)
	}
	if len(spec.GracefulEvictionTasks) != 1 || *spec.GracefulEvictionTasks[0].Replicas != 2 || spec.GracefulEvictionTasks[0].PurgeMode != "Gracefully" || !EvictingClusters(spec)["member1"] {
		t.Errorf("tasks = %+v", spec.GracefulEvictionTasks)
	}
	if Evict(spec, "member1", true, workv1alpha2.GracefulEvictionTask{}, now) {
		t.Error("evicted twice")
	}
	Evict(spec, "member2", false, workv1alpha2.GracefulEvictionTask{}, now)
	if len(spec.Clusters) != 0 || len(spec.GracefulEvictionTasks) != 1 {
		t.Errorf("a direct eviction: %+v", spec)
	}
}
