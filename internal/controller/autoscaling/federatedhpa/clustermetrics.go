package federatedhpa

import (
	"context"
	"fmt"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	metricsapi "k8s.io/metrics/pkg/apis/metrics/v1beta1"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"

	hpa "github.com/flotilla-io/flotilla/internal/core/hpa"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// PerClusterPodMetrics wraps a metrics client so that the resource metrics
// of pods (metrics.k8s.io, as the metrics adapter serves it from every
// member) are keyed by hpa.PodKey(cluster, name), the cluster read from each
// PodMetrics' resource.karmada.io/query-from-cluster annotation. Two
// members' pods of one name (a StatefulSet's web-0 in each) are then two
// samples; Kubernetes' client keys by name alone and keeps one of them. An
// item without the annotation is keyed by its name, as before. The other
// metric kinds go to next unchanged.
func PerClusterPodMetrics(next hpa.MetricsClient, pods resourceclient.PodMetricsesGetter) hpa.MetricsClient {
	return perClusterPods{MetricsClient: next, pods: pods}
}

type perClusterPods struct {
	hpa.MetricsClient
	pods resourceclient.PodMetricsesGetter
}

// GetResourceMetric returns each pod's usage of resource in milli-units
// (the named container's, or the sum over its containers), with the time
// and window of its sample, and the time of the first sample. Errors: the
// API failed, or answered with no pod at all.
func (c perClusterPods) GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (metricsclient.PodMetricsInfo, time.Time, error) {
	list, err := c.pods.PodMetricses(namespace).List(ctx, metav1.ListOptions{LabelSelector: selector.String()})
	if err != nil {
		return nil, time.Time{}, fmt.Errorf("unable to fetch metrics from resource metrics API: %w", err)
	}
	if len(list.Items) == 0 {
		return nil, time.Time{}, fmt.Errorf("no metrics returned from resource metrics API")
	}
	return podUsage(list.Items, resource, container), list.Items[0].Timestamp.Time, nil
}

// podUsage turns PodMetrics into PodMetricsInfo keyed per cluster. A pod
// without the named container, or without a sample of resource in one of
// its containers, has no entry (the HPA counts it as missing).
func podUsage(items []metricsapi.PodMetrics, resource corev1.ResourceName, container string) metricsclient.PodMetricsInfo {
	out := make(metricsclient.PodMetricsInfo, len(items))
	for _, m := range items {
		var sum int64
		found, complete := false, true
		for _, cm := range m.Containers {
			if container != "" && cm.Name != container {
				continue
			}
			q, ok := cm.Usage[resource]
			if !ok {
				complete = false
				break
			}
			sum += q.MilliValue()
			found = true
		}
		if !found || !complete {
			continue
		}
		key := m.Name
		if cluster := m.Annotations[registry.QueryFromClusterAnnotation]; cluster != "" {
			key = hpa.PodKey(cluster, m.Name)
		}
		out[key] = metricsclient.PodMetric{Timestamp: m.Timestamp.Time, Window: m.Window.Duration, Value: sum}
	}
	return out
}
