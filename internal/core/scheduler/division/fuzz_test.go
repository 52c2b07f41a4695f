package division

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"testing"
)

// fuzzShares reads up to 16 shares from data, three bytes each: a weight (its top two bits
// pick a scale: small and possibly negative, about a million times larger, an available
// replica count near math.MaxInt32, or a static weight near math.MaxInt64), the previous
// replicas and a name. Names repeated in data are skipped, as clusters are unique by name.
func fuzzShares(data []byte) []Share {
	var shares []Share
	seen := map[string]bool{}
	for i := 0; i+2 < len(data) && len(shares) < 16; i += 3 {
		w, prev, name := data[i], data[i+1], fmt.Sprintf("m%03d", data[i+2])
		if seen[name] {
			continue
		}
		seen[name] = true
		low := int64(w & 0x3f)
		weight := []int64{low - 4, low << 20, math.MaxInt32 - low, math.MaxInt64 - low}[w>>6]
		shares = append(shares, Share{Cluster: name, Weight: weight, Previous: int32(prev)})
	}
	return shares
}

// FuzzDivide divides a fuzzed replica count among fuzzed shares. Invariants: no panic; nil for
// no replicas or no positive weight, else clusters sorted by unique name, each with a positive
// weight and at least one replica, adding up to the replicas; when the weights' sum fits in an
// int64 every cluster gets floor(replicas*weight/sum) or one more; a heavier cluster never
// gets fewer replicas than a lighter one (one fewer at most when the weights had to be scaled
// down), nor a cluster with more previous replicas fewer than one of equal weight; the result
// does not depend on the order of the shares or on the run, and the shares are not modified.
func FuzzDivide(f *testing.F) {
	for _, seed := range []struct {
		replicas int32
		data     []byte
	}{
		{3, []byte{2, 0, 1, 1, 0, 2}},
		{10, []byte{1, 0, 3, 1, 0, 2, 1, 0, 1}},
		{5, []byte{1, 9, 1, 2, 0, 2, 1, 0, 3}},
		{4, []byte{1, 1, 1, 1, 2, 2, 1, 2, 3}},
		{3, []byte{4, 0, 1, 0, 0, 2, 9, 0, 3}},
		{5, []byte{0xff, 0, 1, 0xff, 0, 2, 0xff, 0, 3}},
		{5, []byte{0xc1, 0, 1, 0xc0, 0, 2, 0x01, 7, 3}},
		{math.MaxInt32, []byte{0x80, 0, 1, 0x80, 0, 2}},
		{math.MaxInt32, []byte{0x7f, 0, 1, 0x41, 3, 2, 0x05, 0, 3}},
		{0, []byte{5, 0, 1}},
		{-1, []byte{5, 0, 1}},
		{7, nil},
	} {
		f.Add(seed.replicas, seed.data)
	}
	f.Fuzz(func(t *testing.T, replicas int32, data []byte) {
		shares := fuzzShares(data)
		before := slices.Clone(shares)
		got := Divide(replicas, shares)
		if !reflect.DeepEqual(shares, before) {
			t.Fatalf("Divide modified its shares: %v, was %v", shares, before)
		}
		reversed := slices.Clone(shares)
		slices.Reverse(reversed)
		if again := Divide(replicas, reversed); !reflect.DeepEqual(got, again) {
			t.Fatalf("Divide(%d, %v) = %v, but %v with the shares reversed", replicas, shares, got, again)
		}
		var positive []Share
		sum := new(big.Int)
		for _, s := range shares {
			if s.Weight > 0 {
				positive = append(positive, s)
				sum.Add(sum, big.NewInt(s.Weight))
			}
		}
		if replicas <= 0 || len(positive) == 0 {
			if got != nil {
				t.Fatalf("Divide(%d, %v) = %v, want nil", replicas, shares, got)
			}
			return
		}
		assigned := map[string]int32{}
		var total int64
		for i, tc := range got {
			if i > 0 && got[i-1].Name >= tc.Name {
				t.Fatalf("Divide(%d, %v) = %v: not sorted by unique name", replicas, shares, got)
			}
			if tc.Replicas <= 0 {
				t.Fatalf("Divide(%d, %v) = %v: %s has %d replicas", replicas, shares, got, tc.Name, tc.Replicas)
			}
			assigned[tc.Name] = tc.Replicas
			total += int64(tc.Replicas)
		}
		if total != int64(replicas) {
			t.Fatalf("Divide(%d, %v) = %v: %d replicas assigned", replicas, shares, got, total)
		}
		scaled := !sum.IsInt64()
		for _, a := range shares {
			if _, ok := assigned[a.Cluster]; ok && a.Weight <= 0 {
				t.Fatalf("Divide(%d, %v) = %v: %s has weight %d", replicas, shares, got, a.Cluster, a.Weight)
			}
			if a.Weight > 0 && !scaled {
				floor := new(big.Int).Mul(big.NewInt(int64(replicas)), big.NewInt(a.Weight))
				floor.Quo(floor, sum)
				if n := int64(assigned[a.Cluster]); n != floor.Int64() && n != floor.Int64()+1 {
					t.Fatalf("Divide(%d, %v) = %v: %s has %d replicas, its share is %s or one more", replicas, shares, got, a.Cluster, n, floor)
				}
			}
			for _, b := range positive {
				slack := int64(0)
				if scaled {
					slack = 1
				}
				if a.Weight > b.Weight && int64(assigned[a.Cluster])+slack < int64(assigned[b.Cluster]) {
					t.Fatalf("Divide(%d, %v) = %v: %s (weight %d) has fewer replicas than %s (weight %d)",
						replicas, shares, got, a.Cluster, a.Weight, b.Cluster, b.Weight)
				}
				if a.Weight == b.Weight && a.Previous > b.Previous && assigned[a.Cluster] < assigned[b.Cluster] {
					t.Fatalf("Divide(%d, %v) = %v: %s (previous %d) has fewer replicas than %s (previous %d) of the same weight",
						replicas, shares, got, a.Cluster, a.Previous, b.Cluster, b.Previous)
				}
			}
		}
	})
}
