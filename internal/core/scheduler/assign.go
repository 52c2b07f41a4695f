package scheduler

import (
	"fmt"
	"sort"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/division"
)

// strategy is placement.replicaScheduling resolved to one of the four ways replicas are
// assigned.
type strategy int

const (
	// duplicated: every selected cluster runs all replicas.
	duplicated strategy = iota
	// staticWeighted: Divided/Weighted by weightPreference.staticWeightList, or by equal
	// weights when there is no list.
	staticWeighted
	// dynamicWeighted: Divided/Weighted with weightPreference.dynamicWeight AvailableReplicas.
	dynamicWeighted
	// aggregated: Divided/Aggregated.
	aggregated
)

// strategyOf resolves placement.replicaScheduling with Karmada's defaults: no
// replicaScheduling means Duplicated; an empty replicaSchedulingType means Divided (the CRD
// default); Divided with no replicaDivisionPreference means Weighted (Karmada's mutating
// webhook sets it so); Weighted without dynamicWeight divides by static weights, equal ones
// when no list is given. Unknown enum values are an error.
func strategyOf(rs *policyv1alpha1.ReplicaSchedulingStrategy) (strategy, error) {
	if rs == nil {
		return duplicated, nil
	}
	switch rs.ReplicaSchedulingType {
	case policyv1alpha1.ReplicaSchedulingTypeDuplicated:
		return duplicated, nil
	case policyv1alpha1.ReplicaSchedulingTypeDivided, "":
	default:
		return 0, fmt.Errorf("replicaScheduling: unknown replicaSchedulingType %q", rs.ReplicaSchedulingType)
	}
	switch rs.ReplicaDivisionPreference {
	case policyv1alpha1.ReplicaDivisionPreferenceAggregated:
		return aggregated, nil
	case policyv1alpha1.ReplicaDivisionPreferenceWeighted, "":
	default:
		return 0, fmt.Errorf("replicaScheduling: unknown replicaDivisionPreference %q", rs.ReplicaDivisionPreference)
	}
	wp := rs.WeightPreference
	switch {
	case wp == nil || wp.DynamicWeight == "":
		return staticWeighted, nil
	case wp.DynamicWeight == policyv1alpha1.DynamicWeightByAvailableReplicas:
		return dynamicWeighted, nil
	default:
		return 0, fmt.Errorf("replicaScheduling: unknown weightPreference.dynamicWeight %q", wp.DynamicWeight)
	}
}

// assign implements placement.replicaScheduling on the selected clusters, tier by tier when
// overflow is set (divideByTier). A resource without replicas goes to every selected cluster
// with 0 replicas, whatever the strategy.
func (p *problem) assign(selected []*candidate, overflow bool) ([]workv1alpha2.TargetCluster, error) {
	replicas := map[string]int32{}
	if p.in.Replicas == 0 || p.strategy == duplicated {
		for _, c := range selected {
			replicas[c.cluster.Name] = p.in.Replicas
		}
		return targetClusters(replicas, true), nil
	}
	if p.strategy == staticWeighted {
		shares, err := p.staticShares(selected)
		if err != nil {
			return nil, err
		}
		return division.Divide(p.in.Replicas, shares, p.ties()), nil
	}
	if overflow {
		return p.divideByTier(selected)
	}
	return p.divideByCapacity(selected, int64(p.in.Replicas))
}

