package division

import (
	"fmt"
	"math"
	"math/big"
	"reflect"
	"slices"
	"testing"
)

// fuzzShares reads up to 16 shares from data, two bytes each: a weight (its top two bits pick
// a scale: small and possibly negative, about a million times larger, an available replica
// count near math.MaxInt32, or a static weight near math.MaxInt64) and a name. Names repeated
// in data are skipped, as clusters are unique by name.
func fuzzShares(data []byte) []Share {
	var shares []Share
	seen := map[string]bool{}
	for i := 0; i+1 < len(data) && len(shares) < 16; i += 2 {
		w, name := data[i], fmt.Sprintf("m%03d", data[i+1])
		if seen[name] {
			continue
		}
		seen[name] = true
		low := int64(w & 0x3f)
		weight := []int64{low - 4, low << 20, math.MaxInt32 - low, math.MaxInt64 - low}[w>>6]
		shares = append(shares, Share{Cluster: name, Weight: weight})
	}
	return shares
}

// oracleLimit bounds the replica counts the one-at-a-time oracle is run for.
const oracleLimit = 2000

// webster is the method as its definition states it, for checking Divide: from nothing, each
// replica in turn to the share of largest weight/(2×held+1) as an exact fraction, in a tie
// to the one holding fewer, then to the first by name in ties' order.
func webster(replicas int32, shares []Share, ties Ties) map[string]int32 {
	held := map[string]int32{}
	for range replicas {
		best := -1
		var bestPriority *big.Rat
		for i, s := range shares {
			if s.Weight <= 0 {
				continue
			}
			p := big.NewRat(s.Weight, 2*int64(held[s.Cluster])+1)
			if best >= 0 {
				b := shares[best]
				switch c := p.Cmp(bestPriority); {
				case c < 0:
					continue
				case c == 0 && held[s.Cluster] > held[b.Cluster]:
					continue
				case c == 0 && held[s.Cluster] == held[b.Cluster] && (ties == NamesAscending) == (s.Cluster > b.Cluster):
					continue
				}
			}
			best, bestPriority = i, p
		}
		if best < 0 {
			return nil
		}
		held[shares[best].Cluster]++
	}
	return held
}

// FuzzDivide divides a fuzzed replica count among fuzzed shares. Invariants: no panic; nil for
// no replicas or no positive weight, else clusters sorted by unique name, each with a positive
// weight and at least one replica, adding up to the replicas; up to oracleLimit replicas the
// result is webster's; a heavier cluster never gets fewer replicas than a lighter one; one
// replica more never takes a replica from any cluster (no Alabama paradox: the flaw of
// handing remainders to the heaviest clusters that Karmada moved to Webster's method for); the
// result does not depend on the order of the shares, and the shares are not modified.
func FuzzDivide(f *testing.F) {
	for _, seed := range []struct {
		replicas   int32
		descending bool
		data       []byte
	}{
		{2, false, []byte{2, 1, 1, 2}},
		{10, true, []byte{1, 3, 1, 2, 1, 1}},
		{5, false, []byte{1, 1, 2, 2, 1, 3}},
		{3, false, []byte{4, 1, 0, 2, 9, 3}},
		{5, true, []byte{0xff, 1, 0xff, 2, 0xff, 3}},
		{5, false, []byte{0xc1, 1, 0xc0, 2, 0x01, 3}},
		{math.MaxInt32, false, []byte{0x80, 1, 0x80, 2}},
		{math.MaxInt32, true, []byte{0x7f, 1, 0x41, 2, 0x05, 3}},
		{1999, false, []byte{0x3f, 1, 0x3e, 2, 0x3d, 3, 0x3c, 4, 0x3b, 5, 0x01, 6}},
		{0, false, []byte{5, 1}},
		{-1, false, []byte{5, 1}},
		{7, false, nil},
	} {
		f.Add(seed.replicas, seed.descending, seed.data)
	}
	f.Fuzz(func(t *testing.T, replicas int32, descending bool, data []byte) {
		ties := NamesAscending
		if descending {
			ties = NamesDescending
		}
		shares := fuzzShares(data)
		before := slices.Clone(shares)
		got := Divide(replicas, shares, ties)
		if !reflect.DeepEqual(shares, before) {
			t.Fatalf("Divide modified its shares: %v, was %v", shares, before)
		}
		reversed := slices.Clone(shares)
		slices.Reverse(reversed)
		if again := Divide(replicas, reversed, ties); !reflect.DeepEqual(got, again) {
			t.Fatalf("Divide(%d, %v) = %v, but %v with the shares reversed", replicas, shares, got, again)
		}
		positive := slices.ContainsFunc(shares, func(s Share) bool { return s.Weight > 0 })
		if replicas <= 0 || !positive {
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
		if replicas <= oracleLimit {
			want := webster(replicas, shares, ties)
			for name, n := range want {
				if n == 0 {
					delete(want, name)
				}
			}
			if !reflect.DeepEqual(assigned, want) {
				t.Fatalf("Divide(%d, %v, %v) = %v, Webster's method gives %v", replicas, shares, ties, got, want)
			}
		}
		for _, a := range shares {
			if _, ok := assigned[a.Cluster]; ok && a.Weight <= 0 {
				t.Fatalf("Divide(%d, %v) = %v: %s has weight %d", replicas, shares, got, a.Cluster, a.Weight)
			}
			for _, b := range shares {
				if a.Weight > b.Weight && assigned[a.Cluster] < assigned[b.Cluster] {
					t.Fatalf("Divide(%d, %v) = %v: %s (weight %d) has fewer replicas than %s (weight %d)",
						replicas, shares, got, a.Cluster, a.Weight, b.Cluster, b.Weight)
				}
			}
		}
		if replicas < math.MaxInt32 {
			for _, tc := range Divide(replicas+1, shares, ties) {
				assigned[tc.Name] -= tc.Replicas
			}
			for name, n := range assigned {
				if n > 0 {
					t.Fatalf("Divide(%d, %v) gives %s %d replica(s) more than Divide(%d)", replicas, shares, name, n, replicas+1)
				}
			}
		}
	})
}
