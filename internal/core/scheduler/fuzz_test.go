package scheduler

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"testing"

	corev1 "k8s.io/api/core/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/capacity"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/division"
)

// fuzzStrategies are the replicaScheduling values the low three bits of a fuzzed byte pick;
// the last two are refused.
var fuzzStrategies = []*policyv1alpha1.ReplicaSchedulingStrategy{
	nil,
	duplicatedScheduling(),
	{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided},
	staticWeights(),
	dynamicWeights(),
	divided(policyv1alpha1.ReplicaDivisionPreferenceAggregated),
	{ReplicaSchedulingType: "Spread"},
	{WeightPreference: &policyv1alpha1.ClusterPreferences{DynamicWeight: "Load"}},
}

// fuzzSpreadFields are the group constraints two bits of a fuzzed byte pick.
var fuzzSpreadFields = []policyv1alpha1.SpreadConstraint{
	{SpreadByField: policyv1alpha1.SpreadByFieldRegion},
	{SpreadByField: policyv1alpha1.SpreadByFieldZone},
	{SpreadByField: policyv1alpha1.SpreadByFieldProvider},
	{SpreadByLabel: "rack"},
}

// fuzzInput builds a scheduling problem. Each cluster takes five bytes of data: flags (not
// Ready, no APIs reported, a NoSchedule taint, a NoExecute taint, in Previous, being evicted,
// no resource summary), region/zones/provider, free pods, previous replicas, and a static
// weight (0 for none; the top bit makes it near math.MaxInt64). mode picks the strategy (bits
// 0-2), a toleration of the NoSchedule taint (bit 3), TaintManagerEvicts (bit 4), an affinity
// excluding m00 (bit 5) and which spread constraints exist (bits 6-7); limits holds their
// minGroups and maxGroups, three bits each, and the group field, and (bit 14, without mode's
// bit 5) a clusterAffinities term with two overflow groups.
func fuzzInput(replicas int32, mode uint8, limits uint16, data []byte) Input {
	rs := fuzzStrategies[mode&7].DeepCopy()
	placement := &policyv1alpha1.Placement{ReplicaScheduling: rs}
	in := Input{Resource: deployment, Placement: placement, Replicas: replicas, TaintManagerEvicts: mode&(1<<4) != 0}
	if mode&(1<<3) != 0 {
		placement.ClusterTolerations = []corev1.Toleration{{Key: "ns", Operator: corev1.TolerationOpExists}}
	}
	switch {
	case mode&(1<<5) != 0:
		placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{ExcludeClusters: []string{"m00"}}
	case limits&(1<<14) != 0:
		// m00 to m02 preferred, m01 to m04 the first overflow group, every cluster the second.
		placement.ClusterAffinities = []policyv1alpha1.ClusterAffinityTerm{{
			AffinityName:    "idc",
			ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m00", "m01", "m02"}},
			OverflowAffinities: []policyv1alpha1.OverflowClusterAffinityTerm{
				{AffinityName: "cloud", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"m01", "m02", "m03", "m04"}}},
				{AffinityName: "any"},
			},
		}}
	}
	bits := func(shift uint) int { return int(limits>>shift) & 7 }
	if mode&(1<<6) != 0 {
		placement.SpreadConstraints = append(placement.SpreadConstraints, spreadBy(policyv1alpha1.SpreadByFieldCluster, bits(0), bits(3)))
	}
	if mode&(1<<7) != 0 {
		c := fuzzSpreadFields[limits>>12&3]
		c.MinGroups, c.MaxGroups = bits(6), bits(9)
		placement.SpreadConstraints = append(placement.SpreadConstraints, c)
	}
	values := []string{"", "a", "b", "c"}
	for i := 0; i+4 < len(data) && i < 50; i += 5 {
		flags, where, pods, previous, w := data[i], data[i+1], data[i+2], data[i+3], data[i+4]
		b := cluster(fmt.Sprintf("m%02d", i/5)).region(values[where&3]).provider(values[where>>5&3])
		if z := values[where>>2&3]; z != "" {
			b.zones(z)
			if where&(1<<4) != 0 {
				b.zones(z, "z")
			}
		}
		if flags&(1<<6) == 0 {
			b.pods(int(pods))
		}
		if flags&1 != 0 {
			b.notReady()
		}
		if flags&2 != 0 {
			b.apis()
		}
		if flags&4 != 0 {
			b.taint("ns", "", corev1.TaintEffectNoSchedule)
		}
		if flags&8 != 0 {
			b.taint("ne", "", corev1.TaintEffectNoExecute)
		}
		c := b.build()
		in.Clusters = append(in.Clusters, c)
		if flags&(1<<4) != 0 {
			in.Previous = append(in.Previous, workv1alpha2.TargetCluster{Name: c.Name, Replicas: int32(previous)})
		}
		if flags&(1<<5) != 0 {
			in.Evicting = append(in.Evicting, c.Name)
		}
		if w != 0 && rs != nil && rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight == "" {
			weight := int64(w)
			if w&0x80 != 0 {
				weight = math.MaxInt64 - int64(w&0x7f)
			}
			rs.WeightPreference.StaticWeightList = append(rs.WeightPreference.StaticWeightList, policyv1alpha1.StaticClusterWeight{
				TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: []string{c.Name}}, Weight: weight})
		}
	}
	return in
}

