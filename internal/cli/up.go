package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/sync/errgroup"
	networkingv1 "k8s.io/api/networking/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/localstack"
	"github.com/flotilla-io/flotilla/internal/member/join"
)

// UpOptions are the flags of `flotilla up`.
type UpOptions struct {
	DataDir    string
	Members    int
	ConfigFile string
	Nodes      localstack.NodeDefaults
	Bare       bool
	Light      bool
	// PullMembers are the members run in Pull mode (--pull-members).
	PullMembers []string
	// nodeFlagsSet: a node-sizing flag was given (they conflict with Bare).
	nodeFlagsSet bool
	Detach       bool
	DryRun       bool
	Timeout      time.Duration
	Apply        []string
	CMArgs       []string
	CMReplicas   int
	// AdmissionClaim keeps the control plane's FlotillaPolicyClaim plugin on.
	AdmissionClaim bool
	// FeatureGates is passed to every Flotilla component the stack starts.
	FeatureGates string

	membersSet bool
	config     *localstack.Config
	manifests  []*unstructured.Unstructured
}

func defaultDataDir() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ".flotilla"
	}
	return filepath.Join(home, ".flotilla")
}

func newUpCommand() *cobra.Command {
	o := &UpOptions{}
	cmd := &cobra.Command{
		Use:   "up",
		Short: "Start a local control plane and simulated member clusters",
		Long: `Start a local Flotilla stack on this machine, with no Docker needed:

  - a control plane: kube-apiserver on embedded etcd and a kube-controller-manager
    that runs only the controllers a Karmada control plane keeps, so a Deployment
    applied there is a resource template and never makes pods;
  - member clusters member1..N: each a kube-apiserver on its own etcd, a
    kube-controller-manager, a kube-scheduler, and kwok simulating its nodes and
    the pod lifecycle, so Deployments really roll out.

Everything listens on 127.0.0.1 with TLS from a CA made for this stack, and RBAC
on. up prints a line per component as it becomes ready and returns (with
--detach) or keeps running in the foreground once every API server is healthy and
every node is Ready. Data, logs and kubeconfigs live in --data-dir; running up
again on the same data dir keeps every object.`,
		Example: `  # Foreground, 3 members; Ctrl-C stops everything
  flotilla up

  # In the background, 2 members, in a scratch directory; stop it with down
  flotilla up --members 2 --data-dir /tmp/fl --detach
  flotilla down --data-dir /tmp/fl

  # Bigger simulated nodes, or per-member sizes and topology from a file
  flotilla up --nodes-per-member 5 --node-cpu 16 --node-memory 64Gi
  flotilla up --config stack.yaml

  # Start and apply the nginx example (a Deployment, its PropagationPolicy and an OverridePolicy)
  flotilla up --apply examples/nginx

  # Turn on Karmada's policy preemption in the controller manager
  flotilla up --feature-gates=PropagationPolicyPreemption=true

  # member3 in Pull mode: registered with a token, with a 'flotilla agent' beside it
  flotilla up --pull-members member3

  # 20 light members (API servers only: objects propagate but nothing runs)
  flotilla up --members 20 --bare-members

  # Show what would run, with ports, flags and paths, without starting anything
  flotilla up --dry-run`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			o.membersSet = cmd.Flags().Changed("members")
			for _, f := range []string{"nodes-per-member", "node-cpu", "node-memory", "node-pods"} {
				o.nodeFlagsSet = o.nodeFlagsSet || cmd.Flags().Changed(f)
			}
			if err := o.Complete(); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return err
			}
			return o.Run(cmd.OutOrStdout())
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.DataDir, "data-dir", defaultDataDir(), "directory for etcd data, certificates, kubeconfigs and logs")
	f.IntVar(&o.Members, "members", localstack.DefaultMembers, "number of simulated member clusters (member1..N)")
	f.StringVar(&o.ConfigFile, "config", "", "YAML file listing members with their node count, capacity and topology (see docs/getting-started.md, Sizing members)")
	f.IntVar(&o.Nodes.Nodes, "nodes-per-member", localstack.DefaultNodesPerMember, "simulated nodes in each member")
	f.StringVar(&o.Nodes.CPU, "node-cpu", localstack.DefaultNodeCPU, "CPU capacity of each simulated node")
	f.StringVar(&o.Nodes.Memory, "node-memory", localstack.DefaultNodeMemory, "memory capacity of each simulated node")
	f.StringVar(&o.Nodes.Pods, "node-pods", localstack.DefaultNodePods, "pod capacity of each simulated node")
	f.StringSliceVar(&o.PullMembers, "pull-members", nil, "members to run in Pull mode: registered with a bootstrap token, with a 'flotilla agent' beside each (e.g. member3)")
	f.BoolVar(&o.Bare, "bare-members", false, "members run only an API server: no nodes, scheduler or workload controllers, so nothing rolls out (for scale tests)")
	f.BoolVar(&o.Light, "light-members", false, "bare members hosted together for large fleets: one process and one etcd serve every member's API server, each on its own port (see docs/user-guide/large-fleets.md)")
	f.BoolVar(&o.Detach, "detach", false, "run in the background and return once ready; stop with 'flotilla down'")
	f.BoolVar(&o.DryRun, "dry-run", false, "print the plan (components, ports, flags, paths) and start nothing")
	f.DurationVar(&o.Timeout, "timeout", 5*time.Minute, "give up if the stack is not ready within this time")
	f.BoolVar(&o.AdmissionClaim, "fast-path-admission-claim", true, "let the control plane's FlotillaPolicyClaim admission plugin claim new templates as they are created (else the detector claims them; see docs/architecture.md)")
	f.StringVar(&o.FeatureGates, "feature-gates", "", "feature gates for every Flotilla component started (the controller manager), e.g. PropagationPolicyPreemption=true; known: "+strings.Join(features.New().KnownFeatures(), ", "))
	f.IntVar(&o.CMReplicas, "controller-manager-replicas", 1, "how many flotilla controller-manager processes run; with more than one they elect a leader (a Lease in karmada-system) and the others stand by")
	f.StringArrayVar(&o.CMArgs, "controller-manager-arg", nil, "extra flag for flotilla controller-manager, e.g. --controller-manager-arg=--profiling-bind-address=127.0.0.1:6060 (repeatable)")
	f.StringSliceVar(&o.Apply, "apply", nil, "once ready, apply these manifest files or directories to the control plane (like kubectl apply --server-side)")
	return cmd
}

