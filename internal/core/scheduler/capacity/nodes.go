package capacity

import (
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/component-helpers/scheduling/corev1/nodeaffinity"
	"k8s.io/klog/v2"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Node is one node of a member cluster as the node-level estimators see it: a real node
// (from the member's informers) or a model node rebuilt from the cluster's resource models.
type Node struct {
	// Node carries the labels, taints and spec.unschedulable that node selectors, affinity
	// and tolerations are matched against. Nil for a model node, which every replica may use.
	Node *corev1.Node
	// Ready is the node's Ready condition; a node that is not Ready takes nothing.
	Ready bool
	// Free is the node's allocatable resources minus the requests of the pods bound to it
	// that have not finished. A resource a real node does not list has nothing free.
	Free corev1.ResourceList
	// FreePods is the node's pod capacity (allocatable "pods") minus its unfinished pods.
	FreePods int64

	// model marks a model node: resources its models do not bound do not bound it either.
	model bool
	// owned marks, in a simulation, a Free that is the simulation's own copy.
	owned bool
}

// Demand is replicas of one pod shape placed together: a workload's replicas, one component
// of a multi-component workload, or an assumed placement not yet reported by its member.
type Demand struct {
	// Replicas is how many pods of the shape are wanted.
	Replicas int32
	// Requests are the requests of one pod; "pods" is implied (one per replica).
	Requests corev1.ResourceList
	// NodeClaim is the pods' node selector, required node affinity and tolerations. Nil
	// matches every schedulable node.
	NodeClaim *workv1alpha2.NodeClaim
}

// FitReplicas is the node-level estimate of Karmada's scheduler estimator, computed in the
// process from nodes: how many replicas of want fit onto nodes after the assumed demands have
// been placed first, each pod on a node whose labels its node selector and required affinity
// match, whose NoSchedule and NoExecute taints it tolerates, and with enough of every resource
// it requests left. Placement is first-fit in the order of nodes, as in Karmada's simulator. A
// cordoned node (spec.unschedulable) is used only by pods tolerating
// node.kubernetes.io/unschedulable. nodes is not modified. The result is in [0, Unlimited].
func FitReplicas(nodes []Node, want Demand, assumed []Demand) int32 {
	if len(assumed) > 0 {
		nodes = slices.Clone(nodes) // a node's Free is copied when a pod is first placed on it
		for _, d := range assumed {
			place(nodes, d)
		}
	}
	// The wanted replicas are all alike: each node's own fit adds up.
	match, reqs := matcher(want.NodeClaim), requestsOf(want.Requests)
	var total int64
	for i := range nodes {
		if n := &nodes[i]; match(n) {
			total += fits(n, reqs)
			if total >= int64(Unlimited) {
				return Unlimited
			}
		}
	}
	return int32(total)
}

// place puts up to d.Replicas pods of d onto nodes, first-fit, taking what they use from the
// nodes, and returns how many it placed.
func place(nodes []Node, d Demand) int32 {
	match, reqs := matcher(d.NodeClaim), requestsOf(d.Requests)
	remaining := int64(d.Replicas)
	for i := range nodes {
		if remaining <= 0 {
			break
		}
		n := &nodes[i]
		if !match(n) {
			continue
		}
		k := min(fits(n, reqs), remaining)
		if k <= 0 {
			continue
		}
		n.FreePods -= k
		if !n.owned {
			n.Free, n.owned = n.Free.DeepCopy(), true
		}
		for _, r := range reqs {
			if have, ok := n.Free[r.name]; ok {
				used := r.q.DeepCopy()
				used.Mul(k)
				have.Sub(used)
				n.Free[r.name] = have
			}
		}
		remaining -= k
	}
	return int32(int64(d.Replicas) - max(remaining, 0))
}

// request is one positive resource request of a pod, "pods" aside.
type request struct {
	name corev1.ResourceName
	q    resource.Quantity
}

// requestsOf lists the positive requests of l but "pods", once per estimate rather than per
// node.
func requestsOf(l corev1.ResourceList) []request {
	out := make([]request, 0, len(l))
	for name, q := range l {
		if name != corev1.ResourcePods && q.Sign() > 0 {
			out = append(out, request{name, q})
		}
	}
	return out
}

// fits is how many pods with requests reqs fit onto n as it is now.
func fits(n *Node, reqs []request) int64 {
	bound := max(n.FreePods, 0)
	for _, r := range reqs {
		have, ok := n.Free[r.name]
		if !ok {
			if n.model {
				continue
			}
			return 0
		}
		bound = min(bound, quotient(have, r.q))
	}
	return min(bound, math.MaxInt32)
}

// unschedulableTaint is the taint a cordoned node carries (spec.unschedulable).
var unschedulableTaint = corev1.Taint{Key: corev1.TaintNodeUnschedulable, Effect: corev1.TaintEffectNoSchedule}

// matcher returns whether pods with claim may run on a node: Ready, its labels matched by the
// claim's node selector and hard node affinity, its scheduling taints tolerated.
func matcher(claim *workv1alpha2.NodeClaim) func(*Node) bool {
	type label struct{ key, value string }
	var selector []label
	var affinity *nodeaffinity.LazyErrorNodeSelector
	var tolerations []corev1.Toleration
	if claim != nil {
		tolerations = claim.Tolerations
		for k, v := range claim.NodeSelector {
			selector = append(selector, label{k, v})
		}
		if claim.HardNodeAffinity != nil {
			affinity = nodeaffinity.NewLazyErrorNodeSelector(claim.HardNodeAffinity)
		}
	}
	logger := klog.Background()
	tolerates := func(t *corev1.Taint) bool {
		for i := range tolerations {
			if tolerations[i].ToleratesTaint(logger, t, false) {
				return true
			}
		}
		return false
	}
	return func(n *Node) bool {
		if !n.Ready {
			return false
		}
		if n.Node == nil {
			return true
		}
		for _, l := range selector {
			if have, ok := n.Node.Labels[l.key]; !ok || have != l.value {
				return false
			}
		}
		if affinity != nil {
			if ok, err := affinity.Match(n.Node); err != nil || !ok {
				return false
			}
		}
		if n.Node.Spec.Unschedulable && !tolerates(&unschedulableTaint) {
			return false
		}
		for i := range n.Node.Spec.Taints {
			t := &n.Node.Spec.Taints[i]
			if (t.Effect == corev1.TaintEffectNoSchedule || t.Effect == corev1.TaintEffectNoExecute) && !tolerates(t) {
				return false
			}
		}
		return true
	}
}

// FitSets places whole sets of demands (every demand with all its replicas) onto nodes,
// first-fit, after the assumed demands, until one does not fit or limit sets are placed, and
// returns how many were. nodes is not modified.
func FitSets(nodes []Node, set, assumed []Demand, limit int32) int32 {
	sim := slices.Clone(nodes)
	for _, d := range assumed {
		place(sim, d)
	}
	var sets int32
	for sets < limit {
		for _, d := range set {
			if place(sim, d) < d.Replicas {
				return sets
			}
		}
		sets++
	}
	return sets
}