// FuzzDecide schedules a fuzzed problem: up to ten clusters with fuzzed readiness, APIs,
// taints, topology, free pods, previous replicas and static weights, under every replica
// scheduling strategy and spread constraints by cluster and by region, zone, provider or
// label. Invariants: no panic; the same decision or error on a second run and with the
// clusters and previous replicas in reverse order; the input is not modified; an error comes
// with no clusters and maps to a condition reason other than Success. On success the clusters
// are sorted by unique name, known, not being evicted, with no negative count; duplicated (or
// replica-less) results give every cluster the requested replicas, divided ones add up to
// them with at least one each; no cluster holds more than its previous replicas plus its free
// capacity under dynamic weights or Aggregated; spread constraints' maxGroups bound the
// clusters and groups chosen, and their minGroups (when the CRD admits them: not above
// maxGroups) hold when every selected cluster is kept;
// static weights give what division.Divide gives for the weights the list assigns to the
// feasible clusters.
func FuzzDecide(f *testing.F) {
	for _, seed := range []struct {
		replicas int32
		mode     uint8
		limits   uint16
		data     []byte
	}{
		{3, 0, 0, []byte{0, 1, 10, 0, 0, 0, 2, 10, 0, 0}},
		{5, 1, 0, []byte{0, 1, 10, 0, 0, 1, 2, 10, 0, 0, 2, 3, 10, 0, 0}},
		{7, 3, 0, []byte{0, 1, 10, 0, 2, 0, 2, 10, 0, 1, 0, 3, 10, 0, 0}},
		{7, 3, 0, []byte{0, 1, 10, 0, 0xff, 0, 2, 10, 0, 0xff, 0, 3, 10, 0, 1}},
		{9, 4, 0, []byte{0, 1, 3, 0, 0, 0, 2, 20, 0, 0, 0x40, 3, 0, 0, 0}},
		{9, 5, 0, []byte{0x10, 1, 3, 2, 0, 0, 2, 20, 0, 0, 0x10, 3, 5, 4, 0}},
		{4, 5, 0, []byte{0x10, 1, 3, 9, 0, 0x10, 2, 20, 9, 0}},
		{6, 4 | 1<<6 | 1<<7, 1 | 2<<3 | 2<<6 | 2<<9, []byte{0, 0x21, 5, 0, 0, 0, 0x42, 5, 0, 0, 0, 0x63, 5, 0, 0, 0, 0x25, 5, 0, 0}},
		{2, 1 | 1<<6 | 1<<7, 2<<3 | 1<<6 | 3<<9 | 1<<12, []byte{0, 0x14, 1, 0, 0, 0, 0x08, 1, 0, 0, 0, 0x0c, 1, 0, 0}},
		{2, 1 | 1<<7, 3 << 12, []byte{0, 1, 1, 0, 0}},
		{3, 5 | 1<<6, 4 << 3, []byte{0, 1, 1, 0, 0, 0, 1, 1, 0, 0}},
		{3, 2 | 1<<3 | 1<<5, 0, []byte{0x04, 1, 1, 0, 0, 0x04, 1, 1, 0, 0, 0x08, 1, 1, 0, 0}},
		{3, 1 | 1<<4, 0, []byte{0x1f, 1, 1, 3, 0, 0x21, 1, 1, 0, 0}},
		{math.MaxInt32, 5, 0, []byte{0x40, 1, 0, 0, 0, 0x40, 2, 0, 0, 0}},
		{0, 5, 0, []byte{0, 1, 0, 0, 0}},
		{-1, 0, 0, nil},
		{1, 6, 0, []byte{0, 1, 0, 0, 0}},
		{1, 7, 0, []byte{0, 1, 0, 0, 0}},
		{9, 5, 1 << 14, []byte{0, 1, 2, 0, 0, 0, 1, 3, 0, 0, 0, 1, 1, 0, 0, 0, 1, 4, 0, 0, 0, 1, 9, 0, 0}},
		{6, 4, 1 << 14, []byte{0x10, 1, 0, 3, 0, 0x10, 1, 0, 3, 0, 0, 1, 5, 0, 0, 0x10, 1, 2, 2, 0}},
	} {
		f.Add(seed.replicas, seed.mode, seed.limits, seed.data)
	}
	f.Fuzz(func(t *testing.T, replicas int32, mode uint8, limits uint16, data []byte) {
		in := fuzzInput(replicas, mode, limits, data)
		before := fuzzInput(replicas, mode, limits, data)
		d, err := Decide(in)
		if !reflect.DeepEqual(in, before) {
			t.Fatal("Decide modified its input")
		}
		again, againErr := Decide(in)
		reversed := in
		reversed.Clusters, reversed.Previous = slices.Clone(in.Clusters), slices.Clone(in.Previous)
		slices.Reverse(reversed.Clusters)
		slices.Reverse(reversed.Previous)
		flipped, flippedErr := Decide(reversed)
		for _, other := range []struct {
			d   Decision
			err error
		}{{again, againErr}, {flipped, flippedErr}} {
			if !reflect.DeepEqual(d, other.d) || fmt.Sprint(err) != fmt.Sprint(other.err) {
				t.Fatalf("Decide is not deterministic: %v, %v and %v, %v", d, err, other.d, other.err)
			}
		}
		if err != nil {
			if d.Clusters != nil || ConditionReason(err) == ReasonSuccess {
				t.Fatalf("Decide returned %v with the error %v (reason %s)", d.Clusters, err, ConditionReason(err))
			}
			return
		}
		checkDecision(t, in, d.Clusters)
	})
}

