package capacity

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Estimators is what a capacity estimate draws on besides a cluster's resource summary. The
// zero value is Karmada's default scheduler: the general estimator with resource models.
type Estimators struct {
	// IgnoreModels turns the resource models off: with CustomizedClusterResourceModeling
	// off, the general estimate is the summary bound alone.
	IgnoreModels bool
	// Nodes, if set, is the node-level (accurate) estimator, Flotilla's in-process
	// counterpart of karmada-scheduler-estimator (--enable-scheduler-estimator): it returns
	// the member's nodes, and false when it cannot tell now (the member's nodes are not
	// known yet, or not within --scheduler-estimator-timeout); then only the general
	// estimate counts, as in Karmada.
	Nodes func(cluster *clusterv1alpha1.Cluster) ([]Node, bool)
	// Assumed, if set, returns the replicas just placed in cluster for other bindings that
	// the member does not run yet (SchedulingOvercommitProtection): every estimate deducts
	// them first.
	Assumed func(cluster string) []Demand
}

// Available estimates how many more replicas with requirements req (nil: no requests, no
// node claim) cluster can take: the smallest of
//
//   - the summary bound, AvailableReplicas over status.resourceSummary with the assumed
//     replicas counted as allocating;
//   - unless IgnoreModels, the model bound: replicas placed first-fit on the nodes the
//     cluster's resource models describe (allocatableModelings nodes per grade, each with the
//     grade's minimums and ModelNodePods pods) after the assumed ones, as Karmada's general
//     estimator does. Resources the models do not bound (Karmada's models bound CPU and
//     memory) do not limit it; Karmada's counts them as absent, so that a replica asking for
//     ephemeral-storage fits nowhere;
//   - with Nodes, the node bound: FitReplicas over the member's real nodes. When Nodes
//     answers, it replaces the model bound, which approximates the same nodes by their
//     grades' minimums (a node with 8 CPU and 32Gi free is a 4-CPU node to Karmada's default
//     grades); Karmada takes the smaller of the two, so that its accurate estimator never
//     lifts the models' underestimate.
//
// A receiver of nil is the zero value. The result is in [0, Unlimited].
func (e *Estimators) Available(cluster *clusterv1alpha1.Cluster, req *workv1alpha2.ReplicaRequirements) int32 {
	if e == nil {
		e = &Estimators{}
	}
	want := Demand{}
	if req != nil {
		want.Requests, want.NodeClaim = req.ResourceRequest, req.NodeClaim
	}
	var assumed []Demand
	if e.Assumed != nil {
		assumed = e.Assumed(cluster.Name)
	}
	summary := cluster.Status.ResourceSummary
	if len(assumed) > 0 && summary != nil {
		summary = withAllocating(summary, assumed)
	}
	n := AvailableReplicas(summary, want.Requests)
	if e.Nodes != nil {
		if nodes, ok := e.Nodes(cluster); ok {
			return min(n, FitReplicas(nodes, want, assumed))
		}
	}
	if !e.IgnoreModels {
		if nodes, ok := modelNodes(cluster); ok {
			n = min(n, FitReplicas(nodes, want, assumed))
		}
	}
	return n
}

// withAllocating returns a copy of summary whose allocating resources and pods include the
// demands.
func withAllocating(summary *clusterv1alpha1.ResourceSummary, demands []Demand) *clusterv1alpha1.ResourceSummary {
	out := summary.DeepCopy()
	if out.Allocating == nil {
		out.Allocating = corev1.ResourceList{}
	}
	pods := out.Allocating[corev1.ResourcePods]
	for _, d := range demands {
		if d.Replicas <= 0 {
			continue
		}
		pods.Add(*resource.NewQuantity(int64(d.Replicas), resource.DecimalSI))
		for name, q := range d.Requests {
			if name == corev1.ResourcePods || q.Sign() <= 0 {
				continue
			}
			total := q.DeepCopy()
			total.Mul(int64(d.Replicas))
			cur := out.Allocating[name]
			cur.Add(total)
			out.Allocating[name] = cur
		}
	}
	out.Allocating[corev1.ResourcePods] = pods
	return out
}

// MaxSets bounds the component sets AvailableSets counts: placing set after set onto the nodes
// costs one simulation per set, and the scheduler only needs to know which clusters take one.
const MaxSets = 1000

// AvailableSets estimates how many full sets of components (a multi-component workload such as
// a FlinkDeployment: every component with all its replicas) cluster can still take, Karmada's
// MaxAvailableComponentSets, as the smallest of the summary bound (one set's summed requests
// and pods against the free ones), the model bound and, with Nodes, the node bound (sets
// placed first-fit onto the nodes, pod by pod, after the assumed replicas). The result is in
// [0, MaxSets].
func (e *Estimators) AvailableSets(cluster *clusterv1alpha1.Cluster, components []workv1alpha2.Component) int32 {
	if e == nil {
		e = &Estimators{}
	}
	set := make([]Demand, 0, len(components))
	perSet := corev1.ResourceList{}
	var pods int64
	for _, c := range components {
		d := Demand{Replicas: c.Replicas}
		if r := c.ReplicaRequirements; r != nil {
			d.Requests, d.NodeClaim = r.ResourceRequest, r.NodeClaim
		}
		set = append(set, d)
		pods += int64(c.Replicas)
		for name, q := range d.Requests {
			total := q.DeepCopy()
			total.Mul(int64(c.Replicas))
			cur := perSet[name]
			cur.Add(total)
			perSet[name] = cur
		}
	}
	var assumed []Demand
	if e.Assumed != nil {
		assumed = e.Assumed(cluster.Name)
	}
	summary := cluster.Status.ResourceSummary
	if len(assumed) > 0 && summary != nil {
		summary = withAllocating(summary, assumed)
	}
	n := int32(MaxSets)
	if summary != nil {
		n = min(n, AvailableReplicas(summary, perSet))
		if free, ok := summary.Allocatable[corev1.ResourcePods]; ok && pods > 0 {
			f := freeOf(free, summary, corev1.ResourcePods)
			n = min(n, int32(max(f.Value()/pods, 0)))
		}
	}
	if e.Nodes != nil {
		if nodes, ok := e.Nodes(cluster); ok {
			return min(n, FitSets(nodes, set, assumed, n))
		}
	}
	if !e.IgnoreModels {
		if nodes, ok := modelNodes(cluster); ok {
			n = min(n, FitSets(nodes, set, assumed, n))
		}
	}
	return n
}