// Complete builds the stack config from the flags and the config file.
func (o *UpOptions) Complete() error {
	if o.ConfigFile != "" {
		c, err := localstack.LoadConfigFile(o.ConfigFile)
		if err != nil {
			return err
		}
		o.config = c
	} else {
		o.config = &localstack.Config{}
		for i := 1; i <= o.Members; i++ {
			o.config.Members = append(o.config.Members, localstack.DefaultMember(i, o.Nodes))
		}
	}
	abs, err := filepath.Abs(o.DataDir)
	if err != nil {
		return err
	}
	o.config.DataDir = abs
	o.config.ControllerManagerArgs = o.CMArgs
	if o.CMReplicas < 1 || o.CMReplicas > 5 {
		return usageError{fmt.Errorf("--controller-manager-replicas must be between 1 and 5, got %d", o.CMReplicas)}
	}
	if o.ConfigFile == "" || o.config.ControllerManagerReplicas == 0 || o.CMReplicas != 1 {
		o.config.ControllerManagerReplicas = o.CMReplicas
	}
	o.config.NoAdmissionClaim = !o.AdmissionClaim
	o.config.FeatureGates = o.FeatureGates
	for _, name := range o.PullMembers {
		found := false
		for i := range o.config.Members {
			if o.config.Members[i].Name == name {
				o.config.Members[i].Pull, found = true, true
			}
		}
		if !found {
			return fmt.Errorf("--pull-members: the stack has no member %q", name)
		}
	}
	if o.Bare || o.Light {
		for i := range o.config.Members {
			m := &o.config.Members[i]
			m.Bare, m.Light = true, o.Light
			if o.ConfigFile == "" { // generated members: drop the node defaults
				m.Nodes, m.CPU, m.Memory, m.Pods = 0, "", "", ""
			}
		}
	}
	o.config.Complete(o.Nodes)
	return nil
}

