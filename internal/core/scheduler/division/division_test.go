package division

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func tc(name string, n int32) workv1alpha2.TargetCluster {
	return workv1alpha2.TargetCluster{Name: name, Replicas: n}
}

// TestDivide checks Webster's method on the cases Karmada users reported and on Karmada's own
// examples: each row's result is Karmada v1.19's for the same weights and tie order.
func TestDivide(t *testing.T) {
	twoToOne := []Share{{Cluster: "member1", Weight: 2}, {Cluster: "member2", Weight: 1}}
	classic := []Share{{Cluster: "a", Weight: 100000}, {Cluster: "b", Weight: 80000}, {Cluster: "c", Weight: 30000}, {Cluster: "d", Weight: 20000}}
	evenly := []Share{{Cluster: "member3", Weight: 1}, {Cluster: "member2", Weight: 1}, {Cluster: "member1", Weight: 1}}
	tests := []struct {
		name     string
		replicas int32
		shares   []Share
		ties     Ties
		want     []workv1alpha2.TargetCluster
	}{
		{name: "2:1 with 2 gives 1 and 1 (not 2 and 0)", replicas: 2, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 1), tc("member2", 1)}},
		{name: "2:1 with 3 gives 2 and 1", replicas: 3, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 2), tc("member2", 1)}},
		{name: "2:1 with 5 gives 3 and 2", replicas: 5, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 3), tc("member2", 2)}},
		{name: "2:1 with 6 gives 4 and 2", replicas: 6, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 4), tc("member2", 2)}},
		{name: "2:1 with 8 gives 5 and 3", replicas: 8, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 5), tc("member2", 3)}},
		{name: "2:1 with 11 gives 7 and 4", replicas: 11, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 7), tc("member2", 4)}},
		{name: "the classic example, 1 seat", replicas: 1, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 1)}},
		{name: "the classic example, 2 seats", replicas: 2, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 1), tc("b", 1)}},
		{name: "the classic example, 3 seats", replicas: 3, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 1)}},
		{name: "the classic example, 4 seats", replicas: 4, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 1), tc("c", 1)}},
		{name: "the classic example, 5 seats", replicas: 5, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 2), tc("c", 1)}},
		{name: "the classic example, 6 seats", replicas: 6, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 2), tc("c", 1), tc("d", 1)}},
		{name: "the classic example, 7 seats", replicas: 7, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 3), tc("b", 2), tc("c", 1), tc("d", 1)}},
		{name: "the classic example, 8 seats", replicas: 8, shares: classic, want: []workv1alpha2.TargetCluster{tc("a", 3), tc("b", 3), tc("c", 1), tc("d", 1)}},
		{
			name: "equal priorities go to the cluster holding fewer (3:1 with 2 gives 1 and 1)", replicas: 2,
			shares: []Share{{Cluster: "a", Weight: 3}, {Cluster: "b", Weight: 1}},
			want:   []workv1alpha2.TargetCluster{tc("a", 1), tc("b", 1)},
		},
		{name: "1:1:1 with 10, names ascending: the extra replica goes to member1", replicas: 10, shares: evenly, ties: NamesAscending, want: []workv1alpha2.TargetCluster{tc("member1", 4), tc("member2", 3), tc("member3", 3)}},
		{name: "1:1:1 with 10, names descending: the extra replica goes to member3", replicas: 10, shares: evenly, ties: NamesDescending, want: []workv1alpha2.TargetCluster{tc("member1", 3), tc("member2", 3), tc("member3", 4)}},
		{
			name: "zero and negative weights receive nothing and are left out", replicas: 3,
			shares: []Share{{Cluster: "a", Weight: 0}, {Cluster: "b", Weight: -4}, {Cluster: "c", Weight: 5}},
			want:   []workv1alpha2.TargetCluster{tc("c", 3)},
		},
		{name: "a cluster left with no replicas is omitted", replicas: 1, shares: twoToOne, want: []workv1alpha2.TargetCluster{tc("member1", 1)}},
		{name: "no positive weight divides nothing", replicas: 3, shares: []Share{{Cluster: "a"}}},
		{name: "no replicas divides nothing", replicas: 0, shares: []Share{{Cluster: "a", Weight: 1}}},
		{
			name: "weights near the int64 limit are compared exactly", replicas: 5,
			shares: []Share{{Cluster: "a", Weight: math.MaxInt64}, {Cluster: "b", Weight: math.MaxInt64 - 1}, {Cluster: "c", Weight: math.MaxInt64 - 2}},
			want:   []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 2), tc("c", 1)},
		},
		{
			name: "the largest replica count is divided at once", replicas: math.MaxInt32,
			shares: []Share{{Cluster: "a", Weight: math.MaxInt32}, {Cluster: "b", Weight: math.MaxInt32}},
			want:   []workv1alpha2.TargetCluster{tc("a", math.MaxInt32/2+1), tc("b", math.MaxInt32/2)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Divide(tt.replicas, tt.shares, tt.ties)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Divide() (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTiesFor checks the tie order Karmada derives from a template's UID: the parity of its
// 32-bit FNV-1a hash.
func TestTiesFor(t *testing.T) {
	for uid, want := range map[string]Ties{
		"":                                     NamesAscending,
		"7a1f3c2e-0000-4000-8000-000000000001": NamesAscending,
		"7a1f3c2e-0000-4000-8000-000000000002": NamesDescending,
	} {
		if got := TiesFor(uid); got != want {
			t.Errorf("TiesFor(%q) = %v, want %v", uid, got, want)
		}
	}
}
