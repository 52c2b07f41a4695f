package scheduler

import (
	"fmt"
	"slices"
	"strings"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// tiers is one affinity term compiled for the filters and the overflow division (Karmada's
// overflow cluster affinities, v1.18): tiers[0] is the term's own affinity, the preferred
// group, and tiers[i] (i > 0) its overflowAffinities[i-1]. A term without overflowAffinities
// has one tier.
type tiers []*clusteraffinity.Matcher

// compile compiles the term's affinity and each of its overflow affinities.
func (t affinityTerm) compile() (tiers, error) {
	primary, err := clusteraffinity.Compile(t.path, t.affinity)
	if err != nil {
		return nil, err
	}
	out := tiers{primary}
	for i := range t.overflow {
		o := &t.overflow[i]
		m, err := clusteraffinity.Compile(fmt.Sprintf("%s.overflowAffinities[%s]", t.path, o.AffinityName), &o.ClusterAffinity)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, nil
}

// of returns the first tier whose affinity cluster matches, or -1 when none does: a cluster
// listed in several groups belongs to the first, as in Karmada.
func (t tiers) of(cluster *clusterv1alpha1.Cluster) int {
	return slices.IndexFunc(t, func(m *clusteraffinity.Matcher) bool { return m.Match(cluster) })
}

// reason says why cluster is in no tier: the primary affinity's reason, and that no
// overflow group takes it either.
func (t tiers) reason(cluster *clusterv1alpha1.Cluster) string {
	r := t[0].Reason(cluster)
	if len(t) > 1 {
		r += ", nor in any of its overflowAffinities"
	}
	return r
}

// overflows reports whether replicas are divided tier by tier: the term has overflow groups
// and the division is one of the two Karmada allows them with (dynamic weight or
// Aggregated; admission refuses the others).
func (p *problem) overflows(t tiers) bool {
	return len(t) > 1 && (p.strategy == dynamicWeighted || p.strategy == aggregated)
}

// divideByTier divides the replicas as Karmada's overflow scheduling does: each tier in
// order takes what is left, up to its capacity (what its clusters can still take plus what
// they already hold of this binding), and divides that among its own clusters as
// divideByCapacity does, incrementally from what they hold. Scaling out thus fills the
// preferred group before the first overflow group, and so on. Scaling in only takes replicas
// back, from the last tier first (scaleInByTier): a cluster never gains replicas when the
// binding shrinks, even where the preferred group has room again. When the selected clusters
// already hold exactly the replicas, the placement stands, as Karmada schedules a binding
// again only when its replicas or placement change: the free resources a cluster reports lag
// behind what was just placed there, and a fresh division would count them twice. Returns
// *UnschedulableError when all tiers together cannot take the replicas.
func (p *problem) divideByTier(selected []*candidate) ([]workv1alpha2.TargetCluster, error) {
	byTier := map[int][]*candidate{}
	last := 0
	var held int64
	for _, c := range selected {
		byTier[c.tier] = append(byTier[c.tier], c)
		last = max(last, c.tier)
		held += int64(c.previous)
	}
	if held >= int64(p.in.Replicas) && held > 0 {
		return targetClusters(scaleInByTier(selected, held-int64(p.in.Replicas)), false), nil
	}
	remaining := int64(p.in.Replicas)
	var capacity int64
	result := map[string]int32{}
	for tier := 0; tier <= last && remaining > 0; tier++ {
		var room int64
		for _, c := range byTier[tier] {
			room += int64(c.available) + int64(c.previous)
		}
		capacity += room
		n := min(remaining, room)
		if n == 0 {
			continue
		}
		tcs, err := p.divideByCapacity(byTier[tier], n)
		if err != nil {
			return nil, err
		}
		for _, tc := range tcs {
			result[tc.Name] += tc.Replicas
		}
		remaining -= n
	}
	if remaining > 0 {
		return nil, unschedulable("not enough resources: the clusters of the preferred group and its overflowAffinities can take %d replica(s), %d needed", capacity, p.in.Replicas)
	}
	return targetClusters(result, false), nil
}

// scaleInByTier takes excess replicas back from what the selected clusters hold: from the last
// tier first and, within a tier, from the cluster holding the fewest first (so that the
// replicas stay on as few clusters as they can), ties broken by name. It returns each
// cluster's replicas after.
func scaleInByTier(selected []*candidate, excess int64) map[string]int32 {
	order := slices.Clone(selected)
	slices.SortStableFunc(order, func(a, b *candidate) int {
		switch {
		case a.tier != b.tier:
			return b.tier - a.tier
		case a.previous != b.previous:
			return int(a.previous - b.previous)
		}
		return strings.Compare(a.cluster.Name, b.cluster.Name)
	})
	kept := map[string]int32{}
	for _, c := range order {
		take := min(excess, int64(c.previous))
		excess -= take
		kept[c.cluster.Name] = c.previous - int32(take)
	}
	return kept
}

// overflowTerm is what affinityTerm keeps of a term's overflowAffinities.
type overflowTerm = policyv1alpha1.OverflowClusterAffinityTerm

// Group is one group of a clusterAffinities term with overflowAffinities: the term's own
// (the preferred group) or one of its overflow groups, with the clusters that belong to it.
type Group struct {
	// Name is the term's affinityName for the preferred group, else the overflow entry's.
	Name string
	// Overflow is false for the preferred group.
	Overflow bool
	// Clusters are the known clusters that belong to the group (their first match), by name.
	Clusters []string
}

// Groups returns the groups of in's current clusterAffinities term (the one
// in.ObservedAffinityName names, else the first) in the order replicas fill them, for
// `flotilla explain`; nil when that term has no overflowAffinities. Errors: a placement
// that cannot be evaluated.
func Groups(in Input) ([]Group, error) {
	p, err := newProblem(in)
	if err != nil {
		return nil, err
	}
	terms := affinityTerms(p.placement)
	term := terms[currentTerm(terms, in.ObservedAffinityName)]
	if len(term.overflow) == 0 {
		return nil, nil
	}
	t, err := term.compile()
	if err != nil {
		return nil, err
	}
	groups := []Group{{Name: term.name}}
	for _, o := range term.overflow {
		groups = append(groups, Group{Name: o.AffinityName, Overflow: true})
	}
	for _, c := range p.clusters {
		if i := t.of(c); i >= 0 {
			groups[i].Clusters = append(groups[i].Clusters, c.Name)
		}
	}
	return groups, nil
}
