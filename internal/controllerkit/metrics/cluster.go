package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"k8s.io/apimachinery/pkg/api/meta"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Labels naming the member cluster of a series. Karmada labelled its
// cluster metrics cluster_name until v1.15, carried both from v1.16 and
// member_cluster alone from v1.18; Flotilla carries both, with the same
// value, so that dashboards of either generation work.
const (
	clusterNameLabel   = "cluster_name"
	memberClusterLabel = "member_cluster"
)

func clusterGauge(name, help string) *prometheus.GaugeVec {
	return prometheus.NewGaugeVec(prometheus.GaugeOpts{Name: name, Help: help}, []string{clusterNameLabel, memberClusterLabel})
}

// The gauges follow a Cluster's status as the cluster controller (or a
// Pull-mode cluster's agent) last wrote it.
var (
	clusterReady = clusterGauge("cluster_ready_state",
		"Whether the member cluster is Ready: 1 if its Ready condition is True, 0 otherwise.")
	clusterNodes = clusterGauge("cluster_node_number",
		"Number of nodes in the member cluster.")
	clusterReadyNodes = clusterGauge("cluster_ready_node_number",
		"Number of Ready nodes in the member cluster.")
	clusterMemoryAllocatable = clusterGauge("cluster_memory_allocatable_bytes",
		"Allocatable memory of the member cluster's nodes, in bytes.")
	clusterCPUAllocatable = clusterGauge("cluster_cpu_allocatable_number",
		"Allocatable CPU of the member cluster's nodes, in cores.")
	clusterPodAllocatable = clusterGauge("cluster_pod_allocatable_number",
		"Number of pods the member cluster's nodes can hold.")
	clusterMemoryAllocated = clusterGauge("cluster_memory_allocated_bytes",
		"Memory requested by the member cluster's scheduled pods, in bytes.")
	clusterCPUAllocated = clusterGauge("cluster_cpu_allocated_number",
		"CPU requested by the member cluster's scheduled pods, in cores.")
	clusterPodAllocated = clusterGauge("cluster_pod_allocated_number",
		"Number of pods scheduled in the member cluster.")
	clusterSyncStatus = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "cluster_sync_status_duration_seconds",
		Help:    "Seconds to probe a member cluster and write its Cluster status once.",
		Buckets: millisecondBuckets(),
	}, []string{clusterNameLabel, memberClusterLabel})
)

func clusterCollectors() []prometheus.Collector {
	return []prometheus.Collector{clusterReady, clusterNodes, clusterReadyNodes,
		clusterMemoryAllocatable, clusterCPUAllocatable, clusterPodAllocatable,
		clusterMemoryAllocated, clusterCPUAllocated, clusterPodAllocated, clusterSyncStatus}
}

// RecordClusterStatus sets the gauges of cluster from its status, as
// written: cluster_ready_state (1 when the Ready condition is True, else 0),
// cluster_node_number and cluster_ready_node_number from
// status.nodeSummary, and the allocatable and allocated memory (bytes), CPU
// (cores) and pods from status.resourceSummary. Summaries the status lacks
// leave their gauges as they were, as in Karmada. Labels: cluster_name and
// member_cluster, both the Cluster's name.
func RecordClusterStatus(cluster string, status *clusterv1alpha1.ClusterStatus) {
	ready := 0.0
	if meta.IsStatusConditionTrue(status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		ready = 1
	}
	clusterReady.WithLabelValues(cluster, cluster).Set(ready)
	if n := status.NodeSummary; n != nil {
		clusterNodes.WithLabelValues(cluster, cluster).Set(float64(n.TotalNum))
		clusterReadyNodes.WithLabelValues(cluster, cluster).Set(float64(n.ReadyNum))
	}
	r := status.ResourceSummary
	if r == nil {
		return
	}
	if a := r.Allocatable; a != nil {
		clusterMemoryAllocatable.WithLabelValues(cluster, cluster).Set(a.Memory().AsApproximateFloat64())
		clusterCPUAllocatable.WithLabelValues(cluster, cluster).Set(a.Cpu().AsApproximateFloat64())
		clusterPodAllocatable.WithLabelValues(cluster, cluster).Set(a.Pods().AsApproximateFloat64())
	}
	if a := r.Allocated; a != nil {
		clusterMemoryAllocated.WithLabelValues(cluster, cluster).Set(a.Memory().AsApproximateFloat64())
		clusterCPUAllocated.WithLabelValues(cluster, cluster).Set(a.Cpu().AsApproximateFloat64())
		clusterPodAllocated.WithLabelValues(cluster, cluster).Set(a.Pods().AsApproximateFloat64())
	}
}

// ObserveClusterSyncStatus records, in cluster_sync_status_duration_seconds,
// that one status sync of cluster (probe the member, write the Cluster's
// status) took d.
func ObserveClusterSyncStatus(cluster string, d time.Duration) {
	clusterSyncStatus.WithLabelValues(cluster, cluster).Observe(d.Seconds())
}

// ForgetCluster deletes every series of cluster, once its Cluster is gone:
// a deleted cluster must not linger in dashboards at its last values.
func ForgetCluster(cluster string) {
	for _, c := range []interface {
		DeleteLabelValues(...string) bool
	}{clusterReady, clusterNodes, clusterReadyNodes, clusterMemoryAllocatable, clusterCPUAllocatable, clusterPodAllocatable,
		clusterMemoryAllocated, clusterCPUAllocated, clusterPodAllocated, clusterSyncStatus} {
		c.DeleteLabelValues(cluster, cluster)
	}
}
