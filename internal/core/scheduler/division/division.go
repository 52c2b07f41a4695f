// Package division splits a replica count among member clusters in proportion to weights, by
// Webster's method (also called Sainte-Laguë), as Karmada's scheduler does since v1.17 for
// every replica division preference: Weighted with a static weight list, Weighted with dynamic
// weights (the replicas each cluster can still take), and Aggregated (the same, among the
// fewest clusters that can take them all).
//
// Webster's method hands out replicas one at a time, each to the cluster whose weight divided
// by (2 × the replicas it already has + 1) is the largest. Unlike handing the remainder of a
// proportional split to the heaviest clusters, it gives a light cluster its first replica
// early (2 replicas at weights 2:1 are 1 and 1, not 2 and 0), and adding replicas never takes
// one away from a cluster.
package division

import (
	"container/heap"
	"hash/fnv"
	"math/big"
	"math/bits"
	"sort"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Share is one cluster's claim in a division.
type Share struct {
	// Cluster is the member cluster name.
	Cluster string
	// Weight is the cluster's relative share; zero or negative weights receive nothing.
	Weight int64
}

// Ties says which of two clusters takes the next replica when both would be worth the same:
// the one holding fewer replicas, and between equals the one first in name order.
type Ties int

const (
	// NamesAscending prefers the lexicographically smaller cluster name in a tie.
	NamesAscending Ties = iota
	// NamesDescending prefers the lexicographically larger cluster name in a tie.
	NamesDescending
)

// TiesFor returns the name order Karmada's scheduler breaks ties with for a resource:
// descending when the 32-bit FNV-1a hash of the resource template's UID (the binding's
// spec.resource.uid) is odd, ascending otherwise and for an empty UID. Equal weights thus
// favour different clusters for different workloads, spreading the remainders evenly across
// a fleet, while one workload's division never changes from one scheduling to the next.
func TiesFor(uid string) Ties {
	if uid == "" {
		return NamesAscending
	}
	h := fnv.New32a()
	h.Write([]byte(uid))
	if h.Sum32()&1 == 1 {
		return NamesDescending
	}
	return NamesAscending
}

// Divide splits replicas among shares by Webster's method: each replica in turn goes to the
// share with the largest weight/(2×held+1), compared exactly; in a tie to the share holding
// fewer, then to the first by name in the order ties gives. The result equals Karmada's for
// the same weights and tie order.
//
// It returns only the clusters that receive at least one replica, sorted by name; nil when
// replicas is not positive or no share has a positive weight. Cluster names are assumed
// unique. The cost does not grow with replicas: every share first gets a lower bound of its
// result, computed from its exact quota, and only the few replicas left are handed out one at
// a time.
func Divide(replicas int32, shares []Share, ties Ties) []workv1alpha2.TargetCluster {
	if replicas <= 0 {
		return nil
	}
	q := &queue{ties: ties}
	total := new(big.Int)
	for _, s := range shares {
		if s.Weight > 0 {
			q.parties = append(q.parties, party{name: s.Cluster, weight: uint64(s.Weight)})
			total.Add(total, big.NewInt(s.Weight))
		}
	}
	if len(q.parties) == 0 {
		return nil
	}
	left := int64(replicas) - q.startAtLowerBounds(replicas, total)
	heap.Init(q)
	for ; left > 0; left-- {
		q.parties[0].held++
		heap.Fix(q, 0)
	}
	var out []workv1alpha2.TargetCluster
	for _, p := range q.parties {
		if p.held > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: p.name, Replicas: int32(p.held)})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// startAtLowerBounds gives every party floor(replicas×weight/total) − (n+1) replicas (at
// least 0), n being the number of parties, and returns how many it gave. Webster's result is
// never below that: with p the priority of the last replica handed out, a party holding s has
// weight/p ≤ 2s+1, and the replicas add up to at most total/(2p) + n/2, so
// s ≥ quota − (n+1)/2. Since Webster's method hands out replicas in one fixed order of
// (party, replica) pairs, starting from below the result and going on one at a time reaches
// the same result; at most n(n+2) replicas are then left.
func (q *queue) startAtLowerBounds(replicas int32, total *big.Int) int64 {
	margin := int64(len(q.parties) + 1)
	var given int64
	quota := new(big.Int)
	for i := range q.parties {
		quota.SetUint64(q.parties[i].weight)
		quota.Mul(quota, big.NewInt(int64(replicas)))
		quota.Quo(quota, total)
		if start := quota.Int64() - margin; start > 0 {
			q.parties[i].held = start
			given += start
		}
	}
	return given
}

// party is one cluster in the division: its weight and the replicas it holds so far.
type party struct {
	name   string
	weight uint64
	held   int64
}

// queue is a max-heap of parties by Webster priority, weight/(2×held+1), ties broken by
// fewer held, then by name in ties' order.
type queue struct {
	parties []party
	ties    Ties
}

func (q *queue) Len() int      { return len(q.parties) }
func (q *queue) Swap(i, j int) { q.parties[i], q.parties[j] = q.parties[j], q.parties[i] }
func (q *queue) Push(any)      { panic("division: the queue does not grow") }
func (q *queue) Pop() any      { panic("division: the queue does not shrink") }

// Less reports whether party i takes the next replica before party j. The priorities are
// compared by cross-multiplication in 128 bits: weight < 2^63 and 2×held+1 < 2^33.
func (q *queue) Less(i, j int) bool {
	a, b := q.parties[i], q.parties[j]
	aHi, aLo := bits.Mul64(a.weight, uint64(2*b.held+1))
	bHi, bLo := bits.Mul64(b.weight, uint64(2*a.held+1))
	if aHi != bHi {
		return aHi > bHi
	}
	if aLo != bLo {
		return aLo > bLo
	}
	if a.held != b.held {
		return a.held < b.held
	}
	if q.ties == NamesDescending {
		return a.name > b.name
	}
	return a.name < b.name
}
