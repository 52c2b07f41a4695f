// Package controllermanager assembles Flotilla's controllers into one
// process, as karmada-controller-manager (with karmada-scheduler in-process
// by default): cluster status, detector, scheduler, binding, execution,
// status aggregation and namespace sync.
package controllermanager

import (
	"context"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	"github.com/flotilla-io/flotilla/internal/binding"
	"github.com/flotilla-io/flotilla/internal/controller/bindingcontroller"
	"github.com/flotilla-io/flotilla/internal/controller/cluster"
	"github.com/flotilla-io/flotilla/internal/controller/detector"
	"github.com/flotilla-io/flotilla/internal/controller/execution"
	"github.com/flotilla-io/flotilla/internal/controller/namespace"
	"github.com/flotilla-io/flotilla/internal/controller/scheduling"
	"github.com/flotilla-io/flotilla/internal/controller/status"
	"github.com/flotilla-io/flotilla/internal/controller/validation"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/eventrecord"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/statusgate"
)

// Controller names accepted by Options.Controllers.
var AllControllers = []string{"cluster", "detector", "scheduler", "binding", "execution", "status", "namespace", "validation"}

// Options configure the controller manager.
type Options struct {
	// Config reaches the control plane.
	Config *rest.Config
	// Controllers to run: "*" for all, names to add, "-name" to remove,
	// as kube-controller-manager's --controllers.
	Controllers []string
	// LeaderElect makes replicas elect one active leader, holding the Lease
	// karmada-system/<LeaderElectionID>.
	LeaderElect      bool
	LeaderElectionID string
	// MetricsAddr serves Prometheus metrics; "0" disables.
	MetricsAddr string
	// HealthAddr serves /healthz and /readyz; "0" disables.
	HealthAddr string
	// PprofAddr serves Go's /debug/pprof; "" or "0" disables.
	PprofAddr string
	// SkippedPropagatingNamespaces are regular expressions of namespaces
	// namespace sync leaves alone.
	SkippedPropagatingNamespaces []string
	// ClusterStatusUpdateFrequency is how often each member is probed for
	// its Cluster status (Karmada's --cluster-status-update-frequency);
	// 0 means 10s.
	ClusterStatusUpdateFrequency time.Duration
}

// Enabled resolves Options.Controllers to the set of controllers to run.
// Errors name an unknown controller.
func Enabled(spec []string) (map[string]bool, error) {
	on := map[string]bool{}
	for _, s := range spec {
		name := strings.TrimPrefix(s, "-")
		switch {
		case s == "*":
			for _, c := range AllControllers {
				if _, set := on[c]; !set {
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

// Run builds the manager and runs it until ctx ends.
func Run(ctx context.Context, o Options) error {
	on, err := Enabled(o.Controllers)
	if err != nil {
		return err
	}
	ctrl.SetLogger(klog.NewKlogr())
	cfg := rest.CopyConfig(o.Config)
	// Flotilla writes bindings, Works and status for every template; the
	// client-go default of 5 QPS would throttle propagation to a crawl.
	cfg.QPS, cfg.Burst = 1000, 2000
	var skipped []*regexp.Regexp
	for _, p := range o.SkippedPropagatingNamespaces {
		re, err := regexp.Compile("^(" + p + ")$")
		if err != nil {
			return fmt.Errorf("--skipped-propagating-namespaces: %q is not a regular expression: %w", p, err)
		}
		skipped = append(skipped, re)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme:                  controlplane.NewScheme(),
		LeaderElection:          o.LeaderElect,
		LeaderElectionID:        o.LeaderElectionID,
		LeaderElectionNamespace: "karmada-system",
		Metrics:                 metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress:  o.HealthAddr,
		PprofBindAddress:        o.PprofAddr,
		Cache: cache.Options{
			// managedFields are never read by the controllers and are a
			// large share of every cached Work and binding.
			DefaultTransform: cache.TransformStripManagedFields(),
			ByObject: map[client.Object]cache.ByObject{
				// Only member credentials are read; do not cache every Secret.
				&corev1.Secret{}: {Namespaces: map[string]cache.Config{"karmada-cluster": {}}},
			}},
	})
	if err != nil {
		return fmt.Errorf("create controller manager: %w", err)
	}
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	disc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		return err
	}
	if err := binding.IndexWorksByBinding(ctx, mgr.GetFieldIndexer()); err != nil {
		return err
	}
	c := mgr.GetClient()
	recorder := mgr.GetEventRecorderFor("flotilla-controller-manager")
	members := &membercluster.Registry{Reader: c}
	det := detector.New(c, mgr.GetCache(), dyn, disc)
	// Propagation first: status reports wait while templates are being
	// propagated (see statusgate.Gate).
	gate := statusgate.NewGate(statusgate.StatusQuiet, statusgate.StatusMaxDefer)
	det.Gate = gate
	// Karmada's success and failure events, on transitions; success events
	// give way to propagation like status reports do.
	outcomes := &eventrecord.Recorder{Events: recorder, Busy: gate.Busy, MaxDefer: statusgate.StatusMaxDefer}
	det.Events = outcomes
	type setup interface{ SetupWithManager(ctrl.Manager) error }
	var setups []setup
	if on["cluster"] {
		setups = append(setups, &cluster.Reconciler{Client: c, Members: members, StatusUpdateFrequency: o.ClusterStatusUpdateFrequency})
	}
	if on["detector"] || on["binding"] || on["status"] {
		// The detector's informers are the template cache of the binding
		// and status controllers too.
		if err := mgr.Add(det); err != nil {
			return err
		}
	}
	if on["scheduler"] {
		det.Preschedule = scheduling.Preschedule
		setups = append(setups, &scheduling.Reconciler{Client: c, Events: outcomes, Gate: gate}, &scheduling.Reconciler{Client: c, ClusterScoped: true, Events: outcomes, Gate: gate})
	}
	exec := &execution.Reconciler{Client: c, Members: members, Events: outcomes, Gate: gate}
	if on["binding"] {
		rb := &bindingcontroller.Reconciler{Client: c, Templates: det, Gate: gate, Events: outcomes}
		crb := &bindingcontroller.Reconciler{Client: c, Templates: det, ClusterScoped: true, Gate: gate, Events: outcomes}
		if on["execution"] {
			// New Works are applied by the binding controller's own
			// goroutine, a watch delivery sooner.
			rb.Executor, crb.Executor = exec, exec
		}
		setups = append(setups, rb, crb)
	}
	if on["execution"] {
		setups = append(setups, exec)
	}
	if on["status"] {
		for _, cs := range []bool{false, true} {
			setups = append(setups, &status.Reconciler{Client: c, Dynamic: dyn, Templates: det, Resources: det.ResourceFor, ClusterScoped: cs, Events: outcomes, Gate: gate})
		}
	}
	if on["validation"] {
		for _, v := range validation.Kinds(c, mgr.GetEventRecorderFor("flotilla-validation")) {
			setups = append(setups, v)
		}
	}
	if on["namespace"] {
		setups = append(setups, &namespace.Reconciler{Client: c, SkippedPatterns: skipped})
	}
	for _, s := range setups {
		if err := s.SetupWithManager(mgr); err != nil {
			return fmt.Errorf("set up %T: %w", s, err)
		}
	}
	if o.HealthAddr != "0" && o.HealthAddr != "" {
		if err := mgr.AddHealthzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("ping", func(_ *http.Request) error { return nil }); err != nil {
			return err
		}
	}
	return mgr.Start(ctx)
}
