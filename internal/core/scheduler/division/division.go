// Package division splits a replica count among member clusters in proportion to weights. It
// is the arithmetic shared by Karmada's replica division preferences: Weighted with a static
// weight list, Weighted with dynamic weights (AvailableReplicas), and Aggregated, which divides
// among the fewest clusters that can hold the replicas.
package division

import (
	"math"
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
	// Previous is how many replicas the cluster held in the last scheduling result. Among
	// clusters of equal weight, previous holders receive the remainder first, so that a
	// reschedule does not move replicas for nothing.
	Previous int32
}

// Divide splits replicas among shares in proportion to their weights, the way Karmada's
// Weighted division does: every share gets floor(replicas*weight/sum), and the replicas left
// over are handed out one at a time to shares ordered by weight (descending), then previous
// replicas (descending), then cluster name. The result is deterministic for a given input.
//
// It returns only the clusters that receive at least one replica, sorted by name; nil when
// replicas is not positive or no share has a positive weight. Weights whose sum would
// overflow int64 are scaled down together first, which keeps their ratios up to rounding.
func Divide(replicas int32, shares []Share) []workv1alpha2.TargetCluster {
	if replicas <= 0 {
		return nil
	}
	weights := positiveWeights(shares)
	sum := fitSum(weights)
	if sum == 0 {
		return nil
	}
	got := make([]int32, len(shares))
	left := replicas
	for i, w := range weights {
		if w == 0 {
			continue
		}
		got[i] = proportion(replicas, w, sum)
		left -= got[i]
	}
	if left > 0 {
		for _, i := range remainderOrder(shares, weights) {
			if left == 0 {
				break
			}
			got[i]++
			left--
		}
	}
	var out []workv1alpha2.TargetCluster
	for i, n := range got {
		if n > 0 {
			out = append(out, workv1alpha2.TargetCluster{Name: shares[i].Cluster, Replicas: n})
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Name < out[b].Name })
	return out
}

// positiveWeights copies the weights, clamping negative ones to zero.
func positiveWeights(shares []Share) []uint64 {
	weights := make([]uint64, len(shares))
	for i, s := range shares {
		if s.Weight > 0 {
			weights[i] = uint64(s.Weight)
		}
	}
	return weights
}

// fitSum returns the sum of weights, halving every weight (keeping positive ones at least 1)
// until the sum fits in an int64. Real policies never come close; this only guards the
// arithmetic against absurd static weights.
func fitSum(weights []uint64) uint64 {
	for {
		var sum uint64
		overflow := false
		for _, w := range weights {
			if sum > math.MaxInt64-w {
				overflow = true
				break
			}
			sum += w
		}
		if !overflow {
			return sum
		}
		for i, w := range weights {
			if w > 1 {
				weights[i] = w >> 1
			}
		}
	}
}

// proportion is floor(replicas*weight/sum) computed in 128 bits, so that large available
// replica counts used as weights cannot overflow. weight <= sum, so the quotient fits.
func proportion(replicas int32, weight, sum uint64) int32 {
	hi, lo := bits.Mul64(uint64(replicas), weight)
	q, _ := bits.Div64(hi, lo, sum)
	return int32(q)
}

// remainderOrder lists the indexes of shares with a positive weight in the order the
// remainder is handed out.
func remainderOrder(shares []Share, weights []uint64) []int {
	order := make([]int, 0, len(shares))
	for i, w := range weights {
		if w > 0 {
			order = append(order, i)
		}
	}
	sort.Slice(order, func(a, b int) bool {
		x, y := order[a], order[b]
		if weights[x] != weights[y] {
			return weights[x] > weights[y]
		}
		if shares[x].Previous != shares[y].Previous {
			return shares[x].Previous > shares[y].Previous
		}
		return shares[x].Cluster < shares[y].Cluster
	})
	return order
}
