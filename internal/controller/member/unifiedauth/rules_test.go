package unifiedauth

import (
	"reflect"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestSubjectsFollowProxyGrants(t *testing.T) {
	role := func(name string, rules ...rbacv1.PolicyRule) rbacv1.ClusterRole {
		return rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: rules}
	}
	bind := func(role, kind string, subjects ...rbacv1.Subject) rbacv1.ClusterRoleBinding {
		return rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: role + "-binding"},
			RoleRef: rbacv1.RoleRef{Kind: kind, Name: role}, Subjects: subjects}
	}
	user := func(n string) rbacv1.Subject { return rbacv1.Subject{Kind: rbacv1.UserKind, Name: n} }
	roles := []rbacv1.ClusterRole{
		role("member1-only", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, ResourceNames: []string{"member1"}, Verbs: []string{"get"}}),
		role("every-cluster", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters/proxy"}, Verbs: []string{"*"}}),
		role("cluster-admin", rbacv1.PolicyRule{APIGroups: []string{"*"}, Resources: []string{"*"}, Verbs: []string{"*"}}),
		role("search", rbacv1.PolicyRule{APIGroups: []string{"search.karmada.io"}, Resources: []string{"proxying/proxy"}, Verbs: []string{"get"}}),
		role("clusters-only", rbacv1.PolicyRule{APIGroups: []string{"cluster.karmada.io"}, Resources: []string{"clusters"}, Verbs: []string{"*"}}),
	}
	bindings := []rbacv1.ClusterRoleBinding{
		bind("member1-only", "ClusterRole", user("alice")),
		bind("every-cluster", "ClusterRole", user("bob")),
		bind("cluster-admin", "ClusterRole", rbacv1.Subject{Kind: rbacv1.GroupKind, Name: "system:masters"}),
		bind("search", "ClusterRole", rbacv1.Subject{Kind: rbacv1.ServiceAccountKind, Namespace: "ops", Name: "searcher"}),
		bind("clusters-only", "ClusterRole", user("carol")),
		bind("member1-only", "Role", user("dave")), // a binding to a Role of that name is no grant
		bind("missing", "ClusterRole", user("erin")),
	}
	for _, tc := range []struct {
		cluster string
		want    []rbacv1.PolicyRule
	}{
		{"member1", []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"alice", "bob"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"searcher"}},
			{APIGroups: []string{""}, Resources: []string{"groups"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"system:masters"}},
		}},
		{"member2", []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"users"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"bob"}},
			{APIGroups: []string{""}, Resources: []string{"serviceaccounts"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"searcher"}},
			{APIGroups: []string{""}, Resources: []string{"groups"}, Verbs: []string{"impersonate"}, ResourceNames: []string{"system:masters"}},
		}},
	} {
		if got := ImpersonationRules(Subjects(tc.cluster, roles, bindings)); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("%s: rules\n%+v\nwant\n%+v", tc.cluster, got, tc.want)
		}
	}
	if got := ImpersonationRules(nil); got != nil {
		t.Errorf("no subjects: %+v, want no rules", got)
	}
	twice := []rbacv1.Subject{user("bob"), user("alice"), user("bob")}
	if got := ImpersonationRules(twice)[0].ResourceNames; !reflect.DeepEqual(got, []string{"alice", "bob"}) {
		t.Errorf("repeated subjects: %v", got)
	}
}
