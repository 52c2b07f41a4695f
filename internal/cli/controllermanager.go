package cli

import (
	"context"
	"fmt"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/app/controllermanager"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/internal/controller/failover/descheduler"
	"github.com/flotilla-io/flotilla/internal/controller/failover/gracefuleviction"
	"github.com/flotilla-io/flotilla/internal/controller/member/cluster"
	"github.com/flotilla-io/flotilla/internal/controller/member/clusterprofile"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/federatedresourcequota"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/namespace"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/scheduling"
	"github.com/flotilla-io/flotilla/internal/controllerkit/election"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controllerkit/wirecodec"
	hpa "github.com/flotilla-io/flotilla/internal/core/hpa"
	"github.com/flotilla-io/flotilla/internal/localstack"
)

// managerFlags are the flags of `flotilla controller-manager` and
// `flotilla scheduler`. add registers the ones both take; addControllerFlags
// those only the controller manager has (Karmada's karmada-scheduler has no
// --controllers, --skipped-propagating-namespaces or
// --cluster-status-update-frequency either).
type managerFlags struct {
	kubeconfig, context string
	opts                controllermanager.Options
	logs                *logsapi.LoggingConfiguration
	purgeMode           string // --no-execute-taint-eviction-purge-mode, checked in run
}

// DefaultMetricsAddr is where Flotilla's components serve Prometheus
// metrics unless told otherwise: Karmada's --metrics-bind-address default.
const DefaultMetricsAddr = ":8080"

// add registers the shared flags; what names the component in --leader-elect's
// help, and healthAddr is the default probe address,
// Karmada's for the component (:10357 for karmada-controller-manager,
// :10351 for karmada-scheduler).
func (f *managerFlags) add(cmd *cobra.Command, what, healthAddr string) {
	fl := cmd.Flags()
	fl.StringVar(&f.kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: in-cluster config or $KUBECONFIG)")
	fl.StringVar(&f.context, "context", "", "kubeconfig context of the control plane (default: the current context)")
	f.opts.Election.AddFlags(fl, what)
	fl.StringVar(&f.opts.MetricsAddr, "metrics-bind-address", DefaultMetricsAddr, "address for Prometheus metrics on /metrics (Karmada's metric names); 0 disables")
	fl.StringVar(&f.opts.PprofAddr, "profiling-bind-address", "0", "address for Go's /debug/pprof endpoints, e.g. 127.0.0.1:6060; 0 disables")
	fl.StringVar(&f.opts.HealthAddr, "health-probe-bind-address", healthAddr, "address for /healthz and /readyz (ready once the informer caches have synced); 0 disables")
	f.logs = addLoggingFlags(fl)
	fl.BoolVar(&f.opts.EnableSchedulerEstimator, "enable-scheduler-estimator", false,
		"cap each member's estimated room by fitting replicas onto its real nodes (requests, node selectors, affinity, taints), from informers on the members' nodes and pods: Karmada's karmada-scheduler-estimator, in the process")
	fl.DurationVar(&f.opts.SchedulerEstimatorTimeout, "scheduler-estimator-timeout", scheduling.DefaultEstimatorTimeout,
		"how long the node-level estimator waits for a member's nodes and pods to be listed; a member not listed in time is estimated from its resource summary alone")
	// Karmada's --feature-gates, on component-base's feature gate.
	gates := features.New()
	gates.AddFlag(fl)
	f.opts.Features = gates
}

