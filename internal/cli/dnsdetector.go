package cli

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/uuid"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	componentbaseconfig "k8s.io/component-base/config"
	componentbaseoptions "k8s.io/component-base/config/options"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/internal/controlplane"
	"github.com/flotilla-io/flotilla/internal/localstack"
	"github.com/flotilla-io/flotilla/internal/member/dnsdetector"
)

// newDNSDetectorCommand is Karmada's service-name-resolution-detector (its
// coredns detector), beside one member cluster.
func newDNSDetectorCommand() *cobra.Command {
	var (
		o                                 dnsdetector.Options
		cluster, hostName, bindAddress    string
		kubeconfig, kubeContext           string
		karmadaKubeconfig, karmadaContext string
		healthzPort                       int
		detectors                         []string
		logs                              *logsapi.LoggingConfiguration
		election                          = componentbaseconfig.LeaderElectionConfiguration{
			LeaderElect: true, ResourceLock: resourcelock.LeasesResourceLock,
			ResourceName: "cluster-problem-detector", ResourceNamespace: metav1.NamespaceSystem,
			LeaseDuration: metav1.Duration{Duration: 15 * time.Second}, RenewDeadline: metav1.Duration{Duration: 10 * time.Second},
			RetryPeriod: metav1.Duration{Duration: 2 * time.Second},
		}
	)
	cmd := &cobra.Command{
		Use:   "service-name-resolution-detector --cluster-name NAME --karmada-kubeconfig CONTROL_PLANE_KUBECONFIG",
		Short: "Report whether a member resolves service names, for Remedies (Karmada's service-name-resolution-detector)",
		Long: `Look a service name up every --coredns-detect-period, beside a member cluster, and
write the result on its Cluster in the control plane as the condition
ServiceDomainNameResolutionReady (reasons ServiceDomainNameResolutionReady and
ServiceDomainNameResolutionFailed). A change is written once it has lasted
--coredns-success-threshold (to True) or --coredns-failure-threshold (to False).
A Remedy matching that condition takes the cluster out of traffic.

Run it in the member (or where the member's DNS answers), one or more replicas:
with --leader-elect they elect one through a Lease in the member
(--leader-elect-resource-namespace/--leader-elect-resource-name-coredns-detector).
Karmada runs one per node and keeps Node conditions; this runs one per cluster
and keeps none. A Pull-mode agent runs the same detector with
--service-name-resolution-detection.`,
		Example: `  # In member2, looking up kubernetes.default
  flotilla service-name-resolution-detector --cluster-name member2 \
    --karmada-kubeconfig karmada.config --coredns-detect-period 5s

  # Beside the local stack's member2 (no cluster DNS there: look up localhost)
  flotilla service-name-resolution-detector --cluster-name member2 \
    --karmada-kubeconfig ~/.flotilla/karmada.config --leader-elect=false \
    --coredns-detect-host localhost --healthz-port 0`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyLogging(logs); err != nil {
				return err
			}
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			for _, d := range detectors {
				if d != "*" && d != "coredns" && d != "-coredns" {
					return usageError{fmt.Errorf("--detectors: unknown detector %q (the one detector is coredns)", d)}
				}
				if d == "-coredns" {
					return usageError{fmt.Errorf("--detectors=-coredns leaves nothing to run")}
				}
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			ctx = klog.NewContext(ctx, klog.Background().WithValues("cluster", cluster))
			cp, err := localstack.RESTConfig(karmadaKubeconfig, karmadaContext)
			if err != nil {
				return err
			}
			c, err := client.New(cp, client.Options{Scheme: controlplane.NewScheme()})
			if err != nil {
				return err
			}
			if err := checkJoined(ctx, c, cluster); err != nil {
				return usageError{fmt.Errorf("--cluster-name: %w", err)}
			}
			if healthzPort > 0 {
				go serveHealthz(ctx, net.JoinHostPort(bindAddress, strconv.Itoa(healthzPort)))
			}
			detector := o.Detector()
			detector.Current = dnsdetector.ClusterCondition(c, cluster)
			write := dnsdetector.ClusterWriter(c, cluster)
			if !election.LeaderElect {
				detector.Run(ctx, write)
				return nil
			}
			member, err := localstack.RESTConfig(kubeconfig, kubeContext)
			if err != nil {
				return fmt.Errorf("--leader-elect takes a Lease in the member: %w (give --kubeconfig, run in the member, or --leader-elect=false)", err)
			}
			cs, err := kubernetes.NewForConfig(member)
			if err != nil {
				return err
			}
			if hostName == "" {
				hostName, _ = os.Hostname()
			}
			lock, err := resourcelock.New(election.ResourceLock, election.ResourceNamespace, election.ResourceName+"-coredns-detector",
				cs.CoreV1(), cs.CoordinationV1(), resourcelock.ResourceLockConfig{Identity: hostName + "_" + string(uuid.NewUUID())})
			if err != nil {
				return err
			}
			lost := make(chan struct{})
			go leaderelection.RunOrDie(ctx, leaderelection.LeaderElectionConfig{
				Lock: lock, ReleaseOnCancel: true, Name: "coredns-detector",
				LeaseDuration: election.LeaseDuration.Duration, RenewDeadline: election.RenewDeadline.Duration, RetryPeriod: election.RetryPeriod.Duration,
				Callbacks: leaderelection.LeaderCallbacks{
					OnStartedLeading: func(ctx context.Context) { detector.Run(ctx, write) },
					OnStoppedLeading: func() { close(lost) },
				},
			})
			select {
			case <-ctx.Done():
				return nil
			case <-lost:
				if ctx.Err() != nil {
					return nil
				}
				return fmt.Errorf("lost the Lease %s/%s-coredns-detector", election.ResourceNamespace, election.ResourceName)
			}
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&cluster, "cluster-name", "", "name of the member cluster on the control plane (required)")
	fl.StringVar(&karmadaKubeconfig, "karmada-kubeconfig", "", "kubeconfig of the control plane (required)")
	fl.StringVar(&karmadaContext, "karmada-context", "", "kubeconfig context of the control plane")
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster, for the Lease (default: in-cluster config or $KUBECONFIG)")
	fl.StringVar(&kubeContext, "context", "", "kubeconfig context of the member cluster")
	fl.StringVar(&hostName, "host-name", "", "this replica's name in the Lease (default: the host name)")
	fl.StringVar(&bindAddress, "bind-address", "127.0.0.1", "the address /healthz is served on")
	fl.IntVar(&healthzPort, "healthz-port", 8081, "the port /healthz is served on; 0 disables")
	fl.StringSliceVar(&detectors, "detectors", []string{"*"}, "detectors to run: * or coredns (the one detector)")
	o.AddFlags(fl)
	componentbaseoptions.BindLeaderElectionFlags(&election, fl)
	logs = addLoggingFlags(fl)
	_ = cmd.MarkFlagRequired("cluster-name")
	_ = cmd.MarkFlagRequired("karmada-kubeconfig")
	return cmd
}

// serveHealthz answers /healthz with ok until ctx ends.
func serveHealthz(ctx context.Context, addr string) {
	mux := http.NewServeMux()
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte("ok")) })
	srv := &http.Server{Addr: addr, Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() { <-ctx.Done(); _ = srv.Close() }()
	if err := srv.ListenAndServe(); err != nil && err != http.ErrServerClosed {
		klog.FromContext(ctx).Error(err, "Serve /healthz", "address", addr)
	}
}