// staticShares weighs the clusters by weightPreference.staticWeightList: a cluster gets the
// largest weight among the entries whose targetCluster it matches (Karmada takes the
// maximum), and 0, hence no replicas, if it matches none. When no cluster matches any entry,
// or there is no list, every cluster weighs 1, which is Karmada's fallback too.
func (p *problem) staticShares(selected []*candidate) ([]division.Share, error) {
	var list []policyv1alpha1.StaticClusterWeight
	if wp := p.placement.ReplicaScheduling.WeightPreference; wp != nil {
		list = wp.StaticWeightList
	}
	matchers := make([]*clusteraffinity.Matcher, len(list))
	for i := range list {
		path := fmt.Sprintf("weightPreference.staticWeightList[%d].targetCluster", i)
		m, err := clusteraffinity.Compile(path, &list[i].TargetCluster)
		if err != nil {
			return nil, err
		}
		matchers[i] = m
	}
	shares := make([]division.Share, len(selected))
	// Whether any cluster weighs something, not the weights' sum: admitted weights can add up
	// past int64, and a wrapped sum would wrongly fall back to equal weights.
	weighed := false
	for i, c := range selected {
		shares[i] = division.Share{Cluster: c.cluster.Name}
		for j, m := range matchers {
			if m.Match(c.cluster) {
				shares[i].Weight = max(shares[i].Weight, list[j].Weight)
			}
		}
		weighed = weighed || shares[i].Weight > 0
	}
	if !weighed {
		for i := range shares {
			shares[i].Weight = 1
		}
	}
	return shares, nil
}

// divideByCapacity divides want replicas among selected by the two divisions driven by free
// resources: Weighted with dynamicWeight AvailableReplicas (replicas in proportion to the
// replicas each cluster can still take) and Aggregated (the same, over the fewest clusters
// that can take them all, largest first).
//
// Like Karmada, it is incremental when Input.Previous holds replicas on selected clusters:
// if they already add up to want, the previous assignment stands; if they fall short, only
// the difference is divided, previous holders first for Aggregated, and added to it; if they
// exceed it, want is divided among the previous holders in proportion to what they hold. The
// resources a workload already uses are thus never counted as free for it, and rescheduling
// an unchanged binding is a no-op.
//
// It returns *UnschedulableError when the clusters cannot take the replicas, saying how many
// they can.
func (p *problem) divideByCapacity(selected []*candidate, want int64) ([]workv1alpha2.TargetCluster, error) {
	var kept []*candidate
	var assigned int64
	for _, c := range selected {
		if c.previous > 0 {
			kept = append(kept, c)
			assigned += int64(c.previous)
		}
	}
	free := func(c *candidate) int64 { return int64(c.available) }
	held := func(c *candidate) int64 { return int64(c.previous) }
	switch {
	case assigned == 0:
		return p.spread(want, selected, free)
	case assigned > want:
		return p.spread(want, kept, held)
	}
	result := map[string]int32{}
	for _, c := range kept {
		result[c.cluster.Name] = c.previous
	}
	if assigned < want {
		extra, err := p.spread(want-assigned, selected, free)
		if err != nil {
			return nil, err
		}
		for _, tc := range extra {
			result[tc.Name] += tc.Replicas
		}
	}
	return targetClusters(result, false), nil
}

// spread divides n replicas among clusters in proportion to weight(cluster); for Aggregated
// only among the shortest prefix, in order of previous holders, then weight (descending),
// then name, whose weights cover n.
func (p *problem) spread(n int64, clusters []*candidate, weight func(*candidate) int64) ([]workv1alpha2.TargetCluster, error) {
	var total int64
	for _, c := range clusters {
		total += weight(c)
	}
	if total < n {
		return nil, unschedulable("not enough resources: the selected clusters can take %d more replica(s), %d needed", total, n)
	}
	if p.strategy == aggregated {
		ordered := append([]*candidate(nil), clusters...)
		sort.SliceStable(ordered, func(i, j int) bool {
			a, b := ordered[i], ordered[j]
			if a.held != b.held {
				return a.held
			}
			if weight(a) != weight(b) {
				return weight(a) > weight(b)
			}
			return a.cluster.Name < b.cluster.Name
		})
		var covered int64
		for i, c := range ordered {
			covered += weight(c)
			if covered >= n {
				clusters = ordered[:i+1]
				break
			}
		}
	}
	shares := make([]division.Share, len(clusters))
	for i, c := range clusters {
		shares[i] = division.Share{Cluster: c.cluster.Name, Weight: weight(c)}
	}
	return division.Divide(int32(n), shares, p.ties()), nil
}

// ties is the order in which division breaks ties for this resource: Karmada's, by the
// template's UID (division.TiesFor).
func (p *problem) ties() division.Ties { return division.TiesFor(string(p.in.Resource.UID)) }