func (f *managerFlags) addControllerFlags(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringSliceVar(&f.opts.Controllers, "controllers", []string{"*"},
		"controllers to run: '*' for all but the ones off by default, 'name' to add, '-name' to remove; known: "+strings.Join(controllermanager.AllControllers, ", ")+
			"; off by default: "+strings.Join(controllermanager.DisabledByDefault, ", "))
	fl.StringSliceVar(&f.opts.SkippedPropagatingNamespaces, "skipped-propagating-namespaces", namespace.DefaultSkippedPatterns,
		"regular expressions of namespaces that are not synced to member clusters")
	fl.StringVar(&f.opts.ClusterProfileNamespace, "cluster-profile-namespace", clusterprofile.DefaultNamespace,
		"namespace of the multicluster.x-k8s.io ClusterProfiles the clusterProfile controller publishes, one per Cluster (sig-multicluster's Cluster Inventory API)")
	fl.DurationVar(&f.opts.ClusterStatusUpdateFrequency, "cluster-status-update-frequency", cluster.DefaultStatusUpdateFrequency,
		"how often each member cluster is probed for its Cluster status (readiness, API enablements, node and resource summaries)")
	fl.IntVar(&f.opts.ConcurrentClusterSyncs, "concurrent-cluster-syncs", cluster.DefaultConcurrentSyncs,
		"how many member clusters are probed at once; raise it with hundreds of members, so that each is probed every --cluster-status-update-frequency")
	fl.DurationVar(&f.opts.ClusterFailureThreshold, "cluster-failure-threshold", cluster.DefaultFailureThreshold,
		"how long a Ready member must keep failing its probes before its Ready condition turns False (and it is tainted cluster.karmada.io/not-ready:NoSchedule)")
	fl.DurationVar(&f.opts.ClusterSuccessThreshold, "cluster-success-threshold", cluster.DefaultSuccessThreshold,
		"how long a not-Ready member must keep passing its probes before its Ready condition turns True again")
	fl.BoolVar(&f.opts.EnableTaintManager, "enable-taint-manager", true,
		"run the taint manager, which evicts bindings from clusters with NoExecute taints they do not tolerate (with --feature-gates=Failover=true and --enable-no-execute-taint-eviction)")
	fl.BoolVar(&f.opts.EnableNoExecuteTaintEviction, "enable-no-execute-taint-eviction", false,
		"let the taint manager evict bindings from clusters with untolerated NoExecute taints (needs --feature-gates=Failover=true); off, NoExecute taints only keep new placements away")
	fl.Float64Var(&f.opts.ResourceEvictionRate, "resource-eviction-rate", 0.5,
		"how many bindings a second the taint manager evicts at most, so that a NoExecute taint on a busy cluster moves its workloads gradually; 0 stops evictions")
	fl.StringVar(&f.purgeMode, "no-execute-taint-eviction-purge-mode", string(policyv1alpha1.PurgeModeGracefully),
		"how the taint manager evicts a binding whose policy sets no failover.cluster: Gracefully (the old copy stays until the new one is healthy elsewhere) or Directly (removed at once, then rescheduled)")
	fl.DurationVar(&f.opts.GracefulEvictionTimeout, "graceful-eviction-timeout", gracefuleviction.DefaultTimeout,
		"how long an evicted cluster keeps its copy while the replacement elsewhere is not yet healthy (graceful eviction tasks without gracePeriodSeconds)")
	fl.DurationVar(&f.opts.CronFederatedHPAMissedRunWindow, "cronfederatedhpa-missed-run-window", cronfederatedhpa.DefaultMissedRunWindow,
		"a CronFederatedHPA run missed while the controller manager was down (restart, leader change) runs once at start-up if it is no older than this; 0 skips missed runs, as Karmada does")
	fl.DurationVar(&f.opts.FederatedResourceQuotaSyncPeriod, "federated-resource-quota-sync-period", federatedresourcequota.DefaultSyncPeriod,
		"how often, with --feature-gates=FederatedQuotaEnforcement=true, every FederatedResourceQuota's overallUsed is recomputed from its namespace's bindings")
	fl.DurationVar(&f.opts.DeschedulingInterval, "descheduling-interval", descheduler.DefaultInterval,
		"how often the descheduler (--controllers=*,descheduler) looks for replicas members cannot run")
	fl.DurationVar(&f.opts.UnschedulableThreshold, "unschedulable-threshold", descheduler.DefaultUnschedulableThreshold,
		"how long a member's scheduler must have found no node for a pod before the descheduler takes its replica back")
	fl.StringVar(&f.opts.MCSLoadBalancerPool, "mcs-lb-pool", "",
		"addresses the built-in 'local' load balancer provider gives MultiClusterServices of type LoadBalancer: a CIDR (10.255.0.0/24) or a range (10.255.0.10-10.255.0.50); empty configures no provider (needs --feature-gates=MultiClusterService=true)")
	fl.StringVar(&f.opts.MultiClusterProvider, "multicluster-provider", "",
		"the provider that serves MultiClusterIngresses: 'local' (one HTTP listener per MultiClusterIngress, on an address of --mci-lb-pool) or empty for none (status.serviceLocations and trafficBlockClusters are written either way)")
	fl.StringVar(&f.opts.MCILoadBalancerPool, "mci-lb-pool", localstack.MCILoadBalancerPool,
		"with --multicluster-provider=local: the addresses of the MultiClusterIngress listeners, one each (a CIDR or a first-last range; loopback addresses serve this machine only)")
	fl.IntVar(&f.opts.MCILoadBalancerPort, "mci-lb-port", localstack.MCILoadBalancerPort,
		"with --multicluster-provider=local: the port every MultiClusterIngress listener listens on; an address whose port is taken is skipped")
	fl.StringVar(&f.opts.ProviderIngressClass, "provider-ingress-class", "",
		"the spec.controller of the IngressClass this provider serves: a MultiClusterIngress is served when the IngressClass it names (or the default one) has it; required with --multicluster-provider")
	f.opts.FederatedHPA = hpa.DefaultConfig()
	f.opts.FederatedHPA.AddFlags(fl)
	f.opts.FastPaths.AddFlags(fl)
}

