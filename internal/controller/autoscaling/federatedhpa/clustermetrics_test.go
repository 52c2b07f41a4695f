package federatedhpa

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metricsapi "k8s.io/metrics/pkg/apis/metrics/v1beta1"
)

func TestPodUsageKeepsSameNamedPodsOfTwoClustersApart(t *testing.T) {
	pm := func(cluster, name string, usage ...string) metricsapi.PodMetrics {
		m := metricsapi.PodMetrics{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if cluster != "" {
			m.Annotations = map[string]string{"resource.karmada.io/query-from-cluster": cluster}
		}
		for i, u := range usage {
			m.Containers = append(m.Containers, metricsapi.ContainerMetrics{Name: []string{"app", "sidecar"}[i],
				Usage: corev1.ResourceList{corev1.ResourceMemory: resource.MustParse(u)}})
		}
		return m
	}
	got := podUsage([]metricsapi.PodMetrics{
		pm("member1", "web-0", "80Mi"),
		pm("member2", "web-0", "20Mi", "1Mi"),
		pm("", "plain", "1"),
	}, corev1.ResourceMemory, "")
	if len(got) != 3 {
		t.Fatalf("got %d entries, want 3 (web-0 of each cluster, and plain): %v", len(got), got)
	}
	if got["member1/web-0"].Value != 80*1024*1024*1000 || got["member2/web-0"].Value != 21*1024*1024*1000 || got["plain"].Value != 1000 {
		t.Errorf("values %v", got)
	}
	if only := podUsage([]metricsapi.PodMetrics{pm("member2", "web-0", "20Mi", "1Mi")}, corev1.ResourceMemory, "sidecar"); only["member2/web-0"].Value != 1024*1024*1000 {
		t.Errorf("the named container's usage: %v", only)
	}
	if none := podUsage([]metricsapi.PodMetrics{pm("member1", "web-0", "1Mi")}, corev1.ResourceMemory, "missing"); len(none) != 0 {
		t.Errorf("a pod without the named container has an entry: %v", none)
	}
}
