// Package component runs the Kubernetes components of the local stack, one per
// process: kube-apiserver on embedded etcd, kube-controller-manager,
// kube-scheduler and kwok; and the light members' host, many member
// kube-apiservers in one process on one etcd (RunLightMembers). `flotilla up`
// starts each of them as a hidden subcommand of the flotilla binary itself, so
// one artifact carries the whole stack.
package component

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"go.etcd.io/etcd/server/v3/embed"
	utilerrors "k8s.io/apimachinery/pkg/util/errors"
	"k8s.io/apiserver/pkg/admission"
	mutatingwebhook "k8s.io/apiserver/pkg/admission/plugin/webhook/mutating"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/apiserver/pkg/server/flagz"
	"k8s.io/client-go/rest"
	toolscache "k8s.io/client-go/tools/cache"
	cliflag "k8s.io/component-base/cli/flag"
	"k8s.io/component-base/cli/globalflag"
	basecompatibility "k8s.io/component-base/compatibility"
	"k8s.io/component-base/featuregate"
	"k8s.io/component-base/logs"
	logsapi "k8s.io/component-base/logs/api/v1"
	apiserverapp "k8s.io/kubernetes/cmd/kube-apiserver/app"
	"k8s.io/kubernetes/cmd/kube-apiserver/app/options"

	"github.com/flotilla-io/flotilla/internal/admission/claim"
	"github.com/flotilla-io/flotilla/internal/admission/defaulting"
	"github.com/flotilla-io/flotilla/internal/admission/validation"
	"github.com/flotilla-io/flotilla/internal/member/proxy"
)

// EtcdOptions describes the embedded etcd that backs one kube-apiserver.
type EtcdOptions struct {
	// Name is the etcd member name, e.g. "member1".
	Name string
	// DataDir holds the etcd WAL and snapshots. It survives restarts.
	DataDir string
	// ClientPort and PeerPort are TCP ports on 127.0.0.1.
	ClientPort, PeerPort int
	// LogFile receives etcd's own log (zap, JSON lines).
	LogFile string
	// ControlPlane marks the control plane's API server: it registers
	// Flotilla's admission plugins (controlPlanePlugins) and
	// collects garbage less often (ControlPlaneGCPercent).
	ControlPlane bool
}

// StartEtcd starts a single-member etcd on loopback and waits until it serves.
// It returns the running server; callers close it after the API server stops.
// Errors: the data dir cannot be used, a port is taken, or etcd is not ready
// within two minutes.
func StartEtcd(o EtcdOptions) (*embed.Etcd, error) {
	cfg := embed.NewConfig()
	cfg.Name = o.Name
	cfg.Dir = o.DataDir
	client := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", o.ClientPort)}
	peer := url.URL{Scheme: "http", Host: fmt.Sprintf("127.0.0.1:%d", o.PeerPort)}
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = fmt.Sprintf("%s=%s", o.Name, peer.String())
	cfg.Logger = "zap"
	cfg.LogLevel = "warn"
	if o.LogFile != "" {
		cfg.LogOutputs = []string{o.LogFile}
	}
	// 8 GiB, etcd's recommended maximum: a local stack should never hit the
	// default 2 GiB quota and turn read-only.
	cfg.QuotaBackendBytes = 8 << 30
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, fmt.Errorf("start etcd in %s: %w", o.DataDir, err)
	}
	select {
	case <-e.Server.ReadyNotify():
		return e, nil
	case err := <-e.Err():
		e.Close()
		return nil, fmt.Errorf("etcd failed while starting: %w", err)
	case <-time.After(2 * time.Minute):
		e.Server.Stop()
		e.Close()
		return nil, fmt.Errorf("etcd in %s was not ready after 2m", o.DataDir)
	}
}

// APIServerGCPercent is the Go GC target (GOGC) of every member
// kube-apiserver process of the local stack, unless GOGC is set in the
// environment.
const APIServerGCPercent = 300

// ControlPlaneGCPercent and ControlPlaneMemoryLimit (bytes) tune the control
// plane's kube-apiserver, unless GOGC or GOMEMLIMIT are set: every template
// passes through it several times, and a request that meets a collection
// cycle waits for it (at GOGC 300, a few in a hundred 1/s propagations took
// 10-30 ms longer). Collecting rarely, but never letting the heap pass the
// soft limit, takes that tail away for a bounded amount of memory. The
// limit was 1 GiB until 2026-12-07: at 2 GiB the API server's CPU under a
// burst of 1,000 templates fell by about a sixth (garbage collection was a
// third of it), and the failover of 1,000 bindings from 5.4-5.7 s to
// 4.5-5.6 s (bench/results/2026-12-07-failover.md), for about 1 GiB more at
// the peak, which releaseWhenQuiet hands back once the burst is over.
const (
	ControlPlaneGCPercent   = 1000
	ControlPlaneMemoryLimit = 2 << 30
)

// Quiet release: every QuietPeriod, if the process allocated less than
// QuietAllocBytes since the last look and holds at least
// ReleaseFreeBytes of free heap, releaseWhenQuiet returns the free heap to
// the operating system.
const (
	QuietPeriod      = 10 * time.Second
	QuietAllocBytes  = 64 << 20
	ReleaseFreeBytes = 256 << 20
)