// Validate checks flags and config.
func (o *UpOptions) Validate() error {
	if o.ConfigFile != "" && o.membersSet {
		return errors.New("--members and --config both set the members: list them in the config file only")
	}
	if (o.Bare || o.Light) && o.nodeFlagsSet {
		return errors.New("--bare-members and --light-members run members without nodes, so --nodes-per-member and --node-cpu/-memory/-pods do not apply")
	}
	if o.Detach && o.DryRun {
		return errors.New("--dry-run starts nothing, so --detach does not apply")
	}
	if err := features.Check(o.FeatureGates); err != nil {
		return fmt.Errorf("--feature-gates: %w", err)
	}
	for _, path := range o.Apply {
		objs, err := readManifests(path)
		if err != nil {
			return err
		}
		o.manifests = append(o.manifests, objs...)
	}
	return o.config.Validate()
}

// Run starts the stack (or prints the plan).
func (o *UpOptions) Run(out io.Writer) error {
	if o.DryRun {
		ports, err := localstack.LoadRecordedPorts(o.config.DataDir)
		if err != nil {
			return err
		}
		ports.AsRecorded = true
		plan, err := localstack.BuildPlan(o.config, ports)
		if err != nil {
			return err
		}
		plan.WriteDryRun(out)
		switch {
		case localstack.Running(o.config.DataDir) != 0:
			fmt.Fprintf(out, "\nA stack is running from %s; the ports above are the ones it uses.\n", o.config.DataDir)
		case len(ports.Keys()) > 0 && !ports.AllRecorded():
			fmt.Fprintf(out, "\nPorts not yet recorded in %s are examples: up picks free ones when it starts and records them.\n", o.config.DataDir)
		}
		return nil
	}
	if pid := localstack.Running(o.config.DataDir); pid != 0 {
		return fmt.Errorf("a stack is already running from %s (flotilla up, pid %d); stop it with '%s down --data-dir %s'",
			o.config.DataDir, pid, self(), o.config.DataDir)
	}
	if o.Detach {
		return o.runDetached(out)
	}
	return o.runForeground(out)
}

func (o *UpOptions) runForeground(out io.Writer) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dataDir := o.config.DataDir
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return fmt.Errorf("create data dir: %w", err)
	}
	if err := localstack.WriteState(dataDir, localstack.State{PID: os.Getpid(), Phase: localstack.PhaseStarting}); err != nil {
		return fmt.Errorf("record state in %s: %w", dataDir, err)
	}
	stack, err := localstack.Up(ctx, localstack.UpOptions{
		Config:  o.config,
		Exe:     exe,
		Out:     out,
		Timeout: o.Timeout,
		Steps:   PostStartSteps,
	})
	if err != nil {
		_ = localstack.WriteState(dataDir, localstack.State{PID: os.Getpid(), Phase: localstack.PhaseFailed, Message: err.Error()})
		return fmt.Errorf("flotilla up failed: %w\nFix the cause above and run 'flotilla up' again; data in %s is kept", err, dataDir)
	}
	if len(o.manifests) > 0 {
		cfg, err := localstack.RESTConfig(stack.Plan.KarmadaKubeconfig(), localstack.ControlPlaneContext)
		if err == nil {
			applyCtx, cancel := context.WithTimeout(ctx, time.Minute)
			err = applyManifests(applyCtx, cfg, o.manifests, out)
			cancel()
		}
		if err != nil {
			stack.Stop()
			_ = localstack.WriteState(dataDir, localstack.State{PID: os.Getpid(), Phase: localstack.PhaseFailed, Message: err.Error()})
			return fmt.Errorf("the stack started, but --apply failed: %w", err)
		}
	}
	printReady(out, stack, o.manifests)
	_ = localstack.WriteState(dataDir, localstack.State{PID: os.Getpid(), Phase: localstack.PhaseReady})
	stack.Supervise(ctx)
	fmt.Fprintln(out, "stopping the stack...")
	stack.Stop()
	_ = localstack.WriteState(dataDir, localstack.State{PID: os.Getpid(), Phase: localstack.PhaseStopped})
	fmt.Fprintln(out, "stopped")
	return nil
}