// checkDecision checks a successful decision's invariants (see FuzzDecide).
func checkDecision(t *testing.T, in Input, got []workv1alpha2.TargetCluster) {
	t.Helper()
	p, err := newProblem(in)
	if err != nil {
		t.Fatalf("Decide accepted a placement newProblem refuses: %v", err)
	}
	byName, previous := map[string]*clusterv1alpha1.Cluster{}, map[string]int64{}
	for _, c := range in.Clusters {
		byName[c.Name] = c
	}
	for _, tc := range in.Previous {
		previous[tc.Name] += int64(tc.Replicas)
	}
	assigned := map[string]int32{}
	var total int64
	for i, tc := range got {
		c := byName[tc.Name]
		switch {
		case i > 0 && got[i-1].Name >= tc.Name:
			t.Fatalf("clusters %v are not sorted by unique name", got)
		case c == nil || slices.Contains(in.Evicting, tc.Name):
			t.Fatalf("%s in %v is unknown or being evicted", tc.Name, got)
		case tc.Replicas < 0:
			t.Fatalf("%s in %v has a negative count", tc.Name, got)
		case (in.Replicas == 0 || p.strategy == duplicated) && tc.Replicas != in.Replicas:
			t.Fatalf("%s in %v does not have the %d replicas asked for", tc.Name, got, in.Replicas)
		case in.Replicas > 0 && p.strategy != duplicated && tc.Replicas == 0:
			t.Fatalf("%s in %v is listed with no replicas", tc.Name, got)
		case (p.strategy == dynamicWeighted || p.strategy == aggregated) &&
			int64(tc.Replicas) > previous[tc.Name]+int64(capacity.AvailableReplicas(c.Status.ResourceSummary, nil)):
			t.Fatalf("%s in %v gets more than its previous replicas plus its free capacity", tc.Name, got)
		}
		assigned[tc.Name] = tc.Replicas
		total += int64(tc.Replicas)
	}
	divided := in.Replicas > 0 && p.strategy != duplicated
	if divided && total != int64(in.Replicas) {
		t.Fatalf("clusters %v hold %d replicas, want %d", got, total, in.Replicas)
	}
	if p.strategy == staticWeighted && divided {
		if want := staticDivision(t, in); !reflect.DeepEqual(got, want) {
			t.Fatalf("static weights give %v, want %v", got, want)
		}
	}
	if p.strategy == staticWeighted {
		return
	}
	for _, c := range in.Placement.SpreadConstraints {
		field := string(c.EffectiveSpreadByField())
		groups := map[string]bool{}
		for _, tc := range got {
			if field == string(policyv1alpha1.SpreadByFieldCluster) {
				groups[tc.Name] = true
			} else if values := clusteraffinity.FieldValues(byName[tc.Name], field); len(values) > 0 {
				groups[values[0]] = true
			}
		}
		// The CRD refuses a maxGroups below minGroups; the scheduler then honours maxGroups.
		admitted := c.MaxGroups == 0 || c.MaxGroups >= c.MinGroups
		if c.MaxGroups > 0 && len(groups) > c.MaxGroups || admitted && !divided && len(groups) < c.MinGroups {
			t.Fatalf("clusters %v span %d %s group(s), outside minGroups %d and maxGroups %d", got, len(groups), field, c.MinGroups, c.MaxGroups)
		}
	}
}

// staticDivision is the division static weights ask for: each feasible cluster weighs the
// largest weight of the list entries naming it, and every feasible cluster weighs 1 when
// none is named.
func staticDivision(t *testing.T, in Input) []workv1alpha2.TargetCluster {
	t.Helper()
	rejections, err := Rejections(in)
	if err != nil {
		t.Fatalf("Rejections: %v", err)
	}
	var list []policyv1alpha1.StaticClusterWeight
	if wp := in.Placement.ReplicaScheduling.WeightPreference; wp != nil {
		list = wp.StaticWeightList
	}
	var shares []division.Share
	named := false
	for _, c := range in.Clusters {
		if slices.ContainsFunc(rejections, func(r Rejection) bool { return r.Cluster == c.Name }) {
			continue
		}
		s := division.Share{Cluster: c.Name}
		for _, w := range list {
			if slices.Contains(w.TargetCluster.ClusterNames, c.Name) {
				s.Weight, named = max(s.Weight, w.Weight), true
			}
		}
		shares = append(shares, s)
	}
	if !named {
		for i := range shares {
			shares[i].Weight = 1
		}
	}
	return division.Divide(in.Replicas, shares, division.TiesFor(string(in.Resource.UID)))
}
