package capacity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

func list(kv ...string) corev1.ResourceList {
	l := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		l[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return l
}

func TestAvailableReplicas(t *testing.T) {
	tests := []struct {
		name     string
		summary  *clusterv1alpha1.ResourceSummary
		requests corev1.ResourceList
		want     int32
	}{
		{
			name: "no resource summary yet is unlimited",
			want: Unlimited,
		},
		{
			name:    "without requests the free pod count bounds the estimate",
			summary: &clusterv1alpha1.ResourceSummary{Allocatable: list("pods", "110"), Allocated: list("pods", "100"), Allocating: list("pods", "4")},
			want:    6,
		},
		{
			name:    "without requests or a pod count the estimate is unlimited",
			summary: &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "8")},
			want:    Unlimited,
		},
		{
			name:     "the scarcest requested resource decides",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "8", "memory", "32Gi"), Allocated: list("cpu", "2", "memory", "30Gi")},
			requests: list("cpu", "1", "memory", "512Mi"),
			want:     4,
		},
		{
			name:     "fractional requests divide exactly",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "3")},
			requests: list("cpu", "300m"),
			want:     10,
		},
		{
			name:     "allocating requests count as used",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "4"), Allocating: list("cpu", "1500m")},
			requests: list("cpu", "1"),
			want:     2,
		},
		{
			name:     "pods bound resources too",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "64", "pods", "3")},
			requests: list("cpu", "1"),
			want:     3,
		},
		{
			name:     "a requested resource the cluster lacks leaves no room",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "64")},
			requests: list("cpu", "1", "nvidia.com/gpu", "1"),
			want:     0,
		},
		{
			name:     "an overcommitted cluster has no room, not negative room",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("cpu", "4", "pods", "10"), Allocated: list("cpu", "5", "pods", "12")},
			requests: list("cpu", "1"),
			want:     0,
		},
		{
			name:     "zero requests are ignored",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("pods", "7")},
			requests: list("cpu", "0"),
			want:     7,
		},
		{
			name:     "huge quantities are capped at Unlimited",
			summary:  &clusterv1alpha1.ResourceSummary{Allocatable: list("ephemeral-storage", "900Pi")},
			requests: list("ephemeral-storage", "1"),
			want:     Unlimited,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := AvailableReplicas(tt.summary, tt.requests); got != tt.want {
				t.Errorf("AvailableReplicas() = %d, want %d", got, tt.want)
			}
		})
	}
}
