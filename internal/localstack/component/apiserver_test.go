package component

import "testing"

func TestReleaseNow(t *testing.T) {
	const mib = 1 << 20
	cases := []struct {
		name                     string
		lastAllocs, allocs, free uint64
		want                     bool
	}{
		{"the first look only records", 0, 500 * mib, 600 * mib, false},
		{"quiet with much free heap", 900 * mib, 910 * mib, 600 * mib, true},
		{"busy", 900 * mib, 900*mib + QuietAllocBytes, 600 * mib, false},
		{"quiet with little free heap", 900 * mib, 901 * mib, ReleaseFreeBytes - 1, false},
		{"quiet at the threshold", 900 * mib, 901 * mib, ReleaseFreeBytes, true},
	}
	for _, c := range cases {
		if got := releaseNow(c.lastAllocs, c.allocs, c.free); got != c.want {
			t.Errorf("%s: releaseNow(%d, %d, %d) = %v, want %v", c.name, c.lastAllocs, c.allocs, c.free, got, c.want)
		}
	}
}
