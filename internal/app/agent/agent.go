// Package agent is Flotilla's Pull-mode agent (Karmada's karmada-agent):
// it runs beside a member cluster the control plane does not reach, and
// does for that one cluster what the control plane's controllers do for a
// Push-mode cluster. It probes the member and writes the Cluster's status
// and Lease (the cluster controller in agent mode), and applies the Works of
// the cluster's execution namespace to the member and reports their status
// (the execution controller, the same code as Push mode: conflict
// resolution, retained fields, drift correction).
//
// The agent reaches the control plane with its own credentials, a client
// certificate for system:karmada:agent:<cluster> that `flotilla register`
// obtained and stored in the member, and renews it before it expires. Those
// credentials reach only the cluster's own objects. When the control plane
// is away, the member keeps what it runs and the agent deletes nothing; the
// caches catch up when it returns.
package agent

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	coordinationv1 "k8s.io/api/coordination/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/fields"
	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/rest"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controller/member/cluster"
	"github.com/flotilla-io/flotilla/internal/controller/propagation/execution"
	"github.com/flotilla-io/flotilla/internal/controllerkit/election"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/health"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/member/dnsdetector"
	"github.com/flotilla-io/flotilla/internal/member/join"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// ReportKubeCredentials is the --report-secrets value that makes the agent
// give the control plane credentials for its member (a service account
// token in the Secret karmada-cluster/<cluster>, named by spec.secretRef),
// as Karmada's agent does: the Cluster proxy, `flotilla get` and `top`, the
// metrics adapter and FederatedHPA then reach the member when its API
// server is reachable from the control plane.
const ReportKubeCredentials = "KubeCredentials"

// ReportKubeImpersonator is the --report-secrets value that makes the agent
// give the control plane the token of the member's impersonator service
// account (Secret karmada-cluster/<cluster>-impersonator, named by
// spec.impersonatorSecretRef), as Karmada's agent does: the Cluster proxy
// authenticates with it and impersonates the caller, within what the
// unifiedAuth controller's karmada-impersonator ClusterRole allows.
const ReportKubeImpersonator = "KubeImpersonator"

// Options configure one agent.
type Options struct {
	// ClusterName is the Cluster this agent serves (--cluster-name).
	ClusterName string
	// Member is an admin config of the member cluster (--kubeconfig).
	Member *rest.Config
	// ControlPlane reaches the control plane (--karmada-kubeconfig). Nil
	// reads the kubeconfig `flotilla register` stored in the member's
	// Secret karmada-system/karmada-kubeconfig, and renews its client
	// certificate there before it expires.
	ControlPlane *rest.Config
	// APIEndpoint, Provider, Region and Zones fill the Cluster's spec
	// (--cluster-api-endpoint, --cluster-provider, --cluster-region,
	// --cluster-zones); an empty APIEndpoint takes the member config's host.
	APIEndpoint, Provider, Region string
	Zones                         []string
	// ReportSecrets lists what the agent reports to the control plane
	// (--report-secrets): ReportKubeCredentials, ReportKubeImpersonator,
	// both (the default of the flag, as in Karmada), or nothing.
	ReportSecrets []string
	// StatusUpdateFrequency, FailureThreshold and SuccessThreshold are the
	// cluster status controller's (Karmada's agent flags of the same names).
	StatusUpdateFrequency, FailureThreshold, SuccessThreshold time.Duration
	// MetricsAddr serves Prometheus metrics on /metrics (karmada-agent's:
	// the cluster gauges and work_sync_workload_duration_seconds, with
	// controller-runtime's); "0" disables, "" is :8080. HealthAddr serves
	// /healthz and /readyz (ready once the caches have synced); "0" or ""
	// disables.
	MetricsAddr, HealthAddr string
	// PprofAddr serves Go's /debug/pprof (--profiling-bind-address, as
	// karmada-agent); "" or "0" disables.
	PprofAddr string
	// Election makes the agents of one cluster elect one active leader on
	// the control plane, holding the Lease karmada-agent-<cluster> (Karmada's
	// --leader-elect flags; Lease is set by Run). The zero value runs
	// without an election: every agent started for the cluster applies.
	Election election.Config
	// DNSDetection runs the service name resolution detector for the
	// cluster while this agent leads (--service-name-resolution-detection),
	// with DNS (the coredns flags): the Cluster's
	// ServiceDomainNameResolutionReady condition, which Remedies match.
	DNSDetection bool
	DNS          dnsdetector.Options
	// Features are the feature gates; nil means the defaults.
	Features featuregate.FeatureGate
	// SkipNameValidation lets Run be called again in one process (tests).
	SkipNameValidation bool
}

