package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/member/join"
	"github.com/flotilla-io/flotilla/internal/member/register"
)

// controlPlaneFlags reach the control plane: --kubeconfig, else
// $KUBECONFIG, else the one `flotilla up` writes, else ~/.kube/config; and
// the context (karmadactl's --karmada-context).
type controlPlaneFlags struct {
	kubeconfig, context string
}

func (f *controlPlaneFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: $KUBECONFIG, else ~/.flotilla/karmada.config as written by 'flotilla up', else ~/.kube/config)")
	cmd.Flags().StringVar(&f.context, "karmada-context", "", "kubeconfig context of the control plane (default: the current context)")
}

func (f controlPlaneFlags) clientConfig() clientcmd.ClientConfig {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	switch {
	case f.kubeconfig != "":
		rules.ExplicitPath = f.kubeconfig
	case os.Getenv(clientcmd.RecommendedConfigPathEnvVar) == "":
		if p := filepath.Join(defaultDataDir(), "karmada.config"); fileExists(p) {
			rules.ExplicitPath = p
		}
	}
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: f.context})
}

// kubectlWarnings prints the API server's warnings as kubectl does
// ("Warning: ..." on stderr, each once), not as log lines.
func kubectlWarnings() {
	rest.SetDefaultWarningHandler(rest.NewWarningWriter(os.Stderr, rest.WarningWriterOptions{Deduplicate: true}))
}

// defaultToLocalStack points kubectl-style flags at the kubeconfig `flotilla
// up` writes when neither --kubeconfig nor $KUBECONFIG names one, as
// controlPlaneFlags does.
func defaultToLocalStack(flags *genericclioptions.ConfigFlags) {
	if flags.KubeConfig == nil || *flags.KubeConfig != "" || os.Getenv(clientcmd.RecommendedConfigPathEnvVar) != "" {
		return
	}
	if p := filepath.Join(defaultDataDir(), "karmada.config"); fileExists(p) {
		*flags.KubeConfig = p
	}
}

// defaultNamespace is the context's namespace, as kubectl takes it, else default.
func (f controlPlaneFlags) defaultNamespace() string {
	if ns, _, err := f.clientConfig().Namespace(); err == nil && ns != "" {
		return ns
	}
	return metav1.NamespaceDefault
}

func (f controlPlaneFlags) restConfig() (*rest.Config, error) {
	cfg, err := f.clientConfig().ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load the control plane's kubeconfig (set --kubeconfig or $KUBECONFIG): %w", err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

func (f controlPlaneFlags) client() (client.Client, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
}

// clients returns the control plane's config, a controller-runtime client
// with the Karmada scheme, and a dynamic client.
func (f controlPlaneFlags) clients() (*rest.Config, client.Client, dynamic.Interface, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, nil, nil, err
	}
	c, err := client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
	if err != nil {
		return nil, nil, nil, err
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	return cfg, c, dyn, nil
}

// memberConfig loads a member's kubeconfig (--cluster-kubeconfig, --cluster-context).
func memberConfig(kubeconfig, context string) (*rest.Config, error) {
	rules := &clientcmd.ClientConfigLoadingRules{ExplicitPath: kubeconfig}
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, fmt.Errorf("load the member's kubeconfig %s (context %q): %w", kubeconfig, context, err)
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

func newJoinCommand() *cobra.Command {
	var cp controlPlaneFlags
	var kubeconfig, context, provider, region string
	var zones []string
	cmd := &cobra.Command{
		Use:   "join CLUSTER_NAME --cluster-kubeconfig=<path>",
		Short: "Register a cluster with the control plane in Push mode",
		Long: `Register a cluster the control plane can reach, in Push mode, as 'karmadactl join'
does: a service account with cluster-admin rights is created in the cluster
(namespace karmada-cluster, name karmada-<CLUSTER_NAME>), its token is stored on
the control plane in Secret karmada-cluster/<CLUSTER_NAME>, and a Cluster object
points at both. Provider, region and zone come from the flags, else from the
cluster's first node (topology.kubernetes.io labels, spec.providerID).

Running it again refreshes the token and the endpoint. A name another cluster
already holds, or a cluster that cannot be reached, is refused.`,
		Example: `  flotilla join member4 --cluster-kubeconfig ~/.kube/member4.config
  flotilla join prod-eu --cluster-kubeconfig ~/.kube/config --cluster-context prod-eu \
    --cluster-provider aws --cluster-region eu-west-1 --cluster-zones eu-west-1a`,
		Args: exactArgs(1, "a cluster name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if kubeconfig == "" {
				return fmt.Errorf("--cluster-kubeconfig is required: the kubeconfig of the cluster to join")
			}
			member, err := memberConfig(kubeconfig, context)
			if err != nil {
				return err
			}
			c, err := cp.client()
			if err != nil {
				return err
			}
			o := join.Options{ClusterName: args[0], Member: member, Provider: provider, Region: region, Zones: zones}
			if len(zones) > 0 {
				o.Zone = zones[0]
			}
			ctx, cancel := context2(cmd, time.Minute)
			defer cancel()
			if err := join.Join(ctx, c, o); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster(%s) is joined successfully\n", args[0])
			return nil
		},
	}
	cp.add(cmd)
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "cluster-kubeconfig", "", "kubeconfig of the cluster to join (required)")
	f.StringVar(&context, "cluster-context", "", "context in --cluster-kubeconfig (default: its current context)")
	f.StringVar(&provider, "cluster-provider", "", "the cluster's provider (default: from its nodes' spec.providerID)")
	f.StringVar(&region, "cluster-region", "", "the cluster's region (default: its nodes' topology.kubernetes.io/region)")
	f.StringSliceVar(&zones, "cluster-zones", nil, "the cluster's zones (default: its nodes' topology.kubernetes.io/zone)")
	return cmd
}

