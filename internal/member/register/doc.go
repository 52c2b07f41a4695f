// Package register gets a Pull-mode member cluster its own credentials on
// the control plane, as Karmada's `karmadactl token create`,
// `karmadactl register` and the agentcsrapproving controller do together.
//
// The flow: the control plane is prepared once (EnsureControlPlane: the
// public kube-public/cluster-info ConfigMap and the RBAC that lets bootstrap
// tokens ask for agent certificates); an operator makes a bootstrap token
// (CreateToken); `flotilla register` (Register) discovers and pins the
// control plane's CA through cluster-info and the token's JWS signature,
// asks for a client certificate for user system:karmada:agent:<cluster>
// with a CertificateSigningRequest, waits for the agentcsrapproving
// controller to approve it (which also creates the Pull-mode Cluster and
// ClusterRBAC), and stores the resulting kubeconfig in the member as Secret
// karmada-system/karmada-kubeconfig, where the agent reads it.
package register

// Karmada's names for the agent's identity and the bootstrap token's group.
const (
	// AgentUserPrefix starts the user name of every agent certificate:
	// system:karmada:agent:<cluster>.
	AgentUserPrefix = "system:karmada:agent:"
	// AgentGroup is the only organization of an agent certificate.
	AgentGroup = "system:karmada:agents"
	// BootstrapGroup is the auth-extra-groups of the bootstrap tokens this
	// package creates; it may create CSRs and ask for agent certificates.
	BootstrapGroup = "system:bootstrappers:karmada:default-cluster-token"
)

// Where, in the member cluster, the agent's control-plane kubeconfig is
// stored (karmadactl register's Secret).
const (
	KubeconfigSecretNamespace = "karmada-system"
	KubeconfigSecretName      = "karmada-kubeconfig"
	KubeconfigSecretKey       = "karmada-kubeconfig"
)

// AgentUser is the user name of cluster's agent,
// system:karmada:agent:<cluster>.
func AgentUser(cluster string) string { return AgentUserPrefix + cluster }
