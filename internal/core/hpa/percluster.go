package hpa

import (
	"fmt"
	"slices"
	"time"

	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
)

// QueryFromClusterLabel is the label key by which a pod selector sent to the metrics adapter
// (custom.metrics.k8s.io, pods) names the member clusters to ask: `<key>=member1` asks
// member1 only, and the adapter removes the requirement before it asks. The same key is the
// annotation by which the adapter marks which cluster a PodMetrics came from (Karmada's
// resource.karmada.io/query-from-cluster).
const QueryFromClusterLabel = "resource.karmada.io/query-from-cluster"

// rawMetric returns the pods' custom metric name. The custom metrics API describes a pod by
// namespace and name only, so where two pods of the workload share a name in two clusters
// (a StatefulSet's web-0 in member1 and member2) one merged answer cannot tell them apart:
// then each such cluster is asked on its own, by QueryFromClusterLabel, and the values are
// keyed by PodKey. Otherwise one query answers for every cluster, as before. The timestamp
// is the oldest of the answers. Errors: every query failed (the first error), or no cluster
// answered with a value.
func (c *ReplicaCalculator) rawMetric(name string, w Workload, metricSelector labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	clusters := clustersSharingNames(w.Pods)
	if len(clusters) == 0 {
		return c.metrics.GetRawMetric(name, w.Namespace, w.Selector, metricSelector)
	}
	out := metricsclient.PodMetricsInfo{}
	var oldest time.Time
	var firstErr error
	for _, cluster := range clusters {
		req, err := labels.NewRequirement(QueryFromClusterLabel, selection.Equals, []string{cluster})
		if err != nil {
			return nil, time.Time{}, fmt.Errorf("cluster %q cannot be named in a selector: %w", cluster, err)
		}
		metrics, ts, err := c.metrics.GetRawMetric(name, w.Namespace, w.Selector.Add(*req), metricSelector)
		if err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("cluster %s: %w", cluster, err)
			}
			continue
		}
		for pod, m := range metrics {
			out[PodKey(cluster, pod)] = m
		}
		if oldest.IsZero() || ts.Before(oldest) {
			oldest = ts
		}
	}
	if len(out) == 0 {
		if firstErr == nil {
			firstErr = fmt.Errorf("no metrics returned from custom metrics API")
		}
		return nil, time.Time{}, firstErr
	}
	return out, oldest, nil
}

// clustersSharingNames returns, sorted, the clusters of pods when some pod name is in more
// than one cluster, and nil when every name is in one cluster only.
func clustersSharingNames(pods []Pod) []string {
	clusterOf := map[string]string{}
	shared := false
	var clusters []string
	for _, p := range pods {
		if p.Cluster == "" {
			continue
		}
		if !slices.Contains(clusters, p.Cluster) {
			clusters = append(clusters, p.Cluster)
		}
		if c, ok := clusterOf[p.Pod.Name]; ok && c != p.Cluster {
			shared = true
		}
		clusterOf[p.Pod.Name] = p.Cluster
	}
	if !shared {
		return nil
	}
	slices.Sort(clusters)
	return clusters
}