func newUnjoinCommand() *cobra.Command {
	return newRemoveClusterCommand(removeCluster{
		use:   "unjoin CLUSTER_NAME",
		short: "Remove a cluster from the control plane",
		long: `Remove a cluster from the control plane, as 'karmadactl unjoin' does: the
Cluster object is deleted, which removes its Works and the objects they put in
the cluster, and drops the cluster from every placement. unjoin waits up to
--wait for that, then removes the credentials (and, with --cluster-kubeconfig,
the service account 'flotilla join' created in the cluster).

--orphan leaves the propagated objects running in the cluster, for handing it
back to its owners (Karmada always removes them).`,
		example: `  flotilla unjoin member4
  flotilla unjoin member4 --cluster-kubeconfig ~/.kube/member4.config   # also remove the service account
  flotilla unjoin member4 --orphan     # keep the workloads running in member4
  flotilla unjoin member4 --force      # member4 is gone: release it after --wait, list what is left`,
		kubeconfigHelp: "kubeconfig of the cluster, to remove the service account join created there (optional)",
		done:           "unjoined",
	})
}

// removeCluster describes `flotilla unjoin` (Push clusters) or `flotilla
// unregister` (pull: Pull clusters, whose agent's credentials in the
// cluster are removed too).
type removeCluster struct {
	use, short, long, example, kubeconfigHelp, done string
	pull                                            bool
}

