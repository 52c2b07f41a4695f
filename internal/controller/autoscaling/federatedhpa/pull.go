package federatedhpa

import (
	"context"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"

	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	hpa "github.com/flotilla-io/flotilla/internal/core/hpa"
)

// TimedPulls wraps the metrics client a Recommender pulls metrics through
// so that every pull is timed in federatedhpa_pull_metrics_duration_seconds
// (Karmada's metricType values: ResourceMetric, RawMetric, ObjectMetric,
// ExternalMetric; result success or error). Answers pass through unchanged.
func TimedPulls(c hpa.MetricsClient) hpa.MetricsClient { return timedPulls{c} }

type timedPulls struct{ next hpa.MetricsClient }

var _ hpa.MetricsClient = timedPulls{}

func (t timedPulls) GetResourceMetric(ctx context.Context, resource corev1.ResourceName, namespace string, selector labels.Selector, container string) (metricsclient.PodMetricsInfo, time.Time, error) {
	start := time.Now()
	info, at, err := t.next.GetResourceMetric(ctx, resource, namespace, selector, container)
	metrics.ObserveFederatedHPAPullMetrics(metrics.MetricTypeResource, err, time.Since(start))
	return info, at, err
}

func (t timedPulls) GetRawMetric(metricName string, namespace string, selector labels.Selector, metricSelector labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	start := time.Now()
	info, at, err := t.next.GetRawMetric(metricName, namespace, selector, metricSelector)
	metrics.ObserveFederatedHPAPullMetrics(metrics.MetricTypeRaw, err, time.Since(start))
	return info, at, err
}

func (t timedPulls) GetObjectMetric(metricName string, namespace string, objectRef *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (int64, time.Time, error) {
	start := time.Now()
	v, at, err := t.next.GetObjectMetric(metricName, namespace, objectRef, metricSelector)
	metrics.ObserveFederatedHPAPullMetrics(metrics.MetricTypeObject, err, time.Since(start))
	return v, at, err
}

func (t timedPulls) GetExternalMetric(metricName string, namespace string, selector labels.Selector) ([]int64, time.Time, error) {
	start := time.Now()
	vs, at, err := t.next.GetExternalMetric(metricName, namespace, selector)
	metrics.ObserveFederatedHPAPullMetrics(metrics.MetricTypeExternal, err, time.Since(start))
	return vs, at, err
}
