package capacity

import (
	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// ModelNodePods is how many pods a model node (a node rebuilt from a grade's minimums) takes:
// Kubernetes' default maxPods, as in Karmada's general estimator.
const ModelNodePods = 110

// GradeOf returns the index, in models, of the grade a node with free resources belongs to:
// for every resource the models bound, the last grade whose min is at most the node's free
// amount, and of those the lowest, so that the node meets every minimum of its grade (Karmada's
// cluster resource modeling). A resource the node lacks counts as 0. models must be
// standardized (sorted by grade, as the API server keeps them). It returns -1 when models
// is empty or a free amount is below every min (a negative free amount on an overcommitted
// node).
func GradeOf(models []clusterv1alpha1.ResourceModel, free corev1.ResourceList) int {
	if len(models) == 0 {
		return -1
	}
	grade := len(models) - 1
	for j, r := range models[0].Ranges {
		have := free[r.Name]
		last := -1
		for i := range models {
			if j >= len(models[i].Ranges) || models[i].Ranges[j].Min.Cmp(have) > 0 {
				break
			}
			last = i
		}
		grade = min(grade, last)
	}
	return grade
}

// CountModelings is Cluster.status.resourceSummary.allocatableModelings for nodes with free
// resources frees: one entry per model, in the models' order, with how many nodes GradeOf puts
// in its grade. Nodes that fit no grade are not counted. It returns nil without models.
func CountModelings(models []clusterv1alpha1.ResourceModel, frees []corev1.ResourceList) []clusterv1alpha1.AllocatableModeling {
	if len(models) == 0 {
		return nil
	}
	out := make([]clusterv1alpha1.AllocatableModeling, len(models))
	for i, m := range models {
		out[i].Grade = m.Grade
	}
	for _, free := range frees {
		if g := GradeOf(models, free); g >= 0 {
			out[g].Count++
		}
	}
	return out
}

// modelNodes rebuilds a cluster's nodes from its models and counts: count nodes per grade,
// each with the grade's minimums as free resources and ModelNodePods pods, smallest grade
// first. It returns false when the cluster has no models or no counts to build from.
func modelNodes(cluster *clusterv1alpha1.Cluster) ([]Node, bool) {
	summary := cluster.Status.ResourceSummary
	if summary == nil || len(summary.AllocatableModelings) == 0 || len(cluster.Spec.ResourceModels) == 0 {
		return nil, false
	}
	counts := map[uint]int{}
	for _, a := range summary.AllocatableModelings {
		counts[a.Grade] += max(a.Count, 0)
	}
	var nodes []Node
	for _, m := range cluster.Spec.ResourceModels {
		free := corev1.ResourceList{}
		for _, r := range m.Ranges {
			free[r.Name] = r.Min
		}
		for range counts[m.Grade] {
			nodes = append(nodes, Node{Free: free.DeepCopy(), FreePods: ModelNodePods, Ready: true, model: true})
		}
	}
	return nodes, true
}