// PostStartSteps run, in order, once every cluster is ready: the control
// plane gets the Karmada CRDs, the members join it (push mode), the metrics
// adapter and Flotilla's controller manager start, and up waits until every
// Cluster is Ready.
var PostStartSteps = []localstack.Step{
	{Name: "control plane installed: Karmada CRDs Established, namespaces, component RBAC, Pull-mode registration (kube-public/cluster-info, bootstrap RBAC)", Run: installControlPlane},
	{Name: "member clusters joined (push mode; pull-mode members register later), with the mcs-api CRDs", Run: joinMembers},
	// The adapter first, so that the FederatedHPA controller's first syncs
	// find the control plane's metrics APIs served.
	{Run: startAggregatedServers},
	{Run: func(ctx context.Context, s *localstack.Stack) error {
		if err := s.StartComponent(ctx, s.Plan.ControllerManager); err != nil {
			return err
		}
		for _, c := range s.Plan.StandbyControllerManagers {
			if err := s.StartComponent(ctx, c); err != nil {
				return err
			}
		}
		return nil
	}},
	// Pull members need the controller manager to approve their agents'
	// certificates.
	{Run: registerPullMembers},
	{Name: "every Cluster is Ready", Run: waitClustersReady},
	{Run: func(ctx context.Context, s *localstack.Stack) error {
		if err := s.StartComponent(ctx, s.Plan.Dashboard); err != nil {
			return err
		}
		s.Progress("%s: dashboard serving at %s", localstack.ControlPlaneName, s.Plan.DashboardURL())
		return nil
	}},
}

// installControlPlane installs the stack's control plane with the code of
// `flotilla install`: no webhooks (the stack's API server has the admission
// plugins built in), and Pull-mode registration prepared with the control
// plane's URL and the stack's CA.
func installControlPlane(ctx context.Context, s *localstack.Stack) error {
	cfg, err := localstack.RESTConfig(s.Plan.KarmadaKubeconfig(), localstack.ControlPlaneContext)
	if err != nil {
		return err
	}
	ca, err := os.ReadFile(s.Plan.PKI.CACert)
	if err != nil {
		return fmt.Errorf("read the stack's CA: %w", err)
	}
	if err := controlplane.Install(ctx, cfg, controlplane.InstallOptions{Server: s.Plan.ControlPlane().Server(), CAPEM: ca}, nil); err != nil {
		return err
	}
	return ensureLocalIngressClass(ctx, s.Plan)
}

// ensureLocalIngressClass makes the IngressClass of the stack's
// MultiClusterIngress provider, the default one unless another class is
// already the default (a class the user made is left alone).
func ensureLocalIngressClass(ctx context.Context, p *localstack.Plan) error {
	cp, err := controlPlaneClient(p)
	if err != nil {
		return err
	}
	list := &networkingv1.IngressClassList{}
	if err := cp.List(ctx, list); err != nil {
		return fmt.Errorf("list IngressClasses: %w", err)
	}
	isDefault := "true"
	for _, ic := range list.Items {
		if ic.Name == localstack.LocalIngressClass {
			return nil
		}
		if ic.Annotations[networkingv1.AnnotationIsDefaultIngressClass] == "true" {
			isDefault = "false"
		}
	}
	ic := &networkingv1.IngressClass{
		ObjectMeta: metav1.ObjectMeta{Name: localstack.LocalIngressClass,
			Annotations: map[string]string{networkingv1.AnnotationIsDefaultIngressClass: isDefault}},
		Spec: networkingv1.IngressClassSpec{Controller: localstack.LocalIngressController},
	}
	if err := cp.Create(ctx, ic); err != nil && !apierrors.IsAlreadyExists(err) {
		return fmt.Errorf("create IngressClass %s: %w", ic.Name, err)
	}
	return nil
}

