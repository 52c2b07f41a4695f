// Package controllermanager assembles Flotilla's controllers into one
// process, as karmada-controller-manager (with karmada-scheduler in-process
// by default): cluster status, detector, scheduler, binding, execution,
// status aggregation and namespace sync.
package controllermanager

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	discoveryv1 "k8s.io/api/discovery/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/selection"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	resourceclient "k8s.io/metrics/pkg/client/clientset/versioned/typed/metrics/v1beta1"
	custommetrics "k8s.io/metrics/pkg/client/custom_metrics"
	externalmetrics "k8s.io/metrics/pkg/client/external_metrics"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/deploymentreplicassyncer"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/federatedhpa"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/hpascaletargetmarker"
	"github.com/flotilla-io/flotilla/internal/controller/failover/applicationfailover"
	"github.com/flotilla-io/flotilla/internal/controller/failover/clustertaintpolicy"
	"github.com/flotilla-io/flotilla/internal/controller/failover/descheduler"
	"github.com/flotilla-io/flotilla/internal/controller/failover/gracefuleviction"
	"github.com/flotilla-io/flotilla/internal/controller/failover/taintmanager"
	"github.com/flotilla-io/flotilla/internal/controller/failover/workloadrebalancer"
	"github.com/flotilla-io/flotilla/internal/controller/member/agentcsrapproving"
	"github.com/flotilla-io/flotilla/internal/controller/member/cluster"
	"github.com/flotilla-io/flotilla/internal/controller/member/clusterprofile"
	"github.com/flotilla-io/flotilla/internal/controller/member/remedy"
	"github.com/flotilla-io/flotilla/internal/controller/member/unifiedauth"
	"github.com/flotilla-io/flotilla/internal/controller/networking/endpointslice"
	"github.com/flotilla-io/flotilla/internal/controller/networking/loadbalancer"
	"github.com/flotilla-io/flotilla/internal/controller/networking/multiclusteringress"
	"github.com/flotilla-io/flotilla/internal/controller/networking/multiclusterservice"
	"github.com/flotilla-io/flotilla/internal/controller/networking/serviceexport"
	"github.com/flotilla-io/flotilla/internal/controller/networking/serviceimport"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/bindingcontroller"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/dependencies"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/detector"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/execution"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/federatedresourcequota"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/namespace"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/rollout"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/scheduling"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/status"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/validation"
	"github.com/flotilla-io/flotilla/internal/controllerkit/election"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controllerkit/health"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/controllerkit/wirecodec"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	hpa "github.com/flotilla-io/flotilla/internal/core/hpa"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// AllControllers lists the controller names Options.Controllers accepts.
var AllControllers = []string{"cluster", "detector", "scheduler", "binding", "execution", "status", rollout.ControllerName, "namespace",
	cronfederatedhpa.ControllerName, "validation", dependencies.ControllerName,
	serviceexport.ControllerName, endpointslice.ControllerName, serviceimport.ControllerName,
	multiclusterservice.ControllerName, serviceexport.CollectControllerName, multiclusterservice.DispatchControllerName,
	federatedhpa.ControllerName, clustertaintpolicy.ControllerName, applicationfailover.ControllerName, workloadrebalancer.ControllerName, gracefuleviction.ControllerName,
	agentcsrapproving.ControllerName, hpascaletargetmarker.ControllerName, deploymentreplicassyncer.ControllerName,
	federatedresourcequota.SyncControllerName, federatedresourcequota.StatusControllerName, federatedresourcequota.EnforcementControllerName,
	descheduler.ControllerName, unifiedauth.ControllerName, clusterprofile.ControllerName, remedy.ControllerName, multiclusteringress.ControllerName}

// DisabledByDefault are the controllers "*" leaves out, as Karmada's
// controller manager does: they run only when named
// (--controllers=*,agentcsrapproving).
var DisabledByDefault = []string{agentcsrapproving.ControllerName, hpascaletargetmarker.ControllerName, deploymentreplicassyncer.ControllerName,
	descheduler.ControllerName}

