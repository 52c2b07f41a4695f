package capacity

import (
	"fmt"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// BenchmarkFitReplicas is the node-level estimator's cost for one binding and one member of
// 100 and 5,000 nodes, with no placement assumed and with 20 other bindings' placements
// assumed (SchedulingOvercommitProtection), for a replica with a node selector and a
// toleration.
func BenchmarkFitReplicas(b *testing.B) {
	want := Demand{Requests: list("cpu", "500m", "memory", "512Mi"), NodeClaim: &workv1alpha2.NodeClaim{
		NodeSelector: map[string]string{"pool": "general"},
		Tolerations:  []corev1.Toleration{{Key: "dedicated", Operator: corev1.TolerationOpExists}},
	}}
	var assumed []Demand
	for range 20 {
		assumed = append(assumed, Demand{Replicas: 10, Requests: list("cpu", "250m", "memory", "256Mi")})
	}
	for _, size := range []int{100, 5000} {
		nodes := make([]Node, size)
		for i := range nodes {
			nodes[i] = Node{
				Node: &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("node-%d", i), Labels: map[string]string{"pool": "general"}},
					Spec: corev1.NodeSpec{Taints: []corev1.Taint{{Key: "dedicated", Value: "x", Effect: corev1.TaintEffectNoSchedule}}}},
				Ready: true, Free: list("cpu", "3", "memory", "12Gi", "pods", "100"), FreePods: 100,
			}
		}
		b.Run(fmt.Sprintf("nodes=%d", size), func(b *testing.B) {
			for b.Loop() {
				FitReplicas(nodes, want, nil)
			}
		})
		b.Run(fmt.Sprintf("nodes=%d/assumed=20", size), func(b *testing.B) {
			for b.Loop() {
				FitReplicas(nodes, want, assumed)
			}
		})
	}
}