// startAggregatedServers starts the metrics adapter, when the stack has one,
// and the search server, and registers them on the control plane as their
// APIServices.
func startAggregatedServers(ctx context.Context, s *localstack.Stack) error {
	logs := []string{s.Plan.Search.LogFile}
	if s.Plan.MetricsAdapter.Kind != "" {
		if err := s.StartComponent(ctx, s.Plan.MetricsAdapter); err != nil {
			return err
		}
		logs = append(logs, s.Plan.MetricsAdapter.LogFile)
	}
	if err := s.StartComponent(ctx, s.Plan.Search); err != nil {
		return err
	}
	cfg, err := localstack.RESTConfig(s.Plan.KarmadaKubeconfig(), localstack.ControlPlaneContext)
	if err != nil {
		return err
	}
	if err := localstack.RegisterAggregatedAPIs(ctx, cfg, s.Plan.ControlPlane()); err != nil {
		return fmt.Errorf("register the aggregated APIs on the control plane: %w (see %s)", err, strings.Join(logs, ", "))
	}
	if s.Plan.MetricsAdapter.Kind != "" {
		s.Progress("%s: metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io Available (metrics adapter)", localstack.ControlPlaneName)
	}
	s.Progress("%s: search.karmada.io Available (search server)", localstack.ControlPlaneName)
	return nil
}

func controlPlaneClient(p *localstack.Plan) (client.Client, error) {
	cfg, err := localstack.RESTConfig(p.KarmadaKubeconfig(), localstack.ControlPlaneContext)
	if err != nil {
		return nil, err
	}
	return client.New(cfg, client.Options{Scheme: controlplane.NewScheme()})
}

func joinMembers(ctx context.Context, s *localstack.Stack) error {
	cp, err := controlPlaneClient(s.Plan)
	if err != nil {
		return err
	}
	// Members join side by side: one at a time, a hundred light members
	// took most of a minute.
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(joinParallel)
	for _, m := range s.Plan.Members() {
		if m.Member.Pull {
			continue // registered by its agent once the controller manager runs
		}
		g.Go(func() error { return joinMember(gctx, s, cp, m) })
	}
	if err := g.Wait(); err != nil {
		return err
	}
	return unjoinRemovedMembers(ctx, cp, s)
}

// joinParallel bounds the members joining at once.
const joinParallel = 8

// joinMember installs the mcs-api CRDs in member m and joins it in Push
// mode, unless the user made it a member under another name.
func joinMember(ctx context.Context, s *localstack.Stack, cp client.Client, m *localstack.ClusterPlan) error {
	cfg, err := localstack.RESTConfig(s.Plan.MembersKubeconfig(), m.Name)
	if err != nil {
		return err
	}
	if err := controlplane.InstallMemberCRDs(ctx, cfg); err != nil {
		return fmt.Errorf("install the mcs-api CRDs in %s: %w", m.Name, err)
	}
	err = join.Join(ctx, cp, join.Options{ClusterName: m.Name, Member: cfg,
		Provider: m.Member.Provider, Region: m.Member.Region, Zone: m.Member.Zone,
		Labels: map[string]string{localStackLabel: "true"}})
	var held *join.JoinedAsError
	if errors.As(err, &held) {
		// The user made it a member under another name (the Pull-mode
		// guide registers member3 as edge-1): the stack starts without
		// taking it back, and says how to.
		s.Progress("%s is a member as %s (%s mode) and stays so: %s", m.Name, held.As, held.Mode, heldHint(s, m.Name, held))
		return nil
	}
	return err
}

// heldHint says how to run, or take back, a stack member that is a Cluster
// under another name.
func heldHint(s *localstack.Stack, member string, held *join.JoinedAsError) string {
	if held.Mode == clusterv1alpha1.Pull {
		return fmt.Sprintf("run its agent with '%s agent --cluster-name %s --kubeconfig %s --context %s', or give it back to the stack with '%s unregister %s --force' and '%s up'",
			self(), held.As, s.Plan.MembersKubeconfig(), member, self(), held.As, self())
	}
	return fmt.Sprintf("give it back to the stack with '%s unjoin %s' and '%s up'", self(), held.As, self())
}

// heldElsewhere reports whether the stack's member is a Cluster under
// another name (see joinMembers), so that up does not wait for it.
func heldElsewhere(ctx context.Context, cp client.Client, s *localstack.Stack, member string) bool {
	cfg, err := localstack.RESTConfig(s.Plan.MembersKubeconfig(), member)
	if err != nil {
		return false
	}
	id, err := join.ClusterID(ctx, cfg)
	if err != nil {
		return false
	}
	list := &clusterv1alpha1.ClusterList{}
	return cp.List(ctx, list) == nil && join.HeldAs(list.Items, member, id) != nil
}

