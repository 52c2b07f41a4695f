package binding

import (
	"slices"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Karmada's vocabulary of graceful eviction tasks
// (spec.gracefulEvictionTasks): why a cluster is being left, and who said so.
const (
	// EvictionReasonTaintUntolerated: the cluster has a NoExecute taint the
	// binding does not tolerate.
	EvictionReasonTaintUntolerated = "TaintUntolerated"
	// EvictionReasonApplicationFailure: the application stayed unhealthy in
	// the cluster past its toleration (application failover).
	EvictionReasonApplicationFailure = "ApplicationFailure"
	// EvictionProducerTaintManager is the taint manager.
	EvictionProducerTaintManager = "TaintManager"
	// EvictionProducerApplicationFailover is the application failover controller.
	EvictionProducerApplicationFailover = "ResourceBindingApplicationFailoverController"
)

// EvictingClusters are the clusters of spec.gracefulEvictionTasks: the
// resource is leaving them, but their copies stay until the task is done.
func EvictingClusters(spec *workv1alpha2.ResourceBindingSpec) map[string]bool {
	if len(spec.GracefulEvictionTasks) == 0 {
		return nil
	}
	out := make(map[string]bool, len(spec.GracefulEvictionTasks))
	for _, t := range spec.GracefulEvictionTasks {
		out[t.FromCluster] = true
	}
	return out
}

// Evict takes cluster out of spec.clusters. With graceful, it records a
// graceful eviction task for it (replicas, reason, producer, purge mode,
// now), unless one exists: the copy stays until the task is done. It
// reports whether spec changed.
func Evict(spec *workv1alpha2.ResourceBindingSpec, cluster string, graceful bool, task workv1alpha2.GracefulEvictionTask, now time.Time) bool {
	i := slices.IndexFunc(spec.Clusters, func(tc workv1alpha2.TargetCluster) bool { return tc.Name == cluster })
	if i < 0 {
		return false
	}
	replicas := spec.Clusters[i].Replicas
	spec.Clusters = slices.Delete(slices.Clone(spec.Clusters), i, i+1)
	if graceful && !EvictingClusters(spec)[cluster] {
		task.FromCluster = cluster
		if replicas > 0 {
			task.Replicas = &replicas
		}
		if task.PurgeMode == "" {
			task.PurgeMode = policyv1alpha1.PurgeModeGracefully
		}
		t := metav1.NewTime(now)
		task.CreationTimestamp = &t
		spec.GracefulEvictionTasks = append(spec.GracefulEvictionTasks, task)
	}
	return true
}

// EvictionEvent records Karmada's EvictWorkloadFromClusterSucceed (or, with
// err, EvictWorkloadFromClusterFailed) on the binding and its template for
// an eviction from cluster. A nil recorder records nothing.
func EvictionEvent(recorder record.EventRecorder, b Object, cluster string, err error) {
	if recorder == nil {
		return
	}
	for _, obj := range []runtime.Object{b, TemplateRef(Spec(b))} {
		if err != nil {
			recorder.Eventf(obj, corev1.EventTypeWarning, events.EvictWorkloadFromClusterFailed, "Evict from cluster %s failed: %v", cluster, err)
		} else {
			recorder.Eventf(obj, corev1.EventTypeNormal, events.EvictWorkloadFromClusterSucceed, "Evict from cluster %s succeed.", cluster)
		}
	}
}