// Options configure the controller manager.
type Options struct {
	// Config reaches the control plane.
	Config *rest.Config
	// Controllers to run: "*" for all, names to add, "-name" to remove,
	// as kube-controller-manager's --controllers.
	Controllers []string
	// Clock is the one clock every controller tells the time with: cron
	// runs, cluster health thresholds, taint times, toleration and
	// graceful-eviction timeouts. nil is the real clock; tests pass a
	// k8s.io/utils/clock/testing.FakeClock and step it.
	Clock clock.WithDelayedExecution
	// Election makes replicas elect one active leader (Karmada's
	// --leader-elect flags; its Lease is karmada-controller-manager, or
	// karmada-scheduler for the scheduler run apart). The zero value runs
	// without an election.
	Election election.Config
	// MetricsAddr serves Prometheus metrics on /metrics (Karmada's metric
	// names, package metrics, with controller-runtime's); "0" disables, ""
	// is controller-runtime's default, :8080.
	MetricsAddr string
	// HealthAddr serves /healthz and /readyz (ready once the informer
	// caches have synced, package health); "0" or "" disables.
	HealthAddr string
	// PprofAddr serves Go's /debug/pprof; "" or "0" disables.
	PprofAddr string
	// SkippedPropagatingNamespaces are regular expressions of namespaces
	// namespace sync leaves alone.
	SkippedPropagatingNamespaces []string
	// ClusterProfileNamespace holds the ClusterProfiles the clusterProfile
	// controller publishes (--cluster-profile-namespace); "" means
	// clusterprofile.DefaultNamespace.
	ClusterProfileNamespace string
	// ClusterStatusUpdateFrequency is how often each member is probed for
	// its Cluster status (Karmada's --cluster-status-update-frequency);
	// 0 means 10s.
	ClusterStatusUpdateFrequency time.Duration
	// ConcurrentClusterSyncs is how many Clusters are probed at once
	// (Karmada's --concurrent-cluster-syncs); 0 means 5.
	ConcurrentClusterSyncs int
	// ClusterFailureThreshold and ClusterSuccessThreshold are how long a
	// member must keep failing (passing) its probes before its Ready
	// condition changes (--cluster-failure-threshold,
	// --cluster-success-threshold; 30s each, as in Karmada).
	ClusterFailureThreshold, ClusterSuccessThreshold time.Duration
	// EnableTaintManager runs the taint manager with the cluster controller
	// (--enable-taint-manager, true as in Karmada); it evicts only with
	// the Failover gate and EnableNoExecuteTaintEviction.
	EnableTaintManager bool
	// EnableSchedulerEstimator turns on the scheduler's node-level estimator
	// (--enable-scheduler-estimator, false as in Karmada), which waits
	// SchedulerEstimatorTimeout at most for a member's nodes
	// (--scheduler-estimator-timeout; 0 is Karmada's 3s).
	EnableSchedulerEstimator  bool
	SchedulerEstimatorTimeout time.Duration
	// FederatedResourceQuotaSyncPeriod is how often, with
	// FederatedQuotaEnforcement, every quota's overallUsed is recomputed
	// (--federated-resource-quota-sync-period; 0 is Karmada's 5m).
	FederatedResourceQuotaSyncPeriod time.Duration
	// DeschedulingInterval and UnschedulableThreshold are the descheduler's
	// --descheduling-interval and --unschedulable-threshold (0: Karmada's
	// 2m and 5m).
	DeschedulingInterval, UnschedulableThreshold time.Duration
	// EnableNoExecuteTaintEviction lets the taint manager evict bindings
	// from clusters with untolerated NoExecute taints
	// (--enable-no-execute-taint-eviction, false as in Karmada).
	EnableNoExecuteTaintEviction bool
	// ResourceEvictionRate is how many bindings a second the taint manager
	// evicts at most (--resource-eviction-rate, 0.5 as in Karmada; 0
	// stops evictions). Negative is refused by the command.
	ResourceEvictionRate float64
	// NoExecuteTaintEvictionPurgeMode is the purge mode of an eviction
	// whose policy sets no failover.cluster
	// (--no-execute-taint-eviction-purge-mode: Gracefully, as in Karmada,
	// or Directly); empty means Gracefully.
	NoExecuteTaintEvictionPurgeMode policyv1alpha1.PurgeMode
	// GracefulEvictionTimeout is how long a graceful eviction task waits
	// for a healthy replacement (--graceful-eviction-timeout, 10m).
	GracefulEvictionTimeout time.Duration
	// FastPaths turns the propagation path's shortcuts on or off; the
	// command's default is fastpath.All().
	FastPaths fastpath.Options
	// CronFederatedHPAMissedRunWindow is how old a CronFederatedHPA run
	// missed while the controller was down may be and still be made up at
	// start-up (--cronfederatedhpa-missed-run-window); 0 makes up none.
	CronFederatedHPAMissedRunWindow time.Duration
	// FederatedHPA is the FederatedHPA controller's tuning (the
	// --horizontal-pod-autoscaler-* flags); zero fields take the defaults.
	FederatedHPA hpa.Config
	// MCSLoadBalancerPool is the address pool of the local load balancer
	// provider of MultiClusterServices of type LoadBalancer (--mcs-lb-pool:
	// a CIDR or a first-last range); "" configures no provider.
	MCSLoadBalancerPool string
	// MultiClusterProvider is the provider of MultiClusterIngresses
	// (--multicluster-provider, Karmada's multicluster-cloud-provider
	// flag): "local" (loadbalancer.LocalIngress) or "" for none.
	MultiClusterProvider string
	// MCILoadBalancerPool and MCILoadBalancerPort are where the local
	// provider's listeners listen (--mci-lb-pool, a CIDR or a first-last
	// range; --mci-lb-port): one address of the pool per
	// MultiClusterIngress, all on the port.
	MCILoadBalancerPool string
	MCILoadBalancerPort int
	// ProviderIngressClass is the spec.controller of the IngressClass the
	// provider serves (--provider-ingress-class); required with a provider.
	ProviderIngressClass string
	// Features are the feature gates (package features), set by
	// --feature-gates; nil means every gate at its default.
	Features featuregate.FeatureGate
	// SkipNameValidation lets Run be called again in the same process once
	// an earlier Run has returned (the integration tests run the
	// controllers once per fast-path setting): controller-runtime otherwise
	// refuses a controller whose name an earlier manager registered.
	SkipNameValidation bool
}