// localStackLabel marks the Clusters that `flotilla up` joined itself.
const localStackLabel = "flotilla.io/local-stack"

// unjoinRemovedMembers deletes the Clusters an earlier `up` on this data dir
// joined that the stack no longer has (started again with fewer members),
// so they do not linger NotReady.
func unjoinRemovedMembers(ctx context.Context, cp client.Client, s *localstack.Stack) error {
	want := map[string]bool{}
	for _, m := range s.Plan.Members() {
		want[m.Name] = true
	}
	list := &clusterv1alpha1.ClusterList{}
	if err := cp.List(ctx, list, client.MatchingLabels{localStackLabel: "true"}); err != nil {
		return err
	}
	for i := range list.Items {
		c := &list.Items[i]
		if want[c.Name] || !c.DeletionTimestamp.IsZero() {
			continue
		}
		if err := cp.Delete(ctx, c); client.IgnoreNotFound(err) != nil {
			return fmt.Errorf("unjoin cluster %s, no longer in the stack: %w", c.Name, err)
		}
		s.Progress("unjoined cluster %s: it is no longer in the stack", c.Name)
	}
	return nil
}

func waitClustersReady(ctx context.Context, s *localstack.Stack) error {
	cp, err := controlPlaneClient(s.Plan)
	if err != nil {
		return err
	}
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	// elsewhere remembers the members found held under another name: asked once each, not
	// on every tick (it reads the member's cluster ID).
	elsewhere := map[string]bool{}
	for {
		var notReady []string
		for _, m := range s.Plan.Members() {
			if elsewhere[m.Name] {
				continue // a member under another name, not the stack's to wait for
			}
			c := &clusterv1alpha1.Cluster{}
			err := cp.Get(ctx, client.ObjectKey{Name: m.Name}, c)
			if apierrors.IsNotFound(err) && !m.Member.Pull && heldElsewhere(ctx, cp, s, m.Name) {
				elsewhere[m.Name] = true
				continue
			}
			if err != nil || !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
				notReady = append(notReady, m.Name)
			}
		}
		if len(notReady) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("clusters not Ready: %s (see %s): %w", strings.Join(notReady, ", "), s.Plan.ControllerManager.LogFile, ctx.Err())
		case <-tick.C:
		}
	}
}

