package division

import (
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestDivide(t *testing.T) {
	tc := func(name string, n int32) workv1alpha2.TargetCluster {
		return workv1alpha2.TargetCluster{Name: name, Replicas: n}
	}
	tests := []struct {
		name     string
		replicas int32
		shares   []Share
		want     []workv1alpha2.TargetCluster
	}{
		{
			name:     "2:1 with 3 gives 2 and 1",
			replicas: 3,
			shares:   []Share{{Cluster: "member1", Weight: 2}, {Cluster: "member2", Weight: 1}},
			want:     []workv1alpha2.TargetCluster{tc("member1", 2), tc("member2", 1)},
		},
		{
			name:     "2:1 with 6 gives 4 and 2",
			replicas: 6,
			shares:   []Share{{Cluster: "member2", Weight: 1}, {Cluster: "member1", Weight: 2}},
			want:     []workv1alpha2.TargetCluster{tc("member1", 4), tc("member2", 2)},
		},
		{
			name:     "1:1:1 with 10 gives the remainder by name",
			replicas: 10,
			shares:   []Share{{Cluster: "member3", Weight: 1}, {Cluster: "member2", Weight: 1}, {Cluster: "member1", Weight: 1}},
			want:     []workv1alpha2.TargetCluster{tc("member1", 4), tc("member2", 3), tc("member3", 3)},
		},
		{
			name:     "the remainder goes to heavier clusters before previous holders",
			replicas: 5,
			shares:   []Share{{Cluster: "a", Weight: 1, Previous: 9}, {Cluster: "b", Weight: 2}, {Cluster: "c", Weight: 1}},
			want:     []workv1alpha2.TargetCluster{tc("a", 1), tc("b", 3), tc("c", 1)},
		},
		{
			name:     "among equal weights the remainder goes to the larger previous holder",
			replicas: 4,
			shares:   []Share{{Cluster: "a", Weight: 1, Previous: 1}, {Cluster: "b", Weight: 1, Previous: 2}, {Cluster: "c", Weight: 1, Previous: 2}},
			want:     []workv1alpha2.TargetCluster{tc("a", 1), tc("b", 2), tc("c", 1)},
		},
		{
			name:     "zero and negative weights receive nothing and are left out",
			replicas: 3,
			shares:   []Share{{Cluster: "a", Weight: 0}, {Cluster: "b", Weight: -4}, {Cluster: "c", Weight: 5}},
			want:     []workv1alpha2.TargetCluster{tc("c", 3)},
		},
		{
			name:     "no positive weight divides nothing",
			replicas: 3,
			shares:   []Share{{Cluster: "a"}},
		},
		{
			name:     "no replicas divides nothing",
			replicas: 0,
			shares:   []Share{{Cluster: "a", Weight: 1}},
		},
		{
			name:     "weights near the int64 limit keep their ratio",
			replicas: 5,
			shares:   []Share{{Cluster: "a", Weight: 1 << 62}, {Cluster: "b", Weight: 1 << 62}, {Cluster: "c", Weight: 1 << 61}},
			want:     []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 2), tc("c", 1)},
		},
		{
			name:     "weights whose sum overflows are scaled, not wrapped",
			replicas: 5,
			shares:   []Share{{Cluster: "a", Weight: math.MaxInt64}, {Cluster: "b", Weight: math.MaxInt64}, {Cluster: "c", Weight: math.MaxInt64}},
			want:     []workv1alpha2.TargetCluster{tc("a", 2), tc("b", 2), tc("c", 1)},
		},
		{
			name:     "the largest replica count with unlimited weights does not overflow",
			replicas: math.MaxInt32,
			shares:   []Share{{Cluster: "a", Weight: math.MaxInt32}, {Cluster: "b", Weight: math.MaxInt32}},
			want:     []workv1alpha2.TargetCluster{tc("a", math.MaxInt32/2+1), tc("b", math.MaxInt32/2)},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Divide(tt.replicas, tt.shares)
			if diff := cmp.Diff(tt.want, got, cmpopts.EquateEmpty()); diff != "" {
				t.Errorf("Divide() (-want +got):\n%s", diff)
			}
			var sum int64
			for _, c := range got {
				sum += int64(c.Replicas)
			}
			if len(got) > 0 && sum != int64(tt.replicas) {
				t.Errorf("Divide() assigned %d replicas, want %d", sum, tt.replicas)
			}
		})
	}
}