// newRemoveClusterCommand builds unjoin and unregister: the Cluster is
// deleted (join.Unjoin), and with --cluster-kubeconfig what Flotilla put in
// the cluster to reach it goes too.
func newRemoveClusterCommand(r removeCluster) *cobra.Command {
	var cp controlPlaneFlags
	var kubeconfig, context string
	var orphan, force bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use: r.use, Short: r.short, Long: r.long, Example: r.example,
		Args: exactArgs(1, "a cluster name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := cp.client()
			if err != nil {
				return err
			}
			cl := &clusterv1alpha1.Cluster{}
			if err := c.Get(cmd.Context(), client.ObjectKey{Name: args[0]}, cl); err == nil {
				switch pull := cl.Spec.SyncMode == clusterv1alpha1.Pull; {
				case r.pull && !pull:
					return fmt.Errorf("cluster %s is in %s mode: remove it with 'flotilla unjoin %s'", args[0], cl.Spec.SyncMode, args[0])
				case !r.pull && pull:
					// Its agent would go on with credentials the control
					// plane no longer honours.
					return fmt.Errorf("cluster %s is in Pull mode: remove it with 'flotilla unregister %s --cluster-kubeconfig <its kubeconfig>', which also stops its agent and removes the agent's credentials from it (without --cluster-kubeconfig only the control plane's side goes)", args[0], args[0])
				}
			}
			if force && wait <= 0 {
				return usageError{fmt.Errorf("--force needs a --wait to run out first (it releases the cluster only after the wait)")}
			}
			o := join.UnjoinOptions{ClusterName: args[0], Orphan: orphan, Wait: wait, Force: force}
			if kubeconfig != "" {
				if o.Member, err = memberConfig(kubeconfig, context); err != nil {
					return err
				}
			}
			ctx, cancel := context2(cmd, wait+time.Minute)
			defer cancel()
			res, err := join.Unjoin(ctx, c, o)
			if r.pull && o.Member != nil && errors.Is(err, join.ErrNoSuchCluster) {
				// Gone already (an earlier unregister timed out while
				// the agent was away): what is left is in the member.
				if err := register.RemoveAgentCredentials(ctx, o.Member); err != nil {
					return fmt.Errorf("unregister %s: %w", args[0], err)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "cluster(%s) is gone from the control plane already; removed the agent's credentials from the member\n", args[0])
				return nil
			}
			if r.pull && errors.Is(err, join.ErrNoSuchCluster) {
				return fmt.Errorf("unregister %s: %w (kubectl get clusters lists them)", args[0], join.ErrNoSuchCluster)
			}
			if err != nil {
				return err
			}
			if r.pull && o.Member != nil && wait > 0 {
				if err := register.RemoveAgentCredentials(ctx, o.Member); err != nil {
					return fmt.Errorf("unregister %s: %w", args[0], err)
				}
			}
			if res.Forced {
				fmt.Fprintf(cmd.ErrOrStderr(), "warning: cluster %s was not cleaned within %s; --force released it. What its Works put in the cluster may still be there:\n", args[0], wait)
				for _, l := range res.Left {
					fmt.Fprintf(cmd.ErrOrStderr(), "  %s\n", l)
				}
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster(%s) is %s successfully\n", args[0], r.done)
			return nil
		},
	}
	cp.add(cmd)
	f := cmd.Flags()
	f.StringVar(&kubeconfig, "cluster-kubeconfig", "", r.kubeconfigHelp)
	f.StringVar(&context, "cluster-context", "", "context in --cluster-kubeconfig")
	if !r.pull {
		f.BoolVar(&orphan, "orphan", false, "leave the propagated objects in the cluster instead of removing them")
	}
	f.DurationVar(&wait, "wait", time.Minute, "how long to wait for the cluster's objects to be removed; 0 returns at once and leaves the credentials in place")
	f.BoolVar(&force, "force", false, "when --wait runs out (the cluster cannot be cleaned: unreachable, or a Pull cluster whose agent is gone), release the Cluster anyway and list what may be left in the cluster, as karmadactl's --force")
	return cmd
}

