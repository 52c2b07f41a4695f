package binding

import (
	"slices"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// MergeSuspension returns the binding's spec.suspension for the policy's
// spec.suspension (Karmada's PropagationPolicy and
// ClusterPropagationPolicy `suspension`): the policy's dispatching fields,
// plus the binding-only `scheduling` switch kept from current, which a
// third party (such as karmadactl) may have set on the binding. Nil when
// neither has anything. current and policy are not modified.
func MergeSuspension(current *workv1alpha2.Suspension, policy *policyv1alpha1.Suspension) *workv1alpha2.Suspension {
	var scheduling *bool
	if current != nil && current.Scheduling != nil {
		scheduling = new(*current.Scheduling)
	}
	if policy == nil && scheduling == nil {
		return nil
	}
	out := &workv1alpha2.Suspension{Scheduling: scheduling}
	if policy != nil {
		out.Suspension = *policy.DeepCopy()
	}
	return out
}

// DispatchSuspended reports whether applying to cluster is suspended by the
// binding's spec.suspension: `dispatching: true` suspends every cluster,
// `dispatchingOnClusters.clusterNames` the clusters it names. The binding
// controller writes the answer into each Work's spec.suspendDispatching,
// as Karmada's binding controller does.
func DispatchSuspended(s *workv1alpha2.Suspension, cluster string) bool {
	if s == nil {
		return false
	}
	if s.Dispatching != nil && *s.Dispatching {
		return true
	}
	return s.DispatchingOnClusters != nil && slices.Contains(s.DispatchingOnClusters.ClusterNames, cluster)
}

// WorkloadGroups returns a ResourceBinding's spec.workloadAffinityGroups
// for a template with labels under a policy's placement.workloadAffinity
// (Karmada's WorkloadAffinity): each group is "<groupByLabelKey>=<value>",
// for the keys the template has; nil when it is in no group.
func WorkloadGroups(labels map[string]string, wa *policyv1alpha1.WorkloadAffinity) *workv1alpha2.WorkloadAffinityGroups {
	if wa == nil {
		return nil
	}
	g := &workv1alpha2.WorkloadAffinityGroups{}
	if wa.Affinity != nil {
		if v, ok := labels[wa.Affinity.GroupByLabelKey]; ok {
			g.AffinityGroup = wa.Affinity.GroupByLabelKey + "=" + v
		}
	}
	if wa.AntiAffinity != nil {
		if v, ok := labels[wa.AntiAffinity.GroupByLabelKey]; ok {
			g.AntiAffinityGroup = wa.AntiAffinity.GroupByLabelKey + "=" + v
		}
	}
	if g.AffinityGroup == "" && g.AntiAffinityGroup == "" {
		return nil
	}
	return g
}