// Enabled resolves Options.Controllers to the set of controllers to run:
// "*" turns on every controller but those DisabledByDefault, "name" turns
// one on, "-name" off; later entries win. Errors name an unknown
// controller.
func Enabled(spec []string) (map[string]bool, error) {
	on := map[string]bool{}
	for _, s := range spec {
		name := strings.TrimPrefix(s, "-")
		switch {
		case s == "*":
			for _, c := range AllControllers {
				if _, set := on[c]; !set && !slices.Contains(DisabledByDefault, c) {
					on[c] = true
				}
			}
		case !slices.Contains(AllControllers, name):
			return nil, fmt.Errorf("unknown controller %q; known: %s", name, strings.Join(AllControllers, ", "))
		default:
			on[name] = !strings.HasPrefix(s, "-")
		}
	}
	return on, nil
}

// Run builds the manager and runs it until ctx ends. Errors: an unknown
// controller name, a skip pattern that is not a regular expression, or a
// manager that cannot be built or started.
func Run(ctx context.Context, o Options) error {
	mgr, shared, err := newManager(ctx, o)
	if err != nil {
		return err
	}
	log := klog.FromContext(ctx)
	log.Info("Starting controller manager", "controllers", strings.Join(shared.enabledNames(), ","), "fastPaths", o.FastPaths.String(),
		"preemption", features.Or(o.Features).Enabled(features.PropagationPolicyPreemption), "propagateDeps", features.Or(o.Features).Enabled(features.PropagateDeps),
		"multiClusterService", features.Or(o.Features).Enabled(features.MultiClusterService))
	counted := health.Counting(mgr)
	if shared.detectorRuns() {
		shared.detector.FirstListsReleased = counted.Queues().FirstListsReleased
	}
	for _, b := range builders {
		if !shared.on[b.name] {
			continue
		}
		setups, err := b.build(shared)
		if err != nil {
			return fmt.Errorf("set up the %s controller: %w", b.name, err)
		}
		for _, s := range setups {
			if err := s.SetupWithManager(counted); err != nil {
				return fmt.Errorf("set up the %s controller (%T): %w", b.name, s, err)
			}
		}
	}
	// After a restart, re-checking what the first lists found waits until
	// every controller runs, so that their start is not slowed by it.
	counted.Queues().HoldFirstListsUntilRunning(counted.Controllers(), queue.FirstListsHoldMax)
	if o.HealthAddr != "0" && o.HealthAddr != "" {
		if err := health.Add(counted, o.Election.Elect); err != nil {
			return err
		}
	}
	// Karmada's metric sets, as its components serve them: the scheduler's
	// where it runs, the controller manager's where any other controller
	// does.
	if shared.on["scheduler"] {
		metrics.RegisterScheduler()
	}
	if slices.ContainsFunc(shared.enabledNames(), func(n string) bool { return n != "scheduler" }) {
		metrics.RegisterControllerManager()
	}
	if shared.detectorRuns() {
		// The detector's lists start before the manager does, beside the
		// manager's cache's instead of after it (controller-runtime calls
		// Warmup again, as a warm-up runnable; it runs once).
		go func() {
			if err := shared.detector.Warmup(ctx); err != nil {
				log.Error(err, "The detector's warm-up failed; the manager will report it as it starts")
			}
		}()
	}
	return mgr.Start(ctx)
}

// setup is a controller that registers itself with the manager.
type setup interface{ SetupWithManager(ctrl.Manager) error }

// builder makes the controllers of one --controllers name.
type builder struct {
	name  string
	build func(s *shared) ([]setup, error)
}