func newCordonCommand(cordon bool) *cobra.Command {
	var cp controlPlaneFlags
	use, short, verb := "cordon", "Mark a cluster unschedulable", "cordoned"
	if !cordon {
		use, short, verb = "uncordon", "Mark a cluster schedulable again", "uncordoned"
	}
	cmd := &cobra.Command{
		Use:   use + " CLUSTER_NAME",
		Short: short,
		Long: short + `, as karmadactl does: cordon adds the taint
` + clusterv1alpha1.TaintClusterUnschedulable + `:NoSchedule, which keeps new
placements off the cluster (what runs there stays); uncordon removes it.`,
		Example: "  flotilla " + use + " member1",
		Args:    exactArgs(1, "a cluster name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			taint := corev1.Taint{Key: clusterv1alpha1.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}
			changed, err := updateTaints(cmd, cp, args[0], []corev1.Taint{taint}, cordon)
			if err != nil {
				return err
			}
			if !changed {
				verb += " (no change)"
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster/%s %s\n", args[0], verb)
			return nil
		},
	}
	cp.add(cmd)
	return cmd
}

func newTaintCommand() *cobra.Command {
	var cp controlPlaneFlags
	var overwrite bool
	cmd := &cobra.Command{
		Use:   "taint [clusters] CLUSTER_NAME KEY[=VALUE]:EFFECT ... KEY[:EFFECT]-",
		Short: "Add or remove taints on a cluster",
		Long: `Add or remove taints on a cluster's spec.taints, with kubectl's syntax: KEY=VALUE:EFFECT
adds (EFFECT is NoSchedule, PreferNoSchedule or NoExecute), KEY:EFFECT- removes
that taint and KEY- every taint with that key. A policy's
placement.clusterTolerations lets workloads onto a tainted cluster.

NoSchedule keeps new placements off the cluster; NoExecute also takes the
cluster out of every existing placement that does not tolerate it, at once.
PreferNoSchedule is stored but, as in Karmada's scheduler, changes no placement.`,
		Example: `  flotilla taint member1 dedicated=gpu:NoSchedule
  flotilla taint clusters member1 dedicated:NoSchedule-
  flotilla taint member1 dedicated-`,
		Args: cobra.MinimumNArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			switch args[0] {
			case "clusters", "cluster":
				args = args[1:]
			case "nodes", "node", "no":
				return fmt.Errorf("flotilla taint changes clusters only; taint nodes in a member with kubectl")
			}
			if len(args) < 2 {
				return fmt.Errorf("give a cluster name and at least one taint, e.g. 'flotilla taint member1 dedicated=gpu:NoSchedule'")
			}
			add, remove, err := parseTaints(args[1:])
			if err != nil {
				return err
			}
			for _, a := range add {
				for _, r := range remove {
					if a.Key == r.Key {
						return fmt.Errorf("taint %s is both added and removed in one command", a.Key)
					}
				}
			}
			cl, err := cp.client()
			if err != nil {
				return err
			}
			ctx, cancel := context2(cmd, 30*time.Second)
			defer cancel()
			var result string
			err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
				c := &clusterv1alpha1.Cluster{}
				if err := cl.Get(ctx, client.ObjectKey{Name: args[0]}, c); err != nil {
					return clusterErr(args[0], err)
				}
				taints := c.Spec.Taints
				for _, t := range add {
					i := indexTaint(taints, t.Key, t.Effect)
					if t.Effect == corev1.TaintEffectNoExecute {
						// tolerationSeconds count from here, as with karmadactl.
						now := metav1.Now()
						t.TimeAdded = &now
					}
					switch {
					case i < 0:
						taints = append(taints, t)
					case taints[i].Value == t.Value && overwrite:
						// Nothing to change.
					case taints[i].Value == t.Value:
						return fmt.Errorf("cluster %s already has taint %s=%s:%s", args[0], t.Key, t.Value, t.Effect)
					case !overwrite:
						return fmt.Errorf("cluster %s already has taint %s=%s:%s; use --overwrite to change it", args[0], t.Key, taints[i].Value, t.Effect)
					default:
						taints[i] = t
					}
				}
				for _, t := range remove {
					n := len(taints)
					taints = deleteTaints(taints, t)
					if len(taints) == n {
						return fmt.Errorf("cluster %s has no taint %s", args[0], describeTaint(t))
					}
				}
				result = "tainted"
				if len(add) == 0 {
					result = "untainted"
				}
				c.Spec.Taints = taints
				return cl.Update(ctx, c)
			})
			if err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "cluster/%s %s\n", args[0], result)
			return nil
		},
	}
	cp.add(cmd)
	cmd.Flags().BoolVar(&overwrite, "overwrite", false, "replace the value of a taint the cluster already has with that key and effect")
	return cmd
}

// parseTaints reads kubectl's taint arguments: KEY[=VALUE]:EFFECT to add,
// KEY[:EFFECT]- to remove.
func parseTaints(args []string) (add, remove []corev1.Taint, err error) {
	for _, a := range args {
		if strings.HasSuffix(a, "-") {
			key, effect, _ := strings.Cut(strings.TrimSuffix(a, "-"), ":")
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				return nil, nil, fmt.Errorf("invalid taint %q: key %q: %s", a, key, strings.Join(errs, "; "))
			}
			if effect != "" {
				if err := checkEffect(a, effect); err != nil {
					return nil, nil, err
				}
			}
			remove = append(remove, corev1.Taint{Key: key, Effect: corev1.TaintEffect(effect)})
			continue
		}
		kv, effect, ok := strings.Cut(a, ":")
		if !ok {
			return nil, nil, fmt.Errorf("invalid taint %q: want KEY[=VALUE]:EFFECT, e.g. dedicated=gpu:NoSchedule", a)
		}
		if err := checkEffect(a, effect); err != nil {
			return nil, nil, err
		}
		key, value, _ := strings.Cut(kv, "=")
		if errs := validation.IsQualifiedName(key); len(errs) > 0 {
			return nil, nil, fmt.Errorf("invalid taint %q: key %q: %s", a, key, strings.Join(errs, "; "))
		}
		if errs := validation.IsValidLabelValue(value); len(errs) > 0 {
			return nil, nil, fmt.Errorf("invalid taint %q: value %q: %s", a, value, strings.Join(errs, "; "))
		}
		add = append(add, corev1.Taint{Key: key, Value: value, Effect: corev1.TaintEffect(effect)})
	}
	return add, remove, nil
}

