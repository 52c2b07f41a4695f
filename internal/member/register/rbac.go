package register

import (
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/election"
	"github.com/flotilla-io/flotilla/internal/member/join"
)

// ClusterSecretNamespace is the control plane's namespace of member
// credentials (Cluster.spec.secretRef), where an agent reports them.
const ClusterSecretNamespace = "karmada-cluster"

// Names of the control-plane RBAC objects EnsureControlPlane writes.
const (
	// ClusterInfoRoleName is the Role (and RoleBinding) in kube-public
	// letting anonymous users read the cluster-info ConfigMap.
	ClusterInfoRoleName = "system:karmada:bootstrap-signer-clusterinfo"
	// BootstrapBindingName binds BootstrapGroup to the built-in
	// system:node-bootstrapper ClusterRole (create and watch CSRs).
	BootstrapBindingName = "system:karmada:agent-bootstrap"
	// AgentClientRoleName grants create on
	// certificatesigningrequests/agentclient: the agentcsrapproving
	// controller approves the first agent CSR of a user who has it. Its
	// binding to BootstrapGroup is AgentClientBindingName.
	AgentClientRoleName    = "system:karmada:certificatesigningrequest:autoapprover"
	AgentClientBindingName = "system:karmada:agent-autoapprove-bootstrap"
	// AgentsRoleName is the ClusterRole (and binding) every agent has:
	// certificate renewal and reading the resource interpreter
	// configuration.
	AgentsRoleName = "system:karmada:agents"
)

// The certificates.k8s.io subresources the agentcsrapproving controller
// checks with a SubjectAccessReview (verb create), as kube's csrapproving
// checks nodeclient and selfnodeclient.
const (
	AgentClientSubresource     = "agentclient"
	SelfAgentClientSubresource = "selfagentclient"
)

// ClusterRBAC is the RBAC that confines cluster's agent (user
// system:karmada:agent:<cluster>) to its own cluster on the control plane:
//
//   - ClusterRole+ClusterRoleBinding system:karmada:agent:<cluster>: its
//     Cluster object (cluster.karmada.io clusters get/list/watch/update/patch
//     and clusters/status get/update/patch, resourceNames [cluster]);
//   - Role+RoleBinding of that name in karmada-es-<cluster>: Works and their
//     status, and creating events;
//   - Role+RoleBinding of that name in karmada-cluster: its Lease and its
//     credentials Secrets (resourceNames [cluster, cluster-impersonator])
//     and creating them (Karmada's --report-secrets);
//   - Role+RoleBinding of that name in karmada-system: the agents'
//     leader-election Lease (resourceNames [karmada-agent-<cluster>]),
//     creating it, and the election's events.
//
// Nothing else: the agent cannot read another cluster's Works or Secrets.
// The objects have no namespace-independent state; callers create or
// update them (the agentcsrapproving controller does on approval).
func ClusterRBAC(cluster string) []client.Object {
	name := AgentUser(cluster)
	subjects := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: name}}
	es := clusterv1alpha1.ExecutionNamespace(cluster)
	own := []string{cluster}
	return []client.Object{
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters"}, ResourceNames: own,
				Verbs: []string{"get", "list", "watch", "update", "patch"}},
			{APIGroups: []string{clusterv1alpha1.GroupName}, Resources: []string{"clusters/status"}, ResourceNames: own,
				Verbs: []string{"get", "update", "patch"}},
		}},
		clusterBinding(name, name, subjects),
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: es, Name: name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"works"}, Verbs: []string{"get", "list", "watch", "update", "patch"}},
			{APIGroups: []string{workv1alpha1.GroupName}, Resources: []string{"works/status"}, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		}},
		roleBinding(es, name, subjects),
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: ClusterSecretNamespace, Name: name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: own, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, ResourceNames: []string{cluster, cluster + join.ImpersonatorSecretSuffix}, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{""}, Resources: []string{"secrets"}, Verbs: []string{"create"}},
		}},
		roleBinding(ClusterSecretNamespace, name, subjects),
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: election.DefaultNamespace, Name: name}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{election.AgentLease(cluster)}, Verbs: []string{"get", "update", "patch"}},
			{APIGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, Verbs: []string{"create"}},
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch", "update"}},
		}},
		roleBinding(election.DefaultNamespace, name, subjects),
	}
}

// controlPlaneRBAC is the registration RBAC EnsureControlPlane writes
// (everything but the cluster-info ConfigMap).
func controlPlaneRBAC() []client.Object {
	bootstrappers := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: BootstrapGroup}}
	agents := []rbacv1.Subject{{Kind: rbacv1.GroupKind, APIGroup: rbacv1.GroupName, Name: AgentGroup}}
	anonymous := []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: "system:anonymous"}}
	csrGroup := "certificates.k8s.io"
	return []client.Object{
		&rbacv1.Role{ObjectMeta: metav1.ObjectMeta{Namespace: metav1.NamespacePublic, Name: ClusterInfoRoleName}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{""}, Resources: []string{"configmaps"}, ResourceNames: []string{"cluster-info"}, Verbs: []string{"get"}},
		}},
		roleBinding(metav1.NamespacePublic, ClusterInfoRoleName, anonymous),
		// system:node-bootstrapper is built in: create/get/list/watch CSRs.
		clusterBinding(BootstrapBindingName, "system:node-bootstrapper", bootstrappers),
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AgentClientRoleName}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{csrGroup}, Resources: []string{"certificatesigningrequests/" + AgentClientSubresource}, Verbs: []string{"create"}},
		}},
		clusterBinding(AgentClientBindingName, AgentClientRoleName, bootstrappers),
		&rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: AgentsRoleName}, Rules: []rbacv1.PolicyRule{
			{APIGroups: []string{csrGroup}, Resources: []string{"certificatesigningrequests"}, Verbs: []string{"create", "get", "list", "watch"}},
			{APIGroups: []string{csrGroup}, Resources: []string{"certificatesigningrequests/" + SelfAgentClientSubresource}, Verbs: []string{"create"}},
			{APIGroups: []string{configv1alpha1.GroupName}, Resources: []string{"resourceinterpretercustomizations", "resourceinterpreterwebhookconfigurations"},
				Verbs: []string{"get", "list", "watch"}},
			// The execution controller reports SyncSucceed/SyncFailed on the
			// resource templates too, in their own namespaces; writing an
			// event reveals nothing.
			{APIGroups: []string{"", "events.k8s.io"}, Resources: []string{"events"}, Verbs: []string{"create", "patch"}},
		}},
		clusterBinding(AgentsRoleName, AgentsRoleName, agents),
	}
}

func clusterBinding(name, role string, subjects []rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{ObjectMeta: metav1.ObjectMeta{Name: name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: role}}
}

func roleBinding(namespace, name string, subjects []rbacv1.Subject) *rbacv1.RoleBinding {
	return &rbacv1.RoleBinding{ObjectMeta: metav1.ObjectMeta{Namespace: namespace, Name: name}, Subjects: subjects,
		RoleRef: rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "Role", Name: name}}
}
