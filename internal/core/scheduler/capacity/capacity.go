// Package capacity estimates how many replicas of a workload a member cluster can still take,
// from the resource summary the cluster status controller writes into Cluster.status. It is
// Flotilla's counterpart of Karmada's general estimator (the one that needs no
// karmada-scheduler-estimator in the member cluster).
package capacity

import (
	"math"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Unlimited is the estimate for a cluster whose capacity is not known (no resource summary
// yet) or not bounded by anything the workload asks for. It is math.MaxInt32, as in Karmada.
const Unlimited int32 = math.MaxInt32

// AvailableReplicas estimates how many more replicas, each asking for requests, fit into the
// cluster described by summary (Cluster.status.resourceSummary).
//
// For every resource with a positive request it computes
// (allocatable - allocated - allocating) / request, rounded down; the estimate is the
// smallest of these. A requested resource that the cluster does not list as allocatable
// bounds the estimate to 0. If "pods" is allocatable, the free pod count
// (allocatable - allocated - allocating) bounds the estimate too. A nil summary, or nothing
// that bounds it, gives Unlimited. The result is in [0, Unlimited].
func AvailableReplicas(summary *clusterv1alpha1.ResourceSummary, requests corev1.ResourceList) int32 {
	if summary == nil {
		return Unlimited
	}
	bound := int64(Unlimited)
	if pods, ok := summary.Allocatable[corev1.ResourcePods]; ok {
		free := freeOf(pods, summary, corev1.ResourcePods)
		bound = min(bound, free.Value())
	}
	for name, request := range requests {
		if name == corev1.ResourcePods || request.Sign() <= 0 {
			continue
		}
		allocatable, ok := summary.Allocatable[name]
		if !ok {
			return 0
		}
		bound = min(bound, quotient(freeOf(allocatable, summary, name), request))
	}
	return int32(max(bound, 0))
}

// freeOf is allocatable minus what is allocated and being allocated for one resource.
func freeOf(allocatable resource.Quantity, summary *clusterv1alpha1.ResourceSummary, name corev1.ResourceName) resource.Quantity {
	free := allocatable.DeepCopy()
	if q, ok := summary.Allocated[name]; ok {
		free.Sub(q)
	}
	if q, ok := summary.Allocating[name]; ok {
		free.Sub(q)
	}
	return free
}

// quotient is floor(free/request) for a positive request, and 0 when nothing is free.
// Milli-units keep fractional requests such as 250m CPU exact; quantities too large for
// milli-units in an int64 fall back to whole units.
func quotient(free, request resource.Quantity) int64 {
	if free.Sign() <= 0 {
		return 0
	}
	const milliLimit = math.MaxInt64 / 1000
	if free.Value() < milliLimit && request.Value() < milliLimit {
		return free.MilliValue() / request.MilliValue()
	}
	return free.Value() / max(request.Value(), 1)
}
