package federatedhpa

import (
	"context"
	"errors"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
)

// answers is a metrics client with fixed answers; external metrics fail.
type answers struct{}

var errNoQueue = errors.New("no such metric")

func (answers) GetResourceMetric(context.Context, corev1.ResourceName, string, labels.Selector, string) (metricsclient.PodMetricsInfo, time.Time, error) {
	return metricsclient.PodMetricsInfo{"member1/web-1": {Value: 250}}, time.Unix(10, 0), nil
}
func (answers) GetRawMetric(string, string, labels.Selector, labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, nil
}
func (answers) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 7, time.Time{}, nil
}
func (answers) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, errNoQueue
}

// pulls is federatedhpa_pull_metrics_duration_seconds' count of
// observations for result and metricType, as the controller manager serves it.
func pulls(t *testing.T, result, metricType string) uint64 {
	t.Helper()
	metrics.RegisterControllerManager()
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range families {
		if f.GetName() != "federatedhpa_pull_metrics_duration_seconds" {
			continue
		}
		for _, m := range f.GetMetric() {
			got := map[string]string{}
			for _, l := range m.GetLabel() {
				got[l.GetName()] = l.GetValue()
			}
			if got["result"] == result && got["metricType"] == metricType {
				return m.GetHistogram().GetSampleCount()
			}
		}
	}
	t.Fatalf("no federatedhpa_pull_metrics_duration_seconds{result=%q,metricType=%q}", result, metricType)
	return 0
}

func TestTimedPullsTimeEachPullAndPassItsAnswerOn(t *testing.T) {
	c := TimedPulls(answers{})
	resourceOK, externalErr := pulls(t, "success", "ResourceMetric"), pulls(t, "error", "ExternalMetric")
	info, at, err := c.GetResourceMetric(context.Background(), corev1.ResourceCPU, "shop", labels.Everything(), "")
	if err != nil || info["member1/web-1"].Value != 250 || !at.Equal(time.Unix(10, 0)) {
		t.Errorf("GetResourceMetric = %v, %v, %v: not the client's answer", info, at, err)
	}
	if _, _, err := c.GetExternalMetric("queue_length", "shop", labels.Everything()); !errors.Is(err, errNoQueue) {
		t.Errorf("GetExternalMetric error = %v, want the client's", err)
	}
	if got := pulls(t, "success", "ResourceMetric") - resourceOK; got != 1 {
		t.Errorf("successful ResourceMetric pulls grew by %d, want 1", got)
	}
	if got := pulls(t, "error", "ExternalMetric") - externalErr; got != 1 {
		t.Errorf("failed ExternalMetric pulls grew by %d, want 1", got)
	}
}