// builders lists every controller in AllControllers order. Each builds its
// reconcilers from what the controllers share (the caches, the gate, the
// event recorder) and from the fast paths that are on.
var builders = []builder{
	{"cluster", func(s *shared) ([]setup, error) {
		out := []setup{&cluster.Reconciler{Client: s.client, Members: s.members, Clock: s.opts.Clock, StatusUpdateFrequency: s.opts.ClusterStatusUpdateFrequency, Workers: s.opts.ConcurrentClusterSyncs, Gate: s.opts.Features,
			FailureThreshold: s.opts.ClusterFailureThreshold, SuccessThreshold: s.opts.ClusterSuccessThreshold,
			Events: &eventrecord.Recorder{Events: s.recorders.For(cluster.ControllerName), Scheme: s.mgr.GetScheme()}}}
		if s.taintManagerEvicts() {
			pace := taintmanager.NewPace(s.opts.ResourceEvictionRate) // one rate for both kinds
			for _, kind := range binding.Kinds {
				tm := &taintmanager.Reconciler{Client: s.client, Kind: kind, Clock: s.opts.Clock,
					Graceful: features.Or(s.opts.Features).Enabled(features.GracefulEviction), Recorder: s.recorders.For("taint-manager"), Gate: s.gate,
					Pace: pace, DefaultPurgeMode: s.opts.NoExecuteTaintEvictionPurgeMode}
				if s.opts.FastPaths.Preschedule && s.on["scheduler"] {
					tm.Preschedule = scheduling.Prescheduler{TaintManagerEvicts: true, Capacity: s.capacity(), Quotas: s.quotas()}.Preschedule
				}
				out = append(out, tm)
			}
		}
		return out, nil
	}},
	{"detector", func(*shared) ([]setup, error) {
		return nil, nil // added with the shared template cache, in newManager
	}},
	{"scheduler", func(s *shared) ([]setup, error) {
		if s.opts.FastPaths.Preschedule {
			s.detector.Preschedule = scheduling.Prescheduler{TaintManagerEvicts: s.taintManagerEvicts(), Capacity: s.capacity(), Quotas: s.quotas()}.Preschedule
		}
		var out []setup
		for _, kind := range binding.Kinds {
			out = append(out, &scheduling.Reconciler{Client: s.client, Kind: kind, Events: s.events("karmada-scheduler"), Gate: s.gate, BornScheduled: s.opts.FastPaths.BornScheduled,
				TaintManagerEvicts: s.taintManagerEvicts(), Capacity: s.capacity(), Quotas: s.quotas(), Clock: s.opts.Clock})
		}
		return out, nil
	}},
	{"binding", func(s *shared) ([]setup, error) {
		var out []setup
		for _, kind := range binding.Kinds {
			r := &bindingcontroller.Reconciler{Client: s.client, Templates: s.detector, Interpreter: s.interp, Kind: kind,
				InjectPreservedState: features.Or(s.opts.Features).Enabled(features.StatefulFailoverInjection), Gate: s.gate,
				Events: s.events(byKind(kind, "binding-controller", "cluster-resource-binding-controller"))}
			if s.opts.FastPaths.Handoff && s.on["execution"] {
				// New Works are applied by the binding controller's own
				// goroutine, a watch delivery sooner.
				r.Executor = s.execution
			}
			out = append(out, r)
		}
		return out, nil
	}},
	{"execution", func(s *shared) ([]setup, error) {
		return []setup{s.execution}, nil
	}},
	{"status", func(s *shared) ([]setup, error) {
		var out []setup
		for _, kind := range binding.Kinds {
			out = append(out, &status.Reconciler{Client: s.client, Dynamic: s.dynamic, Templates: s.detector, Interpreter: s.interp, Resources: s.detector.ResourceFor,
				Kind: kind, Gate: s.gate, Board: s.board, BornScheduled: s.opts.FastPaths.BornScheduled, Clock: s.opts.Clock,
				Events: s.events(byKind(kind, "resource-binding-status-controller", "cluster-resource-binding-status-controller"))})
		}
		return out, nil
	}},
	{rollout.ControllerName, func(s *shared) ([]setup, error) {
		var out []setup
		for _, kind := range binding.Kinds {
			out = append(out, &rollout.Reconciler{Client: s.client, Kind: kind, Clock: s.opts.Clock, Events: s.events("rollout-controller")})
		}
		return out, nil
	}},
	{"namespace", func(s *shared) ([]setup, error) {
		var skipped []*regexp.Regexp
		for _, p := range s.opts.SkippedPropagatingNamespaces {
			re, err := regexp.Compile("^(" + p + ")$")
			if err != nil {
				return nil, fmt.Errorf("--skipped-propagating-namespaces: %q is not a regular expression: %w", p, err)
			}
			skipped = append(skipped, re)
		}
		return []setup{&namespace.Reconciler{Client: s.client, SkippedPatterns: skipped,
			Events: &eventrecord.Recorder{Events: s.recorders.For("namespace-sync-controller"), Scheme: s.mgr.GetScheme()}}}, nil
	}},
	{cronfederatedhpa.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&cronfederatedhpa.Reconciler{Client: s.client, Dynamic: s.dynamic, Clock: s.opts.Clock, Mapper: s.mgr.GetRESTMapper(),
			Recorder: s.recorders.For("cronfederatedhpa-controller"), MissedRunWindow: s.opts.CronFederatedHPAMissedRunWindow, Gate: s.gate}}, nil
	}},
	{"validation", func(s *shared) ([]setup, error) {
		var out []setup
		for _, v := range validation.Kinds(s.client, s.recorders.For("flotilla-validation")) {
			out = append(out, v)
		}
		return out, nil
	}},
	{dependencies.ControllerName, func(s *shared) ([]setup, error) {
		if !features.Or(s.opts.Features).Enabled(features.PropagateDeps) {
			return nil, nil // Karmada's gate: off, spec.propagateDeps is ignored
		}
		return []setup{&dependencies.Reconciler{Client: s.client, Templates: s.detector, Interpreter: s.interp, Gate: s.gate,
			Events: s.events(dependencies.ControllerName)}}, nil
	}},
	{serviceexport.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{s.collector()}, nil
	}},
	{endpointslice.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&endpointslice.Reconciler{Client: s.client}}, nil
	}},
	{serviceimport.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&serviceimport.Reconciler{Client: s.client, Events: &eventrecord.Recorder{
			Events: s.recorders.For("service-import-controller"), Scheme: s.mgr.GetScheme()}}}, nil
	}},
	{multiclusterservice.ControllerName, func(s *shared) ([]setup, error) {
		if !features.Or(s.opts.Features).Enabled(features.MultiClusterService) {
			return nil, nil // Karmada's gate: off, MultiClusterServices are only served
		}
		r := &multiclusterservice.Reconciler{Client: s.client, Templates: s.detector, Recorder: s.recorders.For("multiclusterservice-controller"),
			Events: &eventrecord.Recorder{Events: s.recorders.For("multiclusterservice-controller"), Scheme: s.mgr.GetScheme()}}
		if s.opts.MCSLoadBalancerPool != "" {
			pool, err := loadbalancer.ParsePool(s.opts.MCSLoadBalancerPool)
			if err != nil {
				return nil, fmt.Errorf("--mcs-lb-pool: %w", err)
			}
			r.LoadBalancer = &loadbalancer.Local{Client: s.client, Pool: pool}
		}
		return []setup{r}, nil
	}},
	{serviceexport.CollectControllerName, func(s *shared) ([]setup, error) {
		if s.on[serviceexport.ControllerName] {
			return nil, nil // one collector does both (see shared.collector)
		}
		return []setup{s.collector()}, nil
	}},
	{federatedhpa.ControllerName, func(s *shared) ([]setup, error) {
		cfg := s.opts.FederatedHPA
		if cfg == (hpa.Config{}) {
			cfg = hpa.DefaultConfig()
		}
		if err := cfg.Validate(); err != nil {
			return nil, err
		}
		pulls, err := newMetricsClient(s.mgr, cfg.SyncPeriod)
		if err != nil {
			return nil, err
		}
		return []setup{&federatedhpa.Reconciler{Client: s.client, Dynamic: s.dynamic, Mapper: s.mgr.GetRESTMapper(), Members: s.members,
			Recommender: hpa.NewRecommender(federatedhpa.TimedPulls(pulls), cfg, s.opts.Clock), SyncPeriod: cfg.SyncPeriod, Clock: s.opts.Clock,
			Recorder: s.recorders.For("federatedHPA-controller")}}, nil
	}},
	{clustertaintpolicy.ControllerName, func(s *shared) ([]setup, error) {
		// Karmada runs it only with the Failover gate: its taints evict
		// through the taint manager, which the gate governs too.
		if !features.Or(s.opts.Features).Enabled(features.Failover) {
			return nil, nil
		}
		// Its events are never held back (no Busy), so the Recorder needs
		// no Scheme.
		return []setup{&clustertaintpolicy.Reconciler{Client: s.client, Clock: s.opts.Clock,
			Events: &eventrecord.Recorder{Events: s.recorders.For(clustertaintpolicy.EventSource)}}}, nil
	}},
	{applicationfailover.ControllerName, func(s *shared) ([]setup, error) {
		// Not gated, as in Karmada: the Failover gate governs cluster
		// failover only; failover.application acts with the default gates.
		var out []setup
		for _, kind := range binding.Kinds {
			out = append(out, &applicationfailover.Reconciler{Client: s.client, Kind: kind, Clock: s.opts.Clock, Recorder: s.recorders.For("application-failover")})
		}
		return out, nil
	}},
	{federatedresourcequota.SyncControllerName, func(s *shared) ([]setup, error) {
		return []setup{&federatedresourcequota.SyncReconciler{Client: s.client, Events: s.events("federated-resource-quota-sync-controller")}}, nil
	}},
	{federatedresourcequota.StatusControllerName, func(s *shared) ([]setup, error) {
		return []setup{&federatedresourcequota.StatusReconciler{Client: s.client, Enforcement: s.quotas() != nil,
			Events: s.events("federated-resource-quota-status-controller")}}, nil
	}},
	{federatedresourcequota.EnforcementControllerName, func(s *shared) ([]setup, error) {
		if s.quotas() == nil {
			return nil, nil // FederatedQuotaEnforcement off
		}
		return []setup{&federatedresourcequota.EnforcementReconciler{Client: s.client, SyncPeriod: s.opts.FederatedResourceQuotaSyncPeriod,
			Events: s.events("federated-resource-quota-enforcement-controller")}}, nil
	}},
	{descheduler.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&descheduler.Reconciler{Client: s.client, Members: s.members, Interval: s.opts.DeschedulingInterval,
			Threshold: s.opts.UnschedulableThreshold, Clock: s.opts.Clock, Events: s.events("karmada-descheduler")}}, nil
	}},
	{workloadrebalancer.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&workloadrebalancer.Reconciler{Client: s.client, Clock: s.opts.Clock}}, nil
	}},
	{gracefuleviction.ControllerName, func(s *shared) ([]setup, error) {
		var out []setup
		for _, kind := range binding.Kinds {
			out = append(out, &gracefuleviction.Reconciler{Client: s.client, Kind: kind, Clock: s.opts.Clock, Timeout: s.opts.GracefulEvictionTimeout})
		}
		return out, nil
	}},
	{multiclusteringress.ControllerName, func(s *shared) ([]setup, error) {
		r := &multiclusteringress.Reconciler{Client: s.client, IngressClass: s.opts.ProviderIngressClass, Events: &eventrecord.Recorder{
			Events: s.recorders.For(multiclusteringress.EventSource), Scheme: s.mgr.GetScheme()}}
		if s.opts.MultiClusterProvider == "" {
			if s.opts.ProviderIngressClass != "" {
				return nil, errors.New("--provider-ingress-class names the IngressClass a provider serves: set --multicluster-provider too (the built-in one is 'local')")
			}
			return []setup{r}, nil
		}
		if s.opts.ProviderIngressClass == "" {
			return nil, errors.New("--multicluster-provider needs --provider-ingress-class: the spec.controller of the IngressClass whose MultiClusterIngresses the provider serves")
		}
		switch s.opts.MultiClusterProvider {
		case loadbalancer.LocalName:
			pool, err := loadbalancer.ParsePool(s.opts.MCILoadBalancerPool)
			if err != nil {
				return nil, fmt.Errorf("--mci-lb-pool: %w", err)
			}
			if s.opts.MCILoadBalancerPort < 1 || s.opts.MCILoadBalancerPort > 65535 {
				return nil, fmt.Errorf("--mci-lb-port %d: want a port from 1 to 65535", s.opts.MCILoadBalancerPort)
			}
			local := &loadbalancer.LocalIngress{Client: s.client, Pool: pool, Port: s.opts.MCILoadBalancerPort}
			if err := s.mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { <-ctx.Done(); local.Close(); return nil })); err != nil {
				return nil, err
			}
			r.LoadBalancer = local
		default:
			return nil, fmt.Errorf("--multicluster-provider %q: the built-in provider is %q; a cloud's provider implements loadbalancer.IngressProvider", s.opts.MultiClusterProvider, loadbalancer.LocalName)
		}
		return []setup{r, &multiclusteringress.Exports{Client: s.client, IngressClass: s.opts.ProviderIngressClass}}, nil
	}},
	{multiclusterservice.DispatchControllerName, func(s *shared) ([]setup, error) {
		if !features.Or(s.opts.Features).Enabled(features.MultiClusterService) {
			return nil, nil
		}
		return []setup{&multiclusterservice.Dispatcher{Client: s.client, Events: &eventrecord.Recorder{
			Events: s.recorders.For("endpointslice-dispatch-controller"), Scheme: s.mgr.GetScheme()}}}, nil
	}},
	{hpascaletargetmarker.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&hpascaletargetmarker.Reconciler{Client: s.client, Dynamic: s.dynamic, Mapper: s.mgr.GetRESTMapper()}}, nil
	}},
	{deploymentreplicassyncer.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&deploymentreplicassyncer.Reconciler{Client: s.client}}, nil
	}},
	{clusterprofile.ControllerName, func(s *shared) ([]setup, error) {
		ns := s.opts.ClusterProfileNamespace
		if ns == "" {
			ns = clusterprofile.DefaultNamespace
		}
		cfg := s.mgr.GetConfig()
		ca := cfg.CAData
		if len(ca) == 0 && cfg.CAFile != "" {
			var err error
			if ca, err = os.ReadFile(cfg.CAFile); err != nil {
				return nil, fmt.Errorf("read the control plane's CA for the ClusterProfiles: %w", err)
			}
		}
		return []setup{&clusterprofile.Reconciler{Client: s.client, Namespace: ns, Server: cfg.Host, CAData: ca, Clock: s.opts.Clock}}, nil
	}},
	{remedy.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&remedy.Reconciler{Client: s.client}}, nil
	}},
	{unifiedauth.ControllerName, func(s *shared) ([]setup, error) {
		return []setup{&unifiedauth.Reconciler{Client: s.client, Events: s.events(unifiedauth.EventSource)}}, nil
	}},
	{agentcsrapproving.ControllerName, func(s *shared) ([]setup, error) {
		kube, err := kubernetes.NewForConfig(s.mgr.GetConfig())
		if err != nil {
			return nil, fmt.Errorf("create Kubernetes client: %w", err)
		}
		return []setup{&agentcsrapproving.Reconciler{Client: s.client, Kube: kube, Recorder: s.recorders.For(agentcsrapproving.ControllerName), Clock: s.opts.Clock}}, nil
	}},
}

