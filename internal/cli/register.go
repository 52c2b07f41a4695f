package cli

import (
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/flotilla-io/flotilla/internal/member/register"
)

// registerOptions are the flags of `flotilla register`.
type registerOptions struct {
	register.RegisterOptions
	// kubeconfig and context reach the member cluster (karmadactl
	// register's --kubeconfig is the member's).
	kubeconfig, context string
	// provider, region and zones are the cluster's topology, handed to the
	// agent in the printed next step (the agent records them in the
	// Cluster; without them it reads them from the member's nodes).
	provider, region string
	zones            []string
}

func newRegisterCommand() *cobra.Command {
	o := &registerOptions{}
	cmd := &cobra.Command{
		Use:   "register CONTROL_PLANE --token TOKEN --discovery-token-ca-cert-hash sha256:HASH --cluster-name NAME",
		Short: "Register this cluster with a control plane in Pull mode",
		Long: `Register a member cluster with the control plane in Pull mode, as
'karmadactl register' does, up to (not including) starting the agent.
CONTROL_PLANE is the control plane's API server, host:port or https://host:port.

The command runs with the member cluster's kubeconfig (--kubeconfig, else
$KUBECONFIG, else ~/.kube/config); the control plane need not reach the member.
It reads the control plane's public kube-public/cluster-info, checks the
bootstrap token's signature on it and the CA against
--discovery-token-ca-cert-hash, then asks the control plane for a client
certificate for user system:karmada:agent:<cluster-name>. The control plane's
agentcsrapproving controller approves it and creates the Pull-mode Cluster.
The resulting kubeconfig is stored in the member cluster as Secret
karmada-system/karmada-kubeconfig, where 'flotilla agent' reads it.

Get the token and the whole command on the control plane with
'flotilla token create --print-register-command'.`,
		Example: `  # On the control plane
  flotilla token create --print-register-command

  # With the member cluster's kubeconfig
  flotilla register 10.0.0.1:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hash> --cluster-name member4 --kubeconfig ~/.kube/member4.config

  # With its topology (else read from the member's nodes), for spread constraints
  flotilla register 10.0.0.1:6443 --token abcdef.0123456789abcdef \
    --discovery-token-ca-cert-hash sha256:<hash> --cluster-name member4 --cluster-region eu-west-1 --cluster-zones eu-west-1a`,
		Args: exactArgs(1, "the control plane's address (host:port or https://host:port)"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.complete(args); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			return o.run(cmd)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Token, "token", "", "bootstrap token from 'flotilla token create' (required)")
	f.StringSliceVar(&o.CACertHashes, "discovery-token-ca-cert-hash", nil, "pin the control plane's CA: sha256:<hex> of its public key (from 'flotilla token create --print-register-command')")
	f.BoolVar(&o.UnsafeSkipCAVerification, "discovery-token-unsafe-skip-ca-verification", false, "trust whatever CA the control plane presents (no pinning)")
	f.StringVar(&o.ClusterName, "cluster-name", "", "the cluster's name on the control plane: a DNS label of at most 48 characters (required)")
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster being registered (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.context, "context", "", "context in --kubeconfig (default: its current context)")
	f.DurationVar(&o.Timeout, "timeout", register.DefaultRegisterTimeout, "how long to wait for the token's signature and for the certificate's approval")
	f.DurationVar(&o.CertExpiration, "cert-expiration", 0, "requested lifetime of the agent's certificate (0: the signer's default)")
	f.StringVar(&o.provider, "cluster-provider", "", "the cluster's provider, for the agent to record in the Cluster's spec.provider (default: from the member's nodes)")
	f.StringVar(&o.region, "cluster-region", "", "the cluster's region, for spec.region (default: the nodes' topology.kubernetes.io/region label)")
	f.StringSliceVar(&o.zones, "cluster-zones", nil, "the cluster's zones, for spec.zones (default: the nodes' topology.kubernetes.io/zone label)")
	return cmd
}

func (o *registerOptions) complete(args []string) error {
	o.ControlPlane = args[0]
	if o.ClusterName == "" {
		return usageError{fmt.Errorf("--cluster-name is required: the name this cluster gets on the control plane")}
	}
	if o.Token == "" {
		return usageError{fmt.Errorf("--token is required: create one with 'flotilla token create' on the control plane")}
	}
	// Mistakes in the arguments first, before the kubeconfig is read.
	if err := register.ValidateClusterName(o.ClusterName); err != nil {
		return usageError{fmt.Errorf("--cluster-name: %w", err)}
	}
	if _, err := register.ControlPlaneURL(o.ControlPlane); err != nil {
		return usageError{err}
	}
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = o.kubeconfig
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context}).ClientConfig()
	if err != nil {
		return fmt.Errorf("load the member cluster's kubeconfig (set --kubeconfig): %w", err)
	}
	o.Member = cfg
	return nil
}

func (o *registerOptions) run(cmd *cobra.Command) error {
	ctx, cancel := context2(cmd, 2*o.Timeout+time.Minute)
	defer cancel()
	res, err := register.Register(ctx, o.RegisterOptions)
	if err != nil {
		return fmt.Errorf("register %s: %w", o.ClusterName, err)
	}
	out := cmd.OutOrStdout()
	pinned := "token signature and CA hash checked"
	if o.UnsafeSkipCAVerification {
		pinned = "token signature checked; CA not pinned (--discovery-token-unsafe-skip-ca-verification)"
	}
	fmt.Fprintf(out, "[discovery] control plane %s verified: %s\n", res.Server, pinned)
	fmt.Fprintf(out, "[csr] CertificateSigningRequest %s approved and signed for user %s\n", res.CSRName, register.AgentUser(o.ClusterName))
	fmt.Fprintf(out, "[credentials] kubeconfig stored in the member cluster as Secret %s/%s\n", register.KubeconfigSecretNamespace, register.KubeconfigSecretName)
	ctxFlag := ""
	if o.context != "" {
		ctxFlag = " --context " + o.context
	}
	if o.provider != "" {
		ctxFlag += " --cluster-provider " + o.provider
	}
	if o.region != "" {
		ctxFlag += " --cluster-region " + o.region
	}
	if len(o.zones) > 0 {
		ctxFlag += " --cluster-zones " + strings.Join(o.zones, ",")
	}
	fmt.Fprintf(out, "cluster(%s) is registered successfully in Pull mode\n\nNext, run the agent next to the cluster:\n  %s agent --cluster-name %s --kubeconfig %s%s\n",
		o.ClusterName, self(), o.ClusterName, o.memberKubeconfigPath(), ctxFlag)
	return nil
}

// memberKubeconfigPath is the member kubeconfig as the user gave it, for
// the next-step hint.
func (o *registerOptions) memberKubeconfigPath() string {
	switch {
	case o.kubeconfig != "":
		return o.kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "":
		return "$" + clientcmd.RecommendedConfigPathEnvVar
	}
	return clientcmd.RecommendedHomeFile
}