// releaseWhenQuiet returns the heap's free memory to the operating system
// (debug.FreeOSMemory: one collection, then the free spans released) when
// the process has been quiet for a period and holds much free heap. With a
// soft limit well above the live heap, the runtime keeps what a burst or the
// start-up used (its heap goal is the limit), so the control plane's API
// server stayed at about 1 GiB after `up` with a live heap of 170 MiB;
// released, it holds about the live heap until the next burst. A busy
// process is never interrupted (the check needs a quiet period), and one
// release leaves little free heap, so it does not repeat until a burst has
// come and gone.
func releaseWhenQuiet() {
	samples := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}, {Name: "/memory/classes/heap/free:bytes"}}
	var last uint64
	for range time.Tick(QuietPeriod) {
		metrics.Read(samples)
		if samples[0].Value.Kind() != metrics.KindUint64 || samples[1].Value.Kind() != metrics.KindUint64 {
			return
		}
		allocs, free := samples[0].Value.Uint64(), samples[1].Value.Uint64()
		release := releaseNow(last, allocs, free)
		last = allocs
		if release {
			debug.FreeOSMemory()
			metrics.Read(samples)
			last = samples[0].Value.Uint64()
		}
	}
}

// releaseNow decides releaseWhenQuiet's release from the bytes allocated
// in total at the last look (0: none yet) and now, and the free heap now
// (bytes).
func releaseNow(lastAllocs, allocs, free uint64) bool {
	return lastAllocs != 0 && allocs-lastAllocs < QuietAllocBytes && free >= ReleaseFreeBytes
}

// followLiveHeap raises the soft memory limit with the live heap, every
// period, to three times the live heap and never below base (bytes): a
// control plane holding tens of thousands of objects has a live heap near
// or above base, and a fixed limit there would make the collector run all
// the time. Below base/3 live, the limit stays base, as set. At twice the
// live heap, a burst to a hundred members spent over a third of the API
// server's CPU collecting (1 GiB live); three times cut the control
// plane's CPU per copy there by 15 % for about 1 GiB more at the peak.
func followLiveHeap(base int64, period time.Duration) {
	sample := []metrics.Sample{{Name: "/gc/heap/live:bytes"}}
	for range time.Tick(period) {
		metrics.Read(sample)
		if sample[0].Value.Kind() != metrics.KindUint64 {
			return
		}
		debug.SetMemoryLimit(max(base, 3*int64(sample[0].Value.Uint64())))
	}
}

// RunAPIServer starts etcd (unless etcd.DataDir is empty: then
// apiserverArgs' --etcd-servers reach an etcd of their own), then runs
// kube-apiserver (k8s.io/kubernetes as a library) with apiserverArgs until
// SIGTERM or SIGINT, then stops etcd. It returns the process exit code.
func RunAPIServer(etcd EtcdOptions, apiserverArgs []string) int {
	if os.Getenv("GOGC") == "" {
		// The API server and its etcd share one heap, so every
		// collection also scans etcd's index; under a propagation burst
		// the collector took a quarter of the control plane's CPU. A
		// larger heap target halves that, for a few tens of MiB.
		debug.SetGCPercent(APIServerGCPercent)
		if etcd.ControlPlane {
			debug.SetGCPercent(ControlPlaneGCPercent)
			if os.Getenv("GOMEMLIMIT") == "" {
				debug.SetMemoryLimit(ControlPlaneMemoryLimit)
				go followLiveHeap(ControlPlaneMemoryLimit, 5*time.Second)
				go releaseWhenQuiet()
			}
		}
	}
	if etcd.DataDir != "" {
		e, err := StartEtcd(etcd)
		if err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			return 1
		}
		defer e.Close()
		// Watch for etcd dying underneath the API server: without its store the
		// API server is useless, so exit and let the supervisor report it.
		go func() {
			if err := <-e.Err(); err != nil {
				fmt.Fprintln(os.Stderr, "error: etcd stopped:", err)
				os.Exit(1)
			}
		}()
	}
	var cmd *cobra.Command
	if etcd.ControlPlane {
		cmd = newAPIServerCommand(controlPlanePlugins...)
	} else {
		cmd = apiserverapp.NewAPIServerCommand()
	}
	cmd.SetArgs(apiserverArgs)
	return runCommand(cmd)
}

// plugin is an admission plugin Flotilla adds to kube-apiserver.
type plugin struct {
	register func(*admission.Plugins)
	name     string
}

// controlPlanePlugins are Flotilla's admission plugins in the control
// plane's kube-apiserver: the claim and the defaults CRDs cannot express
// (mutating), and the checks CEL cannot express (validating).
var controlPlanePlugins = []plugin{
	{claim.Register, claim.PluginName},
	{defaulting.Register, defaulting.PluginName},
	{validation.Register, validation.PluginName},
}