func (f *managerFlags) run(cmd *cobra.Command) error {
	if err := f.opts.Election.Validate(); err != nil {
		return usageError{err}
	}
	// The taint manager's flags are the controller manager's only
	// (addControllerFlags): the scheduler has none to check.
	if cmd.Flags().Lookup("no-execute-taint-eviction-purge-mode") != nil {
		switch mode := policyv1alpha1.PurgeMode(f.purgeMode); mode {
		case policyv1alpha1.PurgeModeGracefully, policyv1alpha1.PurgeModeDirectly:
			f.opts.NoExecuteTaintEvictionPurgeMode = mode
		default:
			return usageError{fmt.Errorf("--no-execute-taint-eviction-purge-mode must be Gracefully or Directly, not %q", f.purgeMode)}
		}
	}
	if f.opts.ResourceEvictionRate < 0 {
		return usageError{fmt.Errorf("--resource-eviction-rate must be 0 or more evictions a second, not %g", f.opts.ResourceEvictionRate)}
	}
	if err := applyLogging(f.logs); err != nil {
		return err
	}
	if err := wirecodec.SetClientGates(f.opts.Features.Enabled(features.ClientsAllowCBOR)); err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	cfg, err := localstack.RESTConfig(f.kubeconfig, f.context)
	if err != nil {
		return err
	}
	f.opts.Config = cfg
	ctx = klog.NewContext(ctx, klog.Background())
	return controllermanager.Run(ctx, f.opts)
}

func newControllerManagerCommand() *cobra.Command {
	f := &managerFlags{opts: controllermanager.Options{Election: election.Config{Lease: election.ControllerManagerLease}, FastPaths: fastpath.All()}}
	cmd := &cobra.Command{
		Use:   "controller-manager",
		Short: "Run Flotilla's controllers against a control plane",
		Long: `Run Flotilla's controllers (Karmada's karmada-controller-manager, with the
scheduler in-process unless --controllers excludes it) against any Kubernetes API
server that has the Karmada CRDs installed. 'flotilla up' runs one for you.`,
		Example: `  flotilla controller-manager --kubeconfig ~/.flotilla/karmada.config

  # Everything except the scheduler, which runs on its own
  flotilla controller-manager --kubeconfig ~/.flotilla/karmada.config --controllers '*,-scheduler'
  flotilla scheduler --kubeconfig ~/.flotilla/karmada.config

  # Two replicas on one host (one leads, the other stands by): distinct ports
  flotilla controller-manager --kubeconfig cp.config --metrics-bind-address :8082 --health-probe-bind-address :10357
  flotilla controller-manager --kubeconfig cp.config --metrics-bind-address :8083 --health-probe-bind-address :10358

  # Karmada's policy preemption (feature gate PropagationPolicyPreemption, off by default)
  flotilla controller-manager --kubeconfig ~/.flotilla/karmada.config --feature-gates=PropagationPolicyPreemption=true

  # MultiClusterService (gate MultiClusterService, off by default), with the local load balancer
  flotilla controller-manager --kubeconfig ~/.flotilla/karmada.config --feature-gates=MultiClusterService=true \
    --mcs-lb-pool=10.255.0.0/24

  # MultiClusterIngress through the local provider, for IngressClasses whose controller is flotilla.io/local
  flotilla controller-manager --kubeconfig ~/.flotilla/karmada.config \
    --multicluster-provider=local --provider-ingress-class=flotilla.io/local

  # The plain level-based path: every propagation shortcut off
  flotilla controller-manager --kubeconfig ~/.flotilla/karmada.config \
    --fast-path-preschedule=false --fast-path-born-scheduled=false --fast-path-handoff=false \
    --fast-path-read-your-writes=false --fast-path-status-gate=false`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	f.add(cmd, "controller manager", ":10357")
	f.addControllerFlags(cmd)
	return cmd
}

func newSchedulerCommand() *cobra.Command {
	f := &managerFlags{opts: controllermanager.Options{Election: election.Config{Lease: election.SchedulerLease}, FastPaths: fastpath.All()}}
	f.opts.Controllers = []string{"scheduler"}
	cmd := &cobra.Command{
		Use:   "scheduler",
		Short: "Run only Flotilla's scheduler against a control plane",
		Long: `Run Flotilla's scheduler on its own (Karmada's karmada-scheduler): it assigns
every ResourceBinding and ClusterResourceBinding with schedulerName
default-scheduler to member clusters. Pair it with
'flotilla controller-manager --controllers *,-scheduler'.`,
		Example: `  flotilla scheduler --kubeconfig ~/.flotilla/karmada.config`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return f.run(cmd) },
	}
	f.add(cmd, "scheduler", ":10351")
	return cmd
}