// newMetricsClient is the Kubernetes HPA's metrics client on the control
// plane's metrics.k8s.io, custom.metrics.k8s.io and external.metrics.k8s.io
// (served by the metrics adapter from the members), with pods' resource
// metrics keyed per cluster (federatedhpa.PerClusterPodMetrics). The custom metrics API
// versions the control plane serves are looked up again every refresh.
func newMetricsClient(mgr ctrl.Manager, refresh time.Duration) (hpa.MetricsClient, error) {
	cfg := mgr.GetConfig()
	resources, err := resourceclient.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("metrics.k8s.io client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("discovery client: %w", err)
	}
	versions := custommetrics.NewAvailableAPIsGetter(disc)
	external, err := externalmetrics.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("external.metrics.k8s.io client: %w", err)
	}
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		custommetrics.PeriodicallyInvalidate(versions, refresh, ctx.Done())
		return nil
	})); err != nil {
		return nil, err
	}
	viaREST := metricsclient.NewRESTMetricsClient(resources, custommetrics.NewForConfig(cfg, mgr.GetRESTMapper(), versions), external)
	return federatedhpa.PerClusterPodMetrics(viaREST, resources), nil
}

// collector is the one EndpointSlice collector of the serviceExport and
// endpointsliceCollect controllers: it collects for ServiceExports when the
// first is on, and for MultiClusterServices when the second is (and their
// gate).
func (s *shared) collector() setup {
	return &serviceexport.Reconciler{Client: s.client, Members: s.members, Exports: s.on[serviceexport.ControllerName],
		MultiClusterServices: s.on[serviceexport.CollectControllerName] && features.Or(s.opts.Features).Enabled(features.MultiClusterService)}
}

