package register

import (
	"context"
	"slices"
	"testing"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/apiserver/pkg/authorization/authorizer"
	rbacregistryvalidation "k8s.io/kubernetes/pkg/registry/rbac/validation"
	"k8s.io/kubernetes/plugin/pkg/auth/authorizer/rbac"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/member/join"
)

// authorizerFor is kube-apiserver's RBAC authorizer over objs only.
func authorizerFor(t *testing.T, objs []client.Object) authorizer.Authorizer {
	t.Helper()
	var roles []*rbacv1.Role
	var roleBindings []*rbacv1.RoleBinding
	var clusterRoles []*rbacv1.ClusterRole
	var clusterRoleBindings []*rbacv1.ClusterRoleBinding
	for _, o := range objs {
		switch o := o.(type) {
		case *rbacv1.Role:
			roles = append(roles, o)
		case *rbacv1.RoleBinding:
			roleBindings = append(roleBindings, o)
		case *rbacv1.ClusterRole:
			clusterRoles = append(clusterRoles, o)
		case *rbacv1.ClusterRoleBinding:
			clusterRoleBindings = append(clusterRoleBindings, o)
		default:
			t.Fatalf("unexpected %T", o)
		}
	}
	_, static := rbacregistryvalidation.NewTestRuleResolver(roles, roleBindings, clusterRoles, clusterRoleBindings)
	return rbac.New(static, static, static, static)
}

func TestClusterRBACConfinesAnAgentToItsOwnCluster(t *testing.T) {
	objs := append(ClusterRBAC("member1"), ClusterRBAC("member2")...)
	objs = append(objs, controlPlaneRBAC()...)
	authz := authorizerFor(t, objs)
	agent := &user.DefaultInfo{Name: AgentUser("member1"), Groups: []string{AgentGroup, user.AllAuthenticated}}
	for name, tc := range map[string]struct {
		attrs authorizer.AttributesRecord
		want  bool
	}{
		"list Works in its own execution namespace": {authorizer.AttributesRecord{Verb: "list", APIGroup: "work.karmada.io", Resource: "works", Namespace: "karmada-es-member1"}, true},
		"update a Work's status in its namespace":   {authorizer.AttributesRecord{Verb: "update", APIGroup: "work.karmada.io", Resource: "works", Subresource: "status", Namespace: "karmada-es-member1", Name: "w"}, true},
		"create events in its namespace":            {authorizer.AttributesRecord{Verb: "create", APIGroup: "events.k8s.io", Resource: "events", Namespace: "karmada-es-member1"}, true},
		"list Works in another cluster's namespace": {authorizer.AttributesRecord{Verb: "list", APIGroup: "work.karmada.io", Resource: "works", Namespace: "karmada-es-member2"}, false},
		"list Works in every namespace":             {authorizer.AttributesRecord{Verb: "list", APIGroup: "work.karmada.io", Resource: "works"}, false},
		"delete a Work in its namespace":            {authorizer.AttributesRecord{Verb: "delete", APIGroup: "work.karmada.io", Resource: "works", Namespace: "karmada-es-member1", Name: "w"}, false},
		"get its Cluster":                           {authorizer.AttributesRecord{Verb: "get", APIGroup: "cluster.karmada.io", Resource: "clusters", Name: "member1"}, true},
		"watch its Cluster by name":                 {authorizer.AttributesRecord{Verb: "watch", APIGroup: "cluster.karmada.io", Resource: "clusters", Name: "member1"}, true},
		"patch its Cluster's status":                {authorizer.AttributesRecord{Verb: "patch", APIGroup: "cluster.karmada.io", Resource: "clusters", Subresource: "status", Name: "member1"}, true},
		"get another Cluster":                       {authorizer.AttributesRecord{Verb: "get", APIGroup: "cluster.karmada.io", Resource: "clusters", Name: "member2"}, false},
		"list every Cluster":                        {authorizer.AttributesRecord{Verb: "list", APIGroup: "cluster.karmada.io", Resource: "clusters"}, false},
		"delete its Cluster":                        {authorizer.AttributesRecord{Verb: "delete", APIGroup: "cluster.karmada.io", Resource: "clusters", Name: "member1"}, false},
		"renew its Lease":                           {authorizer.AttributesRecord{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "karmada-cluster", Name: "member1"}, true},
		"update another cluster's Lease":            {authorizer.AttributesRecord{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "karmada-cluster", Name: "member2"}, false},
		"hold its agents' election Lease":           {authorizer.AttributesRecord{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "karmada-system", Name: "karmada-agent-member1"}, true},
		"hold another cluster's election Lease":     {authorizer.AttributesRecord{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "karmada-system", Name: "karmada-agent-member2"}, false},
		"take the controller manager's Lease":       {authorizer.AttributesRecord{Verb: "update", APIGroup: "coordination.k8s.io", Resource: "leases", Namespace: "karmada-system", Name: "karmada-controller-manager"}, false},
		"report its credentials Secret":             {authorizer.AttributesRecord{Verb: "update", Resource: "secrets", Namespace: "karmada-cluster", Name: "member1"}, true},
		"create a Secret in karmada-cluster":        {authorizer.AttributesRecord{Verb: "create", Resource: "secrets", Namespace: "karmada-cluster"}, true},
		"read another cluster's credentials":        {authorizer.AttributesRecord{Verb: "get", Resource: "secrets", Namespace: "karmada-cluster", Name: "member2"}, false},
		"list credentials Secrets":                  {authorizer.AttributesRecord{Verb: "list", Resource: "secrets", Namespace: "karmada-cluster"}, false},
		"read Secrets elsewhere":                    {authorizer.AttributesRecord{Verb: "get", Resource: "secrets", Namespace: "kube-system", Name: "member1"}, false},
		"renew its certificate":                     {authorizer.AttributesRecord{Verb: "create", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "selfagentclient"}, true},
		"ask for another agent's certificate":       {authorizer.AttributesRecord{Verb: "create", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "agentclient"}, false},
		"read resource interpreter customizations":  {authorizer.AttributesRecord{Verb: "list", APIGroup: "config.karmada.io", Resource: "resourceinterpretercustomizations"}, true},
		"read ResourceBindings":                     {authorizer.AttributesRecord{Verb: "list", APIGroup: "work.karmada.io", Resource: "resourcebindings"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			a := tc.attrs
			a.User, a.ResourceRequest = agent, true
			d, reason, err := authz.Authorize(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			if got := d == authorizer.DecisionAllow; got != tc.want {
				t.Errorf("allowed = %v, want %v (%s)", got, tc.want, reason)
			}
		})
	}
}

func TestClusterRBACGrantsNothingOutsideTheClustersNamesButCreates(t *testing.T) {
	const cluster = "member1"
	for _, o := range ClusterRBAC(cluster) {
		var rules []rbacv1.PolicyRule
		switch o := o.(type) {
		case *rbacv1.ClusterRole:
			rules = o.Rules
		case *rbacv1.Role:
			if o.Namespace != "karmada-es-"+cluster && o.Namespace != ClusterSecretNamespace && o.Namespace != "karmada-system" {
				t.Errorf("Role in namespace %s, outside the cluster's namespaces", o.Namespace)
			}
			if o.Namespace == ClusterSecretNamespace {
				rules = o.Rules
			}
			if o.Namespace == "karmada-system" {
				for _, r := range o.Rules {
					if r.Resources[0] == "leases" && !slices.Equal(r.Verbs, []string{"create"}) && !slices.Equal(r.ResourceNames, []string{"karmada-agent-" + cluster}) {
						t.Errorf("Role karmada-system/%s grants %v on leases beyond its agents' Lease", o.Name, r.Verbs)
					}
				}
			}
		case *rbacv1.ClusterRoleBinding:
			checkSubjects(t, o.Name, o.Subjects, cluster)
		case *rbacv1.RoleBinding:
			checkSubjects(t, o.Namespace+"/"+o.Name, o.Subjects, cluster)
		}
		// Cluster-wide and credentials rules: named objects only, except
		// creates (which cannot be limited by name).
		for _, r := range rules {
			if slices.Equal(r.Verbs, []string{"create"}) {
				continue
			}
			want := []string{cluster}
			if r.Resources[0] == "secrets" {
				want = []string{cluster, cluster + join.ImpersonatorSecretSuffix} // the credentials and the impersonator's token
			}
			if !slices.Equal(r.ResourceNames, want) {
				t.Errorf("%T %s grants %v on %v beyond resourceNames %v", o, o.GetName(), r.Verbs, r.Resources, want)
			}
		}
	}
}

func checkSubjects(t *testing.T, name string, subjects []rbacv1.Subject, cluster string) {
	t.Helper()
	want := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: AgentUser(cluster)}}
	if !slices.Equal(subjects, want) {
		t.Errorf("binding %s has subjects %v, want only the agent's user", name, subjects)
	}
}

