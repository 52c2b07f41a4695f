package integration

import (
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// gracefulEvictionCases check the graceful eviction controller where it
// goes beyond Karmada: a task that evicted a cluster for the cluster's sake
// ends as soon as that cluster is fit again when no other cluster took its
// replicas, so the workload is placed there again at once instead of
// nowhere until --graceful-eviction-timeout; meanwhile the template's
// status still reports the copy that serves.
var gracefulEvictionCases = []integrationCase{
	{
		name: "an eviction nothing replaced ends once the cluster is fit, and the workload goes back there",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1").obj())
			e.create(e.controlPlane, e.deployment("web", 2))
			b := e.waitBinding("web", "web placed on member1", func(b *workv1alpha2.ResourceBinding) bool {
				return len(b.Spec.Clusters) == 1 && b.Spec.Clusters[0].Name == "member1"
			})
			// What the taint manager does for an untolerated NoExecute taint;
			// member1 is Ready and untainted, as after a short outage.
			update(e, e.controlPlane, b, func(b *workv1alpha2.ResourceBinding) {
				now := metav1.Now()
				b.Spec.Clusters = nil
				b.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member1", Replicas: new(int32(2)),
					Reason: binding.EvictionReasonTaintUntolerated, Producer: binding.EvictionProducerTaintManager,
					PurgeMode: policyv1alpha1.PurgeModeGracefully, CreationTimestamp: &now}}
			})
			e.waitBinding("web", "the task over and web back on member1", func(b *workv1alpha2.ResourceBinding) bool {
				return len(b.Spec.GracefulEvictionTasks) == 0 && len(b.Spec.Clusters) == 1 && b.Spec.Clusters[0].Name == "member1"
			})
		},
	},
	{
		name: "an application failure is not ended by the cluster's health",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1").obj())
			e.create(e.controlPlane, e.deployment("web", 1))
			b := e.waitBinding("web", "web placed on member1", func(b *workv1alpha2.ResourceBinding) bool { return len(b.Spec.Clusters) == 1 })
			update(e, e.controlPlane, b, func(b *workv1alpha2.ResourceBinding) {
				now := metav1.Now()
				b.Spec.Clusters = nil
				b.Spec.GracefulEvictionTasks = []workv1alpha2.GracefulEvictionTask{{FromCluster: "member1",
					Reason: binding.EvictionReasonApplicationFailure, PurgeMode: policyv1alpha1.PurgeModeGracefully, CreationTimestamp: &now}}
			})
			e.waitBinding("web", "scheduled without member1", func(b *workv1alpha2.ResourceBinding) bool {
				c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
				return c != nil && c.ObservedGeneration == b.Generation && len(b.Spec.Clusters) == 0
			})
			for end := time.Now().Add(3 * time.Second); time.Now().Before(end); time.Sleep(200 * time.Millisecond) {
				if got := e.waitBinding("web", "read", func(*workv1alpha2.ResourceBinding) bool { return true }); len(got.Spec.GracefulEvictionTasks) != 1 {
					e.Fatalf("the application failure's task ended with member1's health: %s", describe(got.Spec.GracefulEvictionTasks, got.Spec.Clusters))
				}
			}
		},
	},
}