// shared is what the controllers of one manager share.
type shared struct {
	opts           Options
	on             map[string]bool
	mgr            ctrl.Manager
	client         client.Client
	dynamic        dynamic.Interface
	members        *registry.Registry
	estimates      *scheduling.Capacity // capacity(), made on first use
	quotaAdmission *scheduling.Quotas   // quotas(), made on first use
	detector       *detector.Detector
	execution      *execution.Reconciler
	// gate is nil when the status-gate fast path is off (a nil Gate parks
	// nothing).
	gate *statusgate.Gate
	// board holds the Work status reports the gate defers, for status
	// aggregation to read before they are written (nil with the gate).
	board *statusgate.Board
	// interp is the resource interpreter every controller asks.
	interp *interpreter.Interpreter
	// recorders give each controller its event recorder.
	recorders *eventrecord.Sink
}

// taintManagerEvicts reports whether the taint manager evicts bindings from
// NoExecute-tainted clusters: the Failover gate, --enable-taint-manager and
// --enable-no-execute-taint-eviction, with the cluster controller on.
// capacity is what the scheduler's estimates draw on, one for the
// process: the scheduler of both binding kinds and the Preschedule fast
// paths share its overcommit assumptions.
func (s *shared) capacity() *scheduling.Capacity {
	if s.estimates == nil {
		gate := features.Or(s.opts.Features)
		s.estimates = &scheduling.Capacity{
			IgnoreModels:         !gate.Enabled(features.CustomizedClusterResourceModeling),
			Overcommit:           gate.Enabled(features.SchedulingOvercommitProtection),
			MultiplePodTemplates: gate.Enabled(features.MultiplePodTemplatesScheduling),
			Timeout:              s.opts.SchedulerEstimatorTimeout,
			Clock:                s.opts.Clock,
		}
		if s.opts.EnableSchedulerEstimator {
			s.estimates.Members = s.members
		}
	}
	return s.estimates
}