func TestControlPlaneRBACLetsBootstrapTokensAskForAgentCertificates(t *testing.T) {
	// system:node-bootstrapper is built into kube-apiserver.
	nodeBootstrapper := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: "system:node-bootstrapper"}, Rules: []rbacv1.PolicyRule{
		{APIGroups: []string{"certificates.k8s.io"}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}}}}
	authz := authorizerFor(t, append(controlPlaneRBAC(), nodeBootstrapper))
	token := &user.DefaultInfo{Name: "system:bootstrap:abcdef", Groups: []string{"system:bootstrappers", BootstrapGroup, user.AllAuthenticated}}
	anonymous := &user.DefaultInfo{Name: user.Anonymous, Groups: []string{user.AllUnauthenticated}}
	for name, tc := range map[string]struct {
		who   user.Info
		attrs authorizer.AttributesRecord
		want  bool
	}{
		"a bootstrap token creates a CSR":              {token, authorizer.AttributesRecord{Verb: "create", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests"}, true},
		"a bootstrap token watches CSRs":               {token, authorizer.AttributesRecord{Verb: "watch", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests"}, true},
		"a bootstrap token may get agent certificates": {token, authorizer.AttributesRecord{Verb: "create", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "agentclient"}, true},
		"a bootstrap token may not renew as an agent":  {token, authorizer.AttributesRecord{Verb: "create", APIGroup: "certificates.k8s.io", Resource: "certificatesigningrequests", Subresource: "selfagentclient"}, false},
		"a bootstrap token may not read Clusters":      {token, authorizer.AttributesRecord{Verb: "list", APIGroup: "cluster.karmada.io", Resource: "clusters"}, false},
		"anyone reads cluster-info":                    {anonymous, authorizer.AttributesRecord{Verb: "get", Resource: "configmaps", Namespace: "kube-public", Name: "cluster-info"}, true},
		"anyone reads nothing else in kube-public":     {anonymous, authorizer.AttributesRecord{Verb: "get", Resource: "configmaps", Namespace: "kube-public", Name: "other"}, false},
	} {
		t.Run(name, func(t *testing.T) {
			a := tc.attrs
			a.User, a.ResourceRequest = tc.who, true
			d, reason, err := authz.Authorize(context.Background(), a)
			if err != nil {
				t.Fatal(err)
			}
			if got := d == authorizer.DecisionAllow; got != tc.want {
				t.Errorf("allowed = %v, want %v (%s)", got, tc.want, reason)
			}
		})
	}
}
