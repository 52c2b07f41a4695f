package hpa

import (
	"context"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
)

// adapterMetrics answers GetRawMetric as the metrics adapter does: by bare pod name, the
// values of a name several clusters hold summed, unless the selector names one cluster
// (QueryFromClusterLabel). queries records the selectors asked.
type adapterMetrics struct {
	byCluster map[string]map[string]int64 // cluster -> pod name -> value
	queries   *[]string
}

func (a adapterMetrics) GetRawMetric(_, _ string, selector labels.Selector, _ labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	*a.queries = append(*a.queries, selector.String())
	values := map[string]int64{}
	for cluster, pods := range a.byCluster {
		if only, named := selector.RequiresExactMatch(QueryFromClusterLabel); named && only != cluster {
			continue
		}
		for name, v := range pods {
			values[name] += v
		}
	}
	return podMetrics(values)
}

func (adapterMetrics) GetResourceMetric(context.Context, corev1.ResourceName, string, labels.Selector, string) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, nil
}

func (adapterMetrics) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, nil
}

func (adapterMetrics) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, nil
}

// Two members each run a pod named web-0 of one StatefulSet, at 800m and 200m of a Pods
// metric whose target is 500m: the average is 500m, and the replicas stay at 2. Counting
// only one of them, or their sum twice, would scale.
func TestPodsSharingANameAcrossClustersAreCountedApart(t *testing.T) {
	var queries []string
	m := adapterMetrics{byCluster: map[string]map[string]int64{"member1": {"web-0": 800}, "member2": {"web-0": 200}}, queries: &queries}
	pods := append(podsIn("member1", "web-0"), podsIn("member2", "web-0")...)
	w := Workload{Namespace: testNamespace, Selector: labels.SelectorFromSet(labels.Set{"app": "web"}), Pods: pods, SpecReplicas: 2, StatusReplicas: 2, Calibration: 1}
	calc := NewReplicaCalculator(m, DefaultCPUInitializationPeriod, DefaultInitialReadinessDelay, nil)
	replicas, usage, _, err := calc.GetMetricReplicas(w, everyTenth, 500, "requests", labels.Everything())
	if err != nil {
		t.Fatal(err)
	}
	if replicas != 2 || usage != 500 {
		t.Errorf("replicas %d at usage %d, want 2 at the average 500", replicas, usage)
	}
	want := []string{"app=web," + QueryFromClusterLabel + "=member1", "app=web," + QueryFromClusterLabel + "=member2"}
	if len(queries) != 2 || queries[0] != want[0] || queries[1] != want[1] {
		t.Errorf("queries %q, want one per cluster %q", queries, want)
	}

	// Distinct names: one query, as before.
	queries = nil
	m.byCluster = map[string]map[string]int64{"member1": {"web-0": 800}, "member2": {"web-1": 200}}
	w.Pods = append(podsIn("member1", "web-0"), podsIn("member2", "web-1")...)
	if _, _, _, err := calc.GetMetricReplicas(w, everyTenth, 500, "requests", labels.Everything()); err != nil {
		t.Fatal(err)
	}
	if len(queries) != 1 || queries[0] != "app=web" {
		t.Errorf("queries %q, want the one selector app=web", queries)
	}
}