// quotas is the scheduler's FederatedResourceQuota admission, one for the
// process; nil with FederatedQuotaEnforcement off.
func (s *shared) quotas() *scheduling.Quotas {
	if !features.Or(s.opts.Features).Enabled(features.FederatedQuotaEnforcement) {
		return nil
	}
	if s.quotaAdmission == nil {
		s.quotaAdmission = &scheduling.Quotas{Clock: s.opts.Clock}
	}
	return s.quotaAdmission
}

func (s *shared) taintManagerEvicts() bool {
	return s.on["cluster"] && s.opts.EnableTaintManager && s.opts.EnableNoExecuteTaintEviction &&
		features.Or(s.opts.Features).Enabled(features.Failover)
}

// enabledNames lists the controllers that run, in AllControllers order.
func (s *shared) enabledNames() []string {
	var names []string
	for _, n := range AllControllers {
		if s.on[n] {
			names = append(names, n)
		}
	}
	return names
}

// slicesRead selects the control-plane EndpointSlices the controllers read.
var slicesRead = func() labels.Selector {
	r, err := labels.NewRequirement(mcs.SliceManagedByLabel, selection.In, []string{mcs.ImportedSliceManager, loadbalancer.BackendsManager})
	if err != nil {
		panic(err) // constant input
	}
	return labels.NewSelector().Add(*r)
}()

