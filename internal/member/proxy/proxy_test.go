package proxy

import (
	"slices"
	"testing"
)

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

func TestImpersonatedGroups(t *testing.T) {
	for _, tc := range []struct {
		user   string
		groups []string
		want   []string
	}{
		{"flotilla-admin", []string{"system:masters", "system:authenticated"}, []string{"system:masters"}},
		{"system:anonymous", []string{"system:unauthenticated"}, nil},
		{"system:serviceaccount:default:viewer", []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"}, nil},
		// Another namespace's group is the caller's own grant, kept.
		{"system:serviceaccount:default:viewer", []string{"system:serviceaccounts:ops", "team-a"}, []string{"system:serviceaccounts:ops", "team-a"}},
		// A user merely named like a group keeps its groups.
		{"alice", []string{"system:serviceaccounts", "dev"}, []string{"system:serviceaccounts", "dev"}},
	} {
		if got := ImpersonatedGroups(tc.user, tc.groups); !slices.Equal(got, tc.want) {
			t.Errorf("ImpersonatedGroups(%q, %v) = %v, want %v", tc.user, tc.groups, got, tc.want)
		}
	}
}
