package bench

import (
	"fmt"
	"os"
	"strconv"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
)

// BenchmarkCapacityScheduling creates BENCH_CAPACITY (default 1,000) Deployments of 2 replicas
// of 10m CPU, Divided by dynamic weights (each member's estimated room), over 3 members with
// kwok nodes, first with the general estimator alone (resource models on) and then on a second
// stack with the node-level estimator too (--enable-scheduler-estimator). It reports the time
// from the first create to every binding scheduled and the controller manager's CPU seconds
// (it runs the scheduler) over that window.
func BenchmarkCapacityScheduling(b *testing.B) {
	count := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_CAPACITY")); err == nil {
		count = v
	}
	if bare {
		b.Skip("BENCH_BARE: the estimators need members with nodes")
	}
	var rows []string
	for _, mode := range []struct {
		name  string
		extra []string
	}{
		{"general", nil},
		{"node-level", []string{"--controller-manager-arg=--enable-scheduler-estimator=true"}},
	} {
		b.Run(mode.name, func(b *testing.B) {
			h := startHarness(b, mode.extra...)
			const cns = "capacity"
			h.applyIn("", `apiVersion: v1
kind: Namespace
metadata: {name: capacity}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: dynamic, namespace: capacity}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference: {dynamicWeight: AvailableReplicas}
`)
			bindings := h.watchObjects(restConfig(b, h.kubeconfig, h.context), rbGVR, cns)
			scheduled := func() int {
				return bindings(func(rb *unstructured.Unstructured) bool {
					clusters, _, _ := unstructured.NestedSlice(rb.Object, "spec", "clusters")
					var sum int64
					for _, c := range clusters {
						r, _ := c.(map[string]any)["replicas"].(int64)
						sum += r
					}
					return sum == 2
				})
			}
			for range b.N {
				cpu0 := h.controllerManagerCPU()
				start := time.Now()
				h.createDeployments(cns, "cap", count, func(d *appsv1.Deployment) {
					d.Spec.Replicas = ptr.To[int32](2)
					d.Spec.Template.Spec.Containers[0].Resources.Requests = corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("10m")}
				})
				h.waitFor("every binding scheduled", 15*time.Minute, func() bool { return scheduled() == count })
				took, cpu := time.Since(start), h.controllerManagerCPU()-cpu0
				b.ReportMetric(took.Seconds(), "scheduled-s")
				b.ReportMetric(cpu, "controller-manager-cpu-s")
				rows = append(rows, fmt.Sprintf("| %s | %d | %.1f | %.1f |", mode.name, count, took.Seconds(), cpu))
			}
		})
	}
	fmt.Printf("\n| estimator | Deployments (2 × 10m CPU, dynamic weights) | every binding scheduled (s) | controller manager CPU (s) |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Println(r)
	}
}
