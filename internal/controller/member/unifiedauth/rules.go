package unifiedauth

import (
	"slices"

	rbacv1 "k8s.io/api/rbac/v1"
)

// The control-plane permissions that let a subject reach a member through
// the control plane, as Karmada reads them: the Cluster proxy subresource
// (resource names, when a rule has any, are the clusters it covers) and
// karmada-search's proxying/proxy, which reaches every member.
const (
	clusterGroup    = "cluster.karmada.io"
	clusterProxy    = "clusters/proxy"
	searchGroup     = "search.karmada.io"
	searchProxy     = "proxying/proxy"
	impersonateVerb = "impersonate"
	rbacKindCluster = "ClusterRole"
)

// grants reports whether a ClusterRole's rule lets its subjects reach
// cluster through the control plane. Verbs are not looked at, as in
// Karmada: any grant on the proxy counts.
func grants(rule rbacv1.PolicyRule, cluster string) bool {
	matches := func(list []string, want string) bool {
		return slices.Contains(list, want) || slices.Contains(list, "*")
	}
	if matches(rule.APIGroups, clusterGroup) && matches(rule.Resources, clusterProxy) &&
		(len(rule.ResourceNames) == 0 || slices.Contains(rule.ResourceNames, cluster)) {
		return true
	}
	return matches(rule.APIGroups, searchGroup) && matches(rule.Resources, searchProxy)
}

// Subjects lists the subjects of the ClusterRoleBindings whose ClusterRole
// grants (see grants) a way to cluster: Karmada's unified authentication
// lets exactly those be impersonated in the member. RoleBindings do not
// count (Cluster is cluster-scoped). The result is in binding order, with
// repeats; ImpersonationRules sorts and folds them.
func Subjects(cluster string, roles []rbacv1.ClusterRole, bindings []rbacv1.ClusterRoleBinding) []rbacv1.Subject {
	granting := map[string]bool{}
	for _, role := range roles {
		if slices.ContainsFunc(role.Rules, func(r rbacv1.PolicyRule) bool { return grants(r, cluster) }) {
			granting[role.Name] = true
		}
	}
	var out []rbacv1.Subject
	for _, b := range bindings {
		if b.RoleRef.Kind == rbacKindCluster && granting[b.RoleRef.Name] {
			out = append(out, b.Subjects...)
		}
	}
	return out
}

// ImpersonationRules are the rules of a member's karmada-impersonator
// ClusterRole for subjects, as Karmada writes them: one rule per kind
// present (users, service accounts by name, groups), each naming its
// subjects, sorted and without repeats. No subjects give no rules: the
// impersonator may impersonate nobody.
func ImpersonationRules(subjects []rbacv1.Subject) []rbacv1.PolicyRule {
	byKind := map[string][]string{}
	for _, s := range subjects {
		switch s.Kind {
		case rbacv1.UserKind, rbacv1.ServiceAccountKind, rbacv1.GroupKind:
			byKind[s.Kind] = append(byKind[s.Kind], s.Name)
		}
	}
	var rules []rbacv1.PolicyRule
	for _, k := range []struct{ kind, resource string }{
		{rbacv1.UserKind, "users"}, {rbacv1.ServiceAccountKind, "serviceaccounts"}, {rbacv1.GroupKind, "groups"},
	} {
		names := byKind[k.kind]
		if len(names) == 0 {
			continue
		}
		slices.Sort(names)
		rules = append(rules, rbacv1.PolicyRule{
			APIGroups: []string{""}, Resources: []string{k.resource}, Verbs: []string{impersonateVerb},
			ResourceNames: slices.Compact(names),
		})
	}
	return rules
}