func checkEffect(arg, effect string) error {
	switch corev1.TaintEffect(effect) {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
		return nil
	}
	return fmt.Errorf("invalid taint %q: effect %q is not NoSchedule, PreferNoSchedule or NoExecute", arg, effect)
}

func indexTaint(taints []corev1.Taint, key string, effect corev1.TaintEffect) int {
	for i, t := range taints {
		if t.Key == key && t.Effect == effect {
			return i
		}
	}
	return -1
}

// deleteTaints drops the taints with t's key (and t's effect, when set).
func deleteTaints(taints []corev1.Taint, t corev1.Taint) []corev1.Taint {
	var out []corev1.Taint
	for _, x := range taints {
		if x.Key == t.Key && (t.Effect == "" || x.Effect == t.Effect) {
			continue
		}
		out = append(out, x)
	}
	return out
}

func describeTaint(t corev1.Taint) string {
	if t.Effect == "" {
		return t.Key
	}
	return t.Key + ":" + string(t.Effect)
}

// updateTaints adds (or, with add false, removes) taints on cluster name;
// it reports whether anything changed.
func updateTaints(cmd *cobra.Command, cp controlPlaneFlags, name string, taints []corev1.Taint, add bool) (bool, error) {
	cl, err := cp.client()
	if err != nil {
		return false, err
	}
	ctx, cancel := context2(cmd, 30*time.Second)
	defer cancel()
	changed := false
	err = retry.RetryOnConflict(retry.DefaultRetry, func() error {
		c := &clusterv1alpha1.Cluster{}
		if err := cl.Get(ctx, client.ObjectKey{Name: name}, c); err != nil {
			return clusterErr(name, err)
		}
		changed = false
		for _, t := range taints {
			i := indexTaint(c.Spec.Taints, t.Key, t.Effect)
			if add && i < 0 {
				now := metav1.Now()
				t.TimeAdded = &now
				c.Spec.Taints = append(c.Spec.Taints, t)
				changed = true
			} else if !add && i >= 0 {
				c.Spec.Taints = append(c.Spec.Taints[:i], c.Spec.Taints[i+1:]...)
				changed = true
			}
		}
		if !changed {
			return nil
		}
		return cl.Update(ctx, c)
	})
	return changed, err
}

func clusterErr(name string, err error) error {
	if apierrors.IsNotFound(err) {
		return fmt.Errorf("cluster %q not found (kubectl get clusters lists them)", name)
	}
	return err
}

// exactArgs is cobra.ExactArgs(n) with an error that says what is missing.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return fmt.Errorf("%s takes %s; got %d arguments (see '%s --help')", cmd.CommandPath(), what, len(args), cmd.CommandPath())
		}
		return nil
	}
}

func context2(cmd *cobra.Command, d time.Duration) (context.Context, context.CancelFunc) {
	ctx := cmd.Context()
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithTimeout(ctx, d)
}

func newUnregisterCommand() *cobra.Command {
	return newRemoveClusterCommand(removeCluster{
		use:   "unregister CLUSTER_NAME",
		short: "Remove a Pull-mode cluster from the control plane",
		long: `Remove a Pull-mode cluster, as 'karmadactl unregister' does: the Cluster is
deleted, its agent removes the objects its Works put in the cluster and then
stops, and the agent's rights on the control plane go with the Cluster. With
--cluster-kubeconfig the agent's credentials (Secret
karmada-system/karmada-kubeconfig) and the service account it reported are
removed from the cluster too, so it can be registered again. Push-mode clusters
leave with 'flotilla unjoin'.

An agent that is gone for good cannot clean the cluster: --force releases the
Cluster once --wait runs out and lists what its Works put in the cluster,
which is then left there.`,
		example: `  flotilla unregister edge-1
  flotilla unregister edge-1 --cluster-kubeconfig ~/.kube/edge-1.config   # also clean the cluster
  flotilla unregister edge-1 --force --wait 30s   # the agent is gone: release it, list what is left`,
		kubeconfigHelp: "kubeconfig of the cluster, to remove the agent's credentials there (optional)",
		done:           "unregistered",
		pull:           true,
	})
}