// Run runs the agent until ctx ends. It waits (logging why) until the
// control plane answers and the Cluster exists. Errors: invalid options,
// credentials that cannot be read from the member, or a manager that cannot
// start.
func Run(ctx context.Context, o Options) error {
	log := klog.FromContext(ctx).WithValues("cluster", o.ClusterName)
	if o.ClusterName == "" || o.Member == nil {
		return fmt.Errorf("the agent needs --cluster-name and the member's --kubeconfig")
	}
	for _, s := range o.ReportSecrets {
		if s != ReportKubeCredentials && s != ReportKubeImpersonator && s != "None" && s != "" {
			return fmt.Errorf("--report-secrets: unknown value %q (known: %s, %s, None)", s, ReportKubeCredentials, ReportKubeImpersonator)
		}
	}
	cp := o.ControlPlane
	if cp == nil {
		var err error
		if cp, err = rotatingControlPlaneConfig(ctx, o.Member, o.ClusterName); err != nil {
			return err
		}
	}
	cp = rest.CopyConfig(cp)
	cp.QPS, cp.Burst = 500, 1000
	ctrl.SetLogger(klog.NewKlogr())

	// Register: fill the Cluster's spec and, if asked, the control plane's
	// credentials for the member. Retried until the control plane answers.
	direct, err := client.New(cp, client.Options{Scheme: controlplane.NewScheme()})
	if err != nil {
		return fmt.Errorf("control plane client: %w", err)
	}
	if err := wait.PollUntilContextCancel(ctx, 2*time.Second, true, func(ctx context.Context) (bool, error) {
		if err := registerCluster(ctx, direct, o); errors.As(err, new(refusal)) {
			return false, err
		} else if err != nil {
			log.Info("Waiting to register the cluster with the control plane", "err", err.Error())
			return false, nil
		}
		return true, nil
	}); err != nil {
		return err
	}
	log.Info("Registered the cluster with the control plane", "server", cp.Host)

	mo := ctrl.Options{
		Scheme:                 controlplane.NewScheme(),
		Metrics:                metricsserver.Options{BindAddress: o.MetricsAddr},
		HealthProbeBindAddress: o.HealthAddr,
		PprofBindAddress:       o.PprofAddr,
		Controller:             config.Controller{SkipNameValidation: &o.SkipNameValidation},
		Cache: cache.Options{
			DefaultTransform: cache.TransformStripManagedFields(),
			// The agent's credentials reach only its own objects.
			ByObject: map[client.Object]cache.ByObject{
				&workv1alpha1.Work{}:       {Namespaces: map[string]cache.Config{clusterv1alpha1.ExecutionNamespace(o.ClusterName): {}}},
				&clusterv1alpha1.Cluster{}: {Field: fields.OneTermEqualSelector("metadata.name", o.ClusterName)},
			},
		},
		// Leases and Secrets are read by name (the agent may not list them).
		Client: client.Options{Cache: &client.CacheOptions{DisableFor: []client.Object{&coordinationv1.Lease{}, &corev1.Secret{}}}},
	}
	el := o.Election
	el.Lease = election.AgentLease(o.ClusterName)
	el.Apply(&mo)
	mgr, err := ctrl.NewManager(cp, mo)
	if err != nil {
		return fmt.Errorf("create the agent's manager: %w", err)
	}
	members := &registry.Registry{Reader: mgr.GetClient(), Local: map[string]*rest.Config{o.ClusterName: o.Member}}
	interp := interpreter.New(nil)
	if err := mgr.Add(&interpreter.Sync{In: interp, Cache: mgr.GetCache(), Reader: mgr.GetClient()}); err != nil {
		return fmt.Errorf("add the interpreter configuration sync: %w", err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var gone atomic.Bool
	counted := health.Counting(mgr)
	status := &cluster.Reconciler{Client: mgr.GetClient(), Members: members, Agent: o.ClusterName, Gate: o.Features,
		OnGone: func() {
			log.Info("The Cluster was deleted on the control plane (unjoined or unregistered): the agent stops")
			gone.Store(true)
			stop()
		},
		StatusUpdateFrequency: o.StatusUpdateFrequency, FailureThreshold: o.FailureThreshold, SuccessThreshold: o.SuccessThreshold}
	if err := status.SetupWithManager(counted); err != nil {
		return fmt.Errorf("set up the cluster status controller: %w", err)
	}
	// The controller manager's propagation shortcuts that apply here: a
	// member object just created stands in for its informer copy, and
	// status reports (and success events) give way while Works are being
	// applied (statusgate), so a burst reaches the member first. The quiet
	// is longer than the controller manager's: the control plane's
	// propagation shows here only as Works arriving, with gaps between them.
	gate := statusgate.NewGate(statusgate.AgentStatusQuiet, statusgate.StatusMaxDefer)
	recorders, err := eventrecord.NewSink(cp, mgr.GetScheme())
	if err != nil {
		return fmt.Errorf("create the event broadcaster: %w", err)
	}
	if err := mgr.Add(recorders); err != nil {
		return fmt.Errorf("add the event broadcaster: %w", err)
	}
	if o.DNSDetection {
		if err := o.DNS.Validate(); err != nil {
			return err
		}
		detector, write := o.DNS.Detector(), dnsdetector.ClusterWriter(mgr.GetClient(), o.ClusterName)
		detector.Current = dnsdetector.ClusterCondition(mgr.GetClient(), o.ClusterName)
		// A leader-election runnable: only the leading agent writes.
		if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error { detector.Run(ctx, write); return nil })); err != nil {
			return fmt.Errorf("add the service name resolution detector: %w", err)
		}
	}
	exec := &execution.Reconciler{Client: mgr.GetClient(), Members: members, Interpreter: interp, Gate: gate, ReadYourWrites: true,
		Events: &eventrecord.Recorder{Events: recorders.For("karmada-agent"), Busy: gate.Busy,
			MaxDefer: statusgate.StatusMaxDefer, Scheme: mgr.GetScheme()},
		// Karmada's agent runs a work status controller of its own.
		StatusEvents: &eventrecord.Recorder{Events: recorders.For(execution.WorkStatusEventSource), Busy: gate.Busy,
			MaxDefer: statusgate.StatusMaxDefer, Scheme: mgr.GetScheme()},
		Executes: func(c string) bool { return c == o.ClusterName }}
	if err := exec.SetupWithManager(counted); err != nil {
		return fmt.Errorf("set up the execution controller: %w", err)
	}
	if o.HealthAddr != "0" && o.HealthAddr != "" {
		if err := health.Add(counted, o.Election.Elect); err != nil {
			return err
		}
	}
	metrics.RegisterAgent()
	log.Info("Starting the agent", "executionNamespace", clusterv1alpha1.ExecutionNamespace(o.ClusterName))
	err = mgr.Start(ctx)
	if gone.Load() {
		return nil
	}
	return err
}