func printReady(out io.Writer, s *localstack.Stack, applied []*unstructured.Unstructured) {
	p := s.Plan
	kind := "member cluster(s)"
	bare := countBare(p)
	allBare := bare == len(p.Members())
	if allBare && !slices.ContainsFunc(p.Members(), func(m *localstack.ClusterPlan) bool { return !m.Light() }) {
		kind = "light member cluster(s) (API servers only, hosted in one process: nothing runs in them)"
	} else if allBare {
		kind = "bare member cluster(s) (API servers only: nothing runs in them)"
	} else if bare > 0 {
		kind = fmt.Sprintf("member cluster(s), %d of them bare (API servers only)", bare)
	}
	fmt.Fprintf(out, "\nFlotilla is ready in %.1fs: a control plane and %d %s.\n", s.Elapsed().Seconds(), len(p.Members()), kind)
	fmt.Fprintf(out, "Logs are in %s.\n", p.LogDir())
	// Prometheus metrics, Karmada's names (README, "Metrics, health and logs").
	for _, comp := range flotillaComponents(p) {
		fmt.Fprintf(out, "metrics: %s %s\n", comp.Name, comp.MetricsURL)
	}
	fmt.Fprintf(out, "Feature gates: %s (the local stack turns on MultiClusterService, alpha in Karmada; --feature-gates=MultiClusterService=false turns it off).\n",
		s.Plan.FeatureGates)
	fmt.Fprintf(out, "MultiClusterServices of type LoadBalancer get addresses from %s (the local provider: nothing forwards to them).\n", localstack.MCSLoadBalancerPool)
	fmt.Fprintf(out, "MultiClusterIngresses of IngressClass %s (the default) get an HTTP listener on an address of %s, port %d.\n\n",
		localstack.LocalIngressClass, localstack.MCILoadBalancerPool, localstack.MCILoadBalancerPort)
	if p.MetricsAdapter.Kind != "" {
		fmt.Fprintf(out, "Metrics: the members serve simulated usage (kwok); the control plane answers from all of them (kubectl top pods -A).\n\n")
	}
	fmt.Fprintf(out, "Use the control plane (context %s):\n", localstack.ControlPlaneContext)
	fmt.Fprintf(out, "  export KUBECONFIG=%s\n  kubectl get ns\n", p.KarmadaKubeconfig())
	fmt.Fprintf(out, "Open the dashboard at %s (the stack's CA, %s, signs its certificate) and sign in with the token\n  %s dashboard token --kubeconfig %s\nprints.\n",
		p.DashboardURL(), p.PKI.CACert, self(), p.KarmadaKubeconfig())
	fmt.Fprintf(out, "Use a member cluster (contexts")
	for _, m := range p.Members() {
		fmt.Fprintf(out, " %s", m.Name)
	}
	what := "nodes"
	if allBare {
		what = "ns" // bare and light members have no nodes
	}
	fmt.Fprintf(out, "):\n  kubectl --kubeconfig %s --context %s get %s\n", p.MembersKubeconfig(), p.Members()[0].Name, what)
	for _, u := range applied {
		if u.GetKind() == "Deployment" {
			fmt.Fprintf(out, "See the applied Deployment %s propagate and its status aggregate:\n", u.GetName())
			fmt.Fprintf(out, "  kubectl --kubeconfig %s get deploy,rb -n %s\n", p.KarmadaKubeconfig(), u.GetNamespace())
			fmt.Fprintf(out, "  kubectl --kubeconfig %s --context %s get deploy %s -n %s\n", p.MembersKubeconfig(), p.Members()[0].Name, u.GetName(), u.GetNamespace())
			break
		}
	}
}

// runDetached re-runs `flotilla up` without --detach in a new session, its
// output going to <data-dir>/logs/up.log, and follows that log until the
// stack is ready or the child fails.
func (o *UpOptions) runDetached(out io.Writer) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	dataDir := o.config.DataDir
	logDir := filepath.Join(dataDir, "logs")
	if err := os.MkdirAll(logDir, 0o700); err != nil {
		return err
	}
	logPath := filepath.Join(logDir, "up.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		return err
	}
	defer logFile.Close()
	var args []string
	for _, a := range os.Args[1:] {
		if a == "--detach" || strings.HasPrefix(a, "--detach=") {
			continue
		}
		args = append(args, a)
	}
	child := exec.Command(exe, args...)
	child.Stdout, child.Stderr = logFile, logFile
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := child.Start(); err != nil {
		return fmt.Errorf("start flotilla up in the background: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()

	follow, err := os.Open(logPath)
	if err != nil {
		return err
	}
	defer follow.Close()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		_, _ = io.Copy(out, follow)
		st, _ := localstack.ReadState(dataDir)
		if st.PID == child.Process.Pid && st.Phase == localstack.PhaseReady {
			_, _ = io.Copy(out, follow)
			fmt.Fprintf(out, "Running in the background (pid %d, log %s). Stop it with:\n  %s down --data-dir %s\n", st.PID, logPath, self(), dataDir)
			return nil
		}
		select {
		case err := <-exited:
			_, _ = io.Copy(out, follow)
			return fmt.Errorf("flotilla up stopped before the stack was ready (%w); see the lines above and %s", err, logPath)
		case <-tick.C:
		}
	}
}

// flotillaComponents are the stack's Flotilla components that serve
// metrics: the controller manager and each Pull-mode member's agent.
func flotillaComponents(p *localstack.Plan) []localstack.Component {
	comps := append([]localstack.Component{p.ControllerManager}, p.StandbyControllerManagers...)
	for _, m := range p.Members() {
		if m.Agent.MetricsURL != "" {
			comps = append(comps, m.Agent)
		}
	}
	return comps
}

func countBare(p *localstack.Plan) int {
	n := 0
	for _, m := range p.Members() {
		if m.Member != nil && m.Member.Bare {
			n++
		}
	}
	return n
}