// newManager builds the controller-runtime manager and what the controllers
// share.
func newManager(ctx context.Context, o Options) (ctrl.Manager, *shared, error) {
	on, err := Enabled(o.Controllers)
	if err != nil {
		return nil, nil, err
	}
	ctrl.SetLogger(klog.NewKlogr())
	cfg := rest.CopyConfig(o.Config)
	// Flotilla writes bindings, Works and status for every template; the
	// client-go default of 5 QPS would throttle propagation to a crawl.
	cfg.QPS, cfg.Burst = 1000, 2000
	scheme := controlplane.NewScheme()
	httpClient, err := rest.HTTPClientFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create HTTP client: %w", err)
	}
	mapper, err := apiutil.NewDynamicRESTMapper(cfg, httpClient)
	if err != nil {
		return nil, nil, fmt.Errorf("create REST mapper: %w", err)
	}
	// Flotilla's own kinds are read in CBOR where the API server serves it.
	newInformer := wirecodec.NewInformerFunc(cfg, httpClient, scheme, mapper, controlplane.KarmadaGroups(scheme)...)
	mo := ctrl.Options{
		Scheme:                 scheme,
		MapperProvider:         func(*rest.Config, *http.Client) (meta.RESTMapper, error) { return mapper, nil },
		Metrics:                metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress: o.HealthAddr,
		PprofBindAddress:       o.PprofAddr,
		Controller:             config.Controller{SkipNameValidation: &o.SkipNameValidation},
		Cache: cache.Options{
			// managedFields are never read by the controllers and are a
			// large share of every cached Work and binding.
			DefaultTransform: cache.TransformStripManagedFields(),
			NewInformer:      newInformer,
			ByObject: map[client.Object]cache.ByObject{
				// Only member credentials are read; do not cache every Secret.
				&corev1.Secret{}: {Namespaces: map[string]cache.Config{"karmada-cluster": {}}},
				// Only the slices imported from members (endpointSlice
				// controller) and a local load balancer's backends are read.
				&discoveryv1.EndpointSlice{}: {Label: slicesRead},
			}},
	}
	o.Election.Apply(&mo)
	mgr, err := ctrl.NewManager(cfg, mo)
	if err != nil {
		return nil, nil, fmt.Errorf("create controller manager: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create dynamic client: %w", err)
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("create discovery client: %w", err)
	}
	if err := binding.IndexWorksByBinding(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, nil, fmt.Errorf("index Works by binding: %w", err)
	}
	if err := binding.IndexBindingsByRequirer(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, nil, fmt.Errorf("index bindings by requirer: %w", err)
	}
	if err := mcs.IndexWorks(ctx, mgr.GetFieldIndexer()); err != nil {
		return nil, nil, fmt.Errorf("index Works by MultiClusterService: %w", err)
	}
	recorders, err := eventrecord.NewSink(cfg, scheme)
	if err != nil {
		return nil, nil, fmt.Errorf("create the event broadcaster: %w", err)
	}
	if err := mgr.Add(recorders); err != nil {
		return nil, nil, fmt.Errorf("add the event broadcaster: %w", err)
	}
	c := mgr.GetClient()
	s := &shared{opts: o, on: on, mgr: mgr, client: c, dynamic: dyn, members: &registry.Registry{Reader: c}, recorders: recorders}
	if o.FastPaths.StatusGate {
		// Propagation first: status reports wait while templates are being
		// propagated (see statusgate.Gate).
		s.gate = statusgate.NewGate(statusgate.StatusQuiet, statusgate.StatusMaxDefer)
		s.board = statusgate.NewBoard()
	}
	s.interp = interpreter.New(nil)
	s.detector = detector.New(c, mgr.GetCache(), dyn, disc)
	s.detector.Interpreter = s.interp
	if err := mgr.Add(&interpreter.Sync{In: s.interp, Cache: mgr.GetCache(), Reader: c,
		Recorder: s.recorders.For("resource-interpreter"), OnChange: s.detector.RequeueKind}); err != nil {
		return nil, nil, fmt.Errorf("add the interpreter configuration sync: %w", err)
	}
	s.detector.Gate, s.detector.Events, s.detector.ReadYourWrites = s.gate, s.events("resource-detector"), o.FastPaths.ReadYourWrites
	s.detector.Features = features.Or(o.Features)
	// Pull-mode clusters' Works are applied by their agents.
	modes := &registry.SyncModes{}
	clusters, err := mgr.GetCache().GetInformer(ctx, &clusterv1alpha1.Cluster{})
	if err != nil {
		return nil, nil, fmt.Errorf("watch Clusters: %w", err)
	}
	if err := modes.Track(clusters); err != nil {
		return nil, nil, fmt.Errorf("watch Clusters' sync modes: %w", err)
	}
	s.execution = &execution.Reconciler{Client: c, Members: s.members, Clock: s.opts.Clock, Interpreter: s.interp, Events: s.events("execution-controller"),
		StatusEvents: s.events(execution.WorkStatusEventSource), Gate: s.gate, Board: s.board, ReadYourWrites: o.FastPaths.ReadYourWrites,
		Executes: func(cluster string) bool { return !modes.Pull(cluster) }}
	if s.detectorRuns() {
		if err := mgr.Add(s.detector); err != nil {
			return nil, nil, fmt.Errorf("add the detector: %w", err)
		}
		// Its informers are caches like the manager's: /readyz waits
		// for them too.
		if err := mgr.AddReadyzCheck("template-caches", s.detector.Synced); err != nil {
			return nil, nil, fmt.Errorf("add the detector's readiness check: %w", err)
		}
	}
	return mgr, s, nil
}

// detectorRuns reports whether the detector runs in this process: its
// informers are the template cache of the binding, status and dependencies
// controllers too.
func (s *shared) detectorRuns() bool {
	return s.on["detector"] || s.on["binding"] || s.on["status"] || s.on[dependencies.ControllerName]
}

// events is a Recorder raising Karmada's success and failure events, on
// transitions, from component: the events' source (kubectl's FROM column),
// Karmada's name for the controller, such as "execution-controller", so that
// filters and alerts written for Karmada match. Success events give way to
// propagation as status reports do.
func (s *shared) events(component string) *eventrecord.Recorder {
	return &eventrecord.Recorder{Events: s.recorders.For(component), Busy: s.gate.Busy,
		MaxDefer: statusgate.StatusMaxDefer, Scheme: s.mgr.GetScheme()}
}

// byKind is namespaced for ResourceBindings and clusterScoped for
// ClusterResourceBindings: Karmada names the two controllers of a pair apart.
func byKind(kind binding.Kind, namespaced, clusterScoped string) string {
	if kind == binding.ClusterScoped {
		return clusterScoped
	}
	return namespaced
}
