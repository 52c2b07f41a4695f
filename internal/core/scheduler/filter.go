package scheduler

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// filter runs the filters over every cluster and returns the feasible ones (in name order)
// and why each other cluster was rejected (the first filter that rejected it).
//
// Clusters in Input.Previous are spared the filters that describe transient trouble (not
// Ready, API enablements missing or incomplete, NoSchedule taints), as Karmada spares
// clusters already in the scheduling result: moving a workload off a cluster is the job of
// NoExecute taints and failover, not of a reschedule that happens to run during a blip.
//
// The affinity filter accepts a cluster that matches any tier of the term (its own affinity
// or one of its overflowAffinities), as Karmada's does.
func (p *problem) filter(t tiers) ([]*candidate, []Rejection) {
	var feasible []*candidate
	var rejections []Rejection
	for _, cluster := range p.clusters {
		previous, held := p.previous[cluster.Name]
		tier := t.of(cluster)
		if reason := p.rejection(cluster, t, tier, held); reason != "" {
			rejections = append(rejections, Rejection{Cluster: cluster.Name, Reason: reason})
			continue
		}
		feasible = append(feasible, &candidate{cluster: cluster, held: held, previous: previous, tier: tier})
	}
	return feasible, rejections
}

// rejection returns why cluster, in tier (-1: none), is not feasible, or "" when it is.
func (p *problem) rejection(cluster *clusterv1alpha1.Cluster, t tiers, tier int, held bool) string {
	if tier < 0 {
		return t.reason(cluster)
	}
	if slices.Contains(p.in.Evicting, cluster.Name) {
		return "the resource is being evicted from it (graceful eviction task)"
	}
	if !held && !isReady(cluster) {
		return "cluster is not Ready"
	}
	if reason := untoleratedTaint(cluster.Spec.Taints, p.placement.ClusterTolerations, held, held && p.in.TaintManagerEvicts); reason != "" {
		return reason
	}
	if !held {
		if reason := apiNotEnabled(cluster, p.in.Resource.APIVersion, p.in.Resource.Kind); reason != "" {
			return reason
		}
	}
	if p.strategy != staticWeighted {
		if reason := missingSpreadField(cluster, p.placement.SpreadConstraints); reason != "" {
			return reason
		}
	}
	if !held {
		if reason := workloadGroupRejection(p.in.Workloads, cluster.Name); reason != "" {
			return reason
		}
	}
	return ""
}

// workloadGroupRejection implements Karmada's WorkloadAffinity and WorkloadAntiAffinity
// filters: with an affinity group, a cluster must hold every other placed workload of the
// group; with an anti-affinity group, none. A cluster that already holds the binding is
// never rejected by them (the caller spares it), so they never take a workload away.
func workloadGroupRejection(g *WorkloadGroups, cluster string) string {
	if g == nil {
		return ""
	}
	for _, peer := range g.Affinity {
		if len(peer.Clusters) > 0 && !slices.Contains(peer.Clusters, cluster) {
			return fmt.Sprintf("workload affinity group %s: %s is not placed on it", g.AffinityGroup, peer.Name)
		}
	}
	for _, peer := range g.AntiAffinity {
		if slices.Contains(peer.Clusters, cluster) {
			return fmt.Sprintf("workload anti-affinity group %s: %s is placed on it", g.AntiAffinityGroup, peer.Name)
		}
	}
	return ""
}

// isReady reports whether the cluster's Ready condition is True.
func isReady(cluster *clusterv1alpha1.Cluster) bool {
	return meta.IsStatusConditionTrue(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// untoleratedTaint implements placement.clusterTolerations: a NoSchedule or NoExecute taint of
// Cluster.spec.taints rejects the cluster unless a toleration tolerates it (core/v1
// semantics). A cluster that already holds the resource only answers to NoExecute taints,
// since NoSchedule, as for nodes, keeps newcomers out but lets incumbents stay; with
// evictedElsewhere (the taint manager evicts), not even to those.
func untoleratedTaint(taints []corev1.Taint, tolerations []corev1.Toleration, held, evictedElsewhere bool) string {
	for i := range taints {
		taint := &taints[i]
		switch taint.Effect {
		case corev1.TaintEffectNoExecute:
			if evictedElsewhere {
				continue
			}
		case corev1.TaintEffectNoSchedule:
			if held {
				continue
			}
		default:
			continue
		}
		tolerated := slices.ContainsFunc(tolerations, func(t corev1.Toleration) bool {
			// Lt/Gt tolerations are a newer core/v1 feature that Karmada does not accept;
			// they tolerate nothing here.
			return t.ToleratesTaint(klog.Logger{}, taint, false)
		})
		if !tolerated {
			return fmt.Sprintf("untolerated taint {%s}", taint.ToString())
		}
	}
	return ""
}

// apiNotEnabled implements Karmada's API enablement filter: the cluster must serve the
// resource's apiVersion and kind (status.apiEnablements). A cluster that has not reported
// its APIs yet is rejected too, since nothing can be applied to it safely.
func apiNotEnabled(cluster *clusterv1alpha1.Cluster, apiVersion, kind string) string {
	enablements := cluster.Status.APIEnablements
	if len(enablements) == 0 {
		return "API enablements not reported yet"
	}
	for _, e := range enablements {
		if e.GroupVersion != apiVersion {
			continue
		}
		if slices.ContainsFunc(e.Resources, func(r clusterv1alpha1.APIResource) bool { return r.Kind == kind }) {
			return ""
		}
	}
	reason := fmt.Sprintf("API %s/%s not enabled", apiVersion, kind)
	if c := meta.FindStatusCondition(cluster.Status.Conditions, clusterv1alpha1.ClusterConditionCompleteAPIEnablements); c != nil && c.Status != metav1.ConditionTrue {
		reason += " (API list incomplete)"
	}
	return reason
}

// missingSpreadField rejects a cluster that lacks a field a spread constraint groups by
// (spec.region, spec.zones/zone or spec.provider): it could not be counted in any group.
func missingSpreadField(cluster *clusterv1alpha1.Cluster, constraints []policyv1alpha1.SpreadConstraint) string {
	for _, c := range constraints {
		field := c.EffectiveSpreadByField()
		if field == "" || field == policyv1alpha1.SpreadByFieldCluster {
			continue
		}
		if len(clusteraffinity.FieldValues(cluster, string(field))) == 0 {
			return fmt.Sprintf("%s is not set, needed by spreadConstraints (spreadByField %s)", field, field)
		}
	}
	return ""
}