// registerCluster writes what the agent knows of its member into the Cluster's
// spec (Pull mode, the endpoint, the topology, the cluster id) and, with
// ReportKubeCredentials, the control plane's credentials for the member.
// The Cluster itself is created when the agent's certificate is approved.
func registerCluster(ctx context.Context, c client.Client, o Options) error {
	cl := &clusterv1alpha1.Cluster{}
	if err := c.Get(ctx, client.ObjectKey{Name: o.ClusterName}, cl); err != nil {
		return fmt.Errorf("read Cluster %s: %w", o.ClusterName, err)
	}
	if cl.Spec.SyncMode != clusterv1alpha1.Pull {
		return refusal{fmt.Errorf("cluster %s is in %s mode, not Pull: another cluster has the name", o.ClusterName, cl.Spec.SyncMode)}
	}
	id, err := join.ClusterID(ctx, o.Member)
	if err != nil {
		return fmt.Errorf("read the member's kube-system namespace: %w", err)
	}
	if cl.Spec.ID != "" && id != "" && cl.Spec.ID != id {
		// Another cluster registered under this name first: taking it over
		// would move that cluster's workloads here.
		return refusal{fmt.Errorf("the Cluster %s belongs to another cluster (spec.id %s; this member's kube-system UID is %s): check --kubeconfig and --context, or register this cluster under its own name",
			o.ClusterName, cl.Spec.ID, id)}
	}
	var secretRef *clusterv1alpha1.LocalSecretReference
	if reports(o.ReportSecrets, ReportKubeCredentials) {
		if secretRef, err = reportCredentials(ctx, c, o, cl); err != nil {
			return err
		}
	}
	var impersonatorRef *clusterv1alpha1.LocalSecretReference
	if reports(o.ReportSecrets, ReportKubeImpersonator) {
		if impersonatorRef, err = reportImpersonator(ctx, c, o, cl); err != nil {
			return err
		}
	}
	before := cl.DeepCopy()
	endpoint := o.APIEndpoint
	if endpoint == "" {
		endpoint = o.Member.Host
	}
	cl.Spec.APIEndpoint = endpoint
	// Topology from the flags, else from the member's nodes, as join does
	// for a Push-mode cluster (spread by region must see Pull clusters too).
	provider, region, zone := o.Provider, o.Region, ""
	if provider == "" || region == "" || len(o.Zones) == 0 {
		p, r, z := join.NodeTopology(ctx, o.Member)
		provider, region, zone = cmp.Or(provider, p), cmp.Or(region, r), z
	}
	for dst, v := range map[*string]string{&cl.Spec.Provider: provider, &cl.Spec.Region: region, &cl.Spec.ID: id} {
		if v != "" {
			*dst = v
		}
	}
	switch {
	case len(o.Zones) > 0:
		cl.Spec.Zones = o.Zones
	case zone != "" && len(cl.Spec.Zones) == 0:
		cl.Spec.Zones = []string{zone}
	}
	if secretRef != nil {
		cl.Spec.SecretRef = secretRef
	}
	if impersonatorRef != nil {
		cl.Spec.ImpersonatorSecretRef = impersonatorRef
	}
	if equality.Semantic.DeepEqual(before.Spec, cl.Spec) {
		return nil
	}
	if err := c.Patch(ctx, cl, client.MergeFrom(before)); err != nil {
		return fmt.Errorf("update Cluster %s: %w", o.ClusterName, err)
	}
	return nil
}

// refusal is a registration the agent must not retry: the name belongs to
// another cluster.
type refusal struct{ error }

func reports(list []string, what string) bool {
	for _, s := range list {
		if strings.EqualFold(s, what) {
			return true
		}
	}
	return false
}
