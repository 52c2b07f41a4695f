package proxy

import "testing"

func TestSplit(t *testing.T) {
	for _, tc := range []struct {
		path, cluster, rest string
		ok                  bool
	}{
		{"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/api/v1/namespaces", "member1", "/api/v1/namespaces", true},
		{"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy", "member1", "/", true},
		{"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy/", "member1", "/", true},
		{"/apis/cluster.karmada.io/v1alpha1/clusters/member1", "", "", false},
		{"/apis/cluster.karmada.io/v1alpha1/clusters/member1/status", "", "", false},
		{"/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxyx/api", "", "", false},
		{"/apis/cluster.karmada.io/v1alpha1/clusters", "", "", false},
		{"/api/v1/namespaces", "", "", false},
	} {
		c, r, ok := Split(tc.path)
		if c != tc.cluster || r != tc.rest || ok != tc.ok {
			t.Errorf("Split(%q) = %q, %q, %v; want %q, %q, %v", tc.path, c, r, ok, tc.cluster, tc.rest, tc.ok)
		}
	}
}
