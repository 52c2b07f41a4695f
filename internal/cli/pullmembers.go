package cli

import (
	"context"
	"fmt"
	"os"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/localstack"
	"github.com/flotilla-io/flotilla/internal/member/register"
)

// registerPullMembers registers the stack's Pull-mode members as
// `flotilla token create` and `flotilla register` would (a bootstrap token,
// discovery of the control plane's CA by its hash, a CSR the controller
// manager approves) and starts their agents. A member registered by an
// earlier `up` on this data dir (its Cluster exists in Pull mode and its
// credentials Secret is there) only gets its agent started again.
func registerPullMembers(ctx context.Context, s *localstack.Stack) error {
	var pull []*localstack.ClusterPlan
	for _, m := range s.Plan.Members() {
		if m.Agent.Kind != "" {
			pull = append(pull, m)
		}
	}
	if len(pull) == 0 {
		return nil
	}
	cpCfg, err := localstack.RESTConfig(s.Plan.KarmadaKubeconfig(), localstack.ControlPlaneContext)
	if err != nil {
		return err
	}
	cpKube, err := kubernetes.NewForConfig(cpCfg)
	if err != nil {
		return err
	}
	cp, err := controlPlaneClient(s.Plan)
	if err != nil {
		return err
	}
	caPEM, err := os.ReadFile(s.Plan.PKI.CACert)
	if err != nil {
		return fmt.Errorf("read the stack's CA: %w", err)
	}
	hash, err := register.CACertHash(caPEM)
	if err != nil {
		return err
	}
	for _, m := range pull {
		member, err := localstack.RESTConfig(m.Kubeconfig, "")
		if err != nil {
			return err
		}
		if err := controlplane.InstallMemberCRDs(ctx, member); err != nil {
			return fmt.Errorf("install the mcs-api CRDs in %s: %w", m.Name, err)
		}
		if !registered(ctx, cp, member, m.Name) {
			token, err := register.CreateToken(ctx, cpKube, 10*time.Minute, "flotilla up: register "+m.Name)
			if err != nil {
				return fmt.Errorf("create a bootstrap token for %s: %w", m.Name, err)
			}
			if _, err := register.Register(ctx, register.RegisterOptions{ControlPlane: s.Plan.ControlPlane().Server(), Token: token,
				CACertHashes: []string{hash}, ClusterName: m.Name, Member: member, Timeout: time.Minute}); err != nil {
				return fmt.Errorf("register %s in Pull mode: %w (see %s)", m.Name, err, s.Plan.ControllerManager.LogFile)
			}
			s.Progress("%s: registered in Pull mode (bootstrap token, certificate for %s%s)", m.Name, register.AgentUserPrefix, m.Name)
		}
		if err := s.StartComponent(ctx, m.Agent); err != nil {
			return err
		}
		if err := labelLocal(ctx, cp, m.Name); err != nil {
			return err
		}
	}
	return nil
}

// registered reports whether member name was registered before: its
// Cluster is in Pull mode and the member holds the agent's credentials.
func registered(ctx context.Context, cp client.Client, member *rest.Config, name string) bool {
	c := &clusterv1alpha1.Cluster{}
	if err := cp.Get(ctx, client.ObjectKey{Name: name}, c); err != nil || c.Spec.SyncMode != clusterv1alpha1.Pull {
		return false
	}
	kube, err := kubernetes.NewForConfig(member)
	if err != nil {
		return false
	}
	_, err = kube.CoreV1().Secrets(register.KubeconfigSecretNamespace).Get(ctx, register.KubeconfigSecretName, metav1.GetOptions{})
	return err == nil
}

// labelLocal marks a Cluster as one `up` made, so a later `up` with fewer
// members unjoins it.
func labelLocal(ctx context.Context, cp client.Client, name string) error {
	c := &clusterv1alpha1.Cluster{}
	if err := cp.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
		return err
	}
	if c.Labels[localStackLabel] == "true" {
		return nil
	}
	patch := client.MergeFrom(c.DeepCopy())
	if c.Labels == nil {
		c.Labels = map[string]string{}
	}
	c.Labels[localStackLabel] = "true"
	return cp.Patch(ctx, c, patch)
}
