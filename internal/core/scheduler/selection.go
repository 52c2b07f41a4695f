package scheduler

import (
	"errors"
	"sort"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// selectClusters implements placement.spreadConstraints on the feasible clusters.
//
// Clusters are ranked by: the overflow tier of their affinity term (the preferred group
// first, as Karmada orders by it before score), then previous holders (Karmada's cluster
// locality), then more available replicas, then name. With only a constraint by cluster, the best maxGroups
// clusters are taken (all when maxGroups is 0), and it fails when fewer than minGroups are
// feasible.
//
// With a constraint by region, zone or provider (the first present, in that order; Karmada
// itself honours only region), clusters are grouped by that field (a multi-zone cluster by its
// first zone) and groups ranked by previous holders, then total available replicas, then
// name. The best groups are taken, as many as maxGroups allows, but at least minGroups; the
// cluster constraint's maxGroups also caps how many groups can be represented. The selection
// holds the best cluster of every chosen group, then the other clusters of those groups in
// rank order, up to the cluster constraint's maxGroups. Spreading as widely as the limits
// allow is a choice: the constraints exist for availability.
//
// It returns *UnschedulableError when the groups or clusters cannot reach minGroups, and a
// plain error for spreadByLabel, which is not supported.
func selectClusters(constraints []policyv1alpha1.SpreadConstraint, feasible []*candidate) ([]*candidate, error) {
	if len(constraints) == 0 {
		return feasible, nil
	}
	var byCluster, byGroup *policyv1alpha1.SpreadConstraint
	rank := map[policyv1alpha1.SpreadFieldValue]int{
		policyv1alpha1.SpreadByFieldRegion: 1, policyv1alpha1.SpreadByFieldZone: 2, policyv1alpha1.SpreadByFieldProvider: 3,
	}
	for i := range constraints {
		c := &constraints[i]
		switch field := c.EffectiveSpreadByField(); {
		case field == "":
			return nil, errors.New("spreadConstraints: spreadByLabel is not supported")
		case field == policyv1alpha1.SpreadByFieldCluster:
			byCluster = c
		case byGroup == nil || rank[field] < rank[byGroup.SpreadByField]:
			byGroup = c
		}
	}
	ranked := rankClusters(feasible)
	if byGroup == nil {
		return takeClusters(ranked, byCluster)
	}
	return takeGroups(ranked, byGroup, byCluster)
}

// rankClusters sorts a copy of the candidates into selection order.
func rankClusters(feasible []*candidate) []*candidate {
	ranked := append([]*candidate(nil), feasible...)
	sort.SliceStable(ranked, func(i, j int) bool {
		a, b := ranked[i], ranked[j]
		if a.tier != b.tier {
			return a.tier < b.tier
		}
		if a.held != b.held {
			return a.held
		}
		if a.available != b.available {
			return a.available > b.available
		}
		return a.cluster.Name < b.cluster.Name
	})
	return ranked
}

// takeClusters applies the constraint by cluster alone.
func takeClusters(ranked []*candidate, byCluster *policyv1alpha1.SpreadConstraint) ([]*candidate, error) {
	if byCluster == nil {
		return ranked, nil
	}
	if len(ranked) < byCluster.MinGroups {
		return nil, unschedulable("spreadConstraints: %d cluster(s) feasible, fewer than minGroups %d by cluster",
			len(ranked), byCluster.MinGroups)
	}
	if byCluster.MaxGroups > 0 && len(ranked) > byCluster.MaxGroups {
		return ranked[:byCluster.MaxGroups], nil
	}
	return ranked, nil
}

// clusterGroup is the clusters sharing one value of the field spread by.
type clusterGroup struct {
	value     string
	clusters  []*candidate
	held      int
	available int64
}

// takeGroups applies a constraint by region, zone or provider together with the constraint
// by cluster, if any.
func takeGroups(ranked []*candidate, byGroup, byCluster *policyv1alpha1.SpreadConstraint) ([]*candidate, error) {
	groups := groupClusters(ranked, string(byGroup.SpreadByField))
	if len(groups) < byGroup.MinGroups {
		return nil, unschedulable("spreadConstraints: feasible clusters span %d %s(s), fewer than minGroups %d",
			len(groups), byGroup.SpreadByField, byGroup.MinGroups)
	}
	limit := len(groups)
	if byGroup.MaxGroups > 0 {
		limit = min(limit, byGroup.MaxGroups)
	}
	clusterLimit := 0
	if byCluster != nil && byCluster.MaxGroups > 0 {
		clusterLimit = byCluster.MaxGroups
		limit = min(limit, clusterLimit)
	}
	if limit < byGroup.MinGroups {
		return nil, unschedulable("spreadConstraints: maxGroups %d by cluster cannot cover minGroups %d by %s",
			clusterLimit, byGroup.MinGroups, byGroup.SpreadByField)
	}
	chosen := groups[:limit]
	selected := make([]*candidate, 0, len(ranked))
	var rest []*candidate
	for _, g := range chosen {
		selected = append(selected, g.clusters[0])
		rest = append(rest, g.clusters[1:]...)
	}
	rest = rankClusters(rest)
	for _, c := range rest {
		if clusterLimit > 0 && len(selected) >= clusterLimit {
			break
		}
		selected = append(selected, c)
	}
	if byCluster != nil && len(selected) < byCluster.MinGroups {
		return nil, unschedulable("spreadConstraints: %d cluster(s) in the chosen %s(s), fewer than minGroups %d by cluster",
			len(selected), byGroup.SpreadByField, byCluster.MinGroups)
	}
	return selected, nil
}

// groupClusters groups ranked clusters by field (keeping rank order inside each group) and
// ranks the groups.
func groupClusters(ranked []*candidate, field string) []*clusterGroup {
	index := map[string]*clusterGroup{}
	var groups []*clusterGroup
	for _, c := range ranked {
		values := clusteraffinity.FieldValues(c.cluster, field)
		if len(values) == 0 {
			continue
		}
		g := index[values[0]]
		if g == nil {
			g = &clusterGroup{value: values[0]}
			index[values[0]] = g
			groups = append(groups, g)
		}
		g.clusters = append(g.clusters, c)
		g.available += int64(c.available)
		if c.held {
			g.held++
		}
	}
	sort.SliceStable(groups, func(i, j int) bool {
		a, b := groups[i], groups[j]
		if a.held != b.held {
			return a.held > b.held
		}
		if a.available != b.available {
			return a.available > b.available
		}
		return a.value < b.value
	})
	return groups
}