// newRunOptionsWithPlugins returns kube-apiserver's default options with more
// admission plugins registered, ordered (as given) before the mutating
// webhooks and on by default (they are in no default-off set, so only an
// explicit --disable-admission-plugins turns one off).
func newRunOptionsWithPlugins(plugins ...plugin) *options.ServerRunOptions {
	s := options.NewServerRunOptions()
	ga := s.Admission.GenericAdmission
	for _, p := range plugins {
		p.register(ga.Plugins)
	}
	order := make([]string, 0, len(ga.RecommendedPluginOrder)+len(plugins))
	for _, name := range ga.RecommendedPluginOrder {
		if name == mutatingwebhook.PluginName {
			for _, p := range plugins {
				order = append(order, p.name)
			}
		}
		order = append(order, name)
	}
	ga.RecommendedPluginOrder = order
	return s
}

// newAPIServerCommand is kube-apiserver's own command (as
// apiserverapp.NewAPIServerCommand builds it) on newRunOptionsWithPlugins.
func newAPIServerCommand(plugins ...plugin) *cobra.Command {
	s := newRunOptionsWithPlugins(plugins...)
	ctx := genericapiserver.SetupSignalContext()
	featureGate := s.GenericServerRunOptions.ComponentGlobalsRegistry.FeatureGateFor(basecompatibility.DefaultKubeComponent)
	cmd := &cobra.Command{
		Use:          "kube-apiserver",
		SilenceUsage: true,
		PersistentPreRunE: func(*cobra.Command, []string) error {
			if err := s.GenericServerRunOptions.ComponentGlobalsRegistry.Set(); err != nil {
				return err
			}
			rest.SetDefaultWarningHandler(rest.NoWarnings{})
			return nil
		},
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := logsapi.ValidateAndApply(s.Logs, featureGate); err != nil {
				return err
			}
			cliflag.PrintFlags(cmd.Flags())
			completed, err := s.Complete(ctx)
			if err != nil {
				return err
			}
			if errs := completed.Validate(); len(errs) != 0 {
				return utilerrors.NewAggregate(errs)
			}
			featureGate.(featuregate.MutableFeatureGate).AddMetrics()
			s.GenericServerRunOptions.ComponentGlobalsRegistry.AddMetrics()
			return runControlPlane(ctx, completed)
		},
		Args: cobra.NoArgs,
	}
	cmd.SetContext(ctx)
	namedFlagSets := s.Flags()
	s.Flagz = flagz.NamedFlagSetsReader{FlagSets: namedFlagSets}
	globalflag.AddGlobalFlags(namedFlagSets.FlagSet("global"), cmd.Name(), logs.SkipLoggingConfigurationFlags())
	for _, f := range namedFlagSets.FlagSets {
		cmd.Flags().AddFlagSet(f)
	}
	return cmd
}

// runControlPlane is apiserverapp.Run with the Cluster proxy subresource
// (package proxy) in the handler chain, behind authentication and
// authorization.
func runControlPlane(ctx context.Context, opts options.CompletedOptions) error {
	if opts.InformerName == nil {
		name, err := toolscache.NewInformerName("kube-apiserver")
		if err != nil {
			return err
		}
		opts.InformerName = name
	}
	_, run, err := newAPIServer(opts, nil, func(config *apiserverapp.Config) {
		generic := config.Aggregator.GenericConfig
		build, loopback := generic.BuildHandlerChainFunc, generic.LoopbackClientConfig
		generic.BuildHandlerChainFunc = func(h http.Handler, c *genericapiserver.Config) http.Handler {
			return build(proxy.Wrap(h, loopback), c)
		}
	})
	if err != nil {
		return err
	}
	return run(ctx)
}

// newAPIServer builds kube-apiserver from opts as apiserverapp.Run does,
// after adjust has changed its configuration. prepared, if set, is handed
// the aggregator (the front of the chain) and the kube-apiserver proper
// (its delegate, behind which the apiextensions server sits) once the
// chain is prepared to run. It returns
// the server's loopback client configuration and run, which serves until
// ctx ends. Errors: kube-apiserver's, from building the configuration or
// the server.
func newAPIServer(opts options.CompletedOptions, prepared func(aggregator, kube *genericapiserver.GenericAPIServer), adjust func(*apiserverapp.Config)) (*rest.Config, func(context.Context) error, error) {
	config, err := apiserverapp.NewConfig(opts)
	if err != nil {
		return nil, nil, err
	}
	adjust(config)
	completed, err := config.Complete()
	if err != nil {
		return nil, nil, err
	}
	server, err := apiserverapp.CreateServerChain(completed)
	if err != nil {
		return nil, nil, err
	}
	ready, err := server.PrepareRun()
	if err != nil {
		return nil, nil, err
	}
	if prepared != nil {
		kube, ok := server.GenericAPIServer.NextDelegate().(*genericapiserver.GenericAPIServer)
		if !ok {
			return nil, nil, fmt.Errorf("kube-apiserver: the aggregator's delegate is a %T, not the kube-apiserver", server.GenericAPIServer.NextDelegate())
		}
		prepared(server.GenericAPIServer, kube)
	}
	return rest.CopyConfig(server.GenericAPIServer.LoopbackClientConfig), ready.Run, nil
}

// signalContext returns a context cancelled by SIGTERM or SIGINT.
func signalContext() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
}
