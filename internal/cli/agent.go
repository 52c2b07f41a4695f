package cli

import (
	"context"
	"os/signal"
	"syscall"

	"github.com/spf13/cobra"
	logsapi "k8s.io/component-base/logs/api/v1"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/app/agent"
	"github.com/flotilla-io/flotilla/internal/controller/member/cluster"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/controllerkit/wirecodec"
	"github.com/flotilla-io/flotilla/internal/localstack"
)

func newAgentCommand() *cobra.Command {
	var (
		o                          agent.Options
		kubeconfig, context        string
		karmadaKubeconfig, karmada string
		logs                       *logsapi.LoggingConfiguration
	)
	cmd := &cobra.Command{
		Use:   "agent --cluster-name NAME --kubeconfig MEMBER_KUBECONFIG",
		Short: "Run the Pull-mode agent of one member cluster",
		Long: `Run the agent of a Pull-mode member cluster (Karmada's karmada-agent), beside or
inside that cluster. The control plane does not reach a Pull-mode member: the agent
watches the Works of the cluster's execution namespace (karmada-es-<cluster>) on the
control plane and applies them to the member, with the same code as Push mode
(conflict resolution, retained fields, drift correction), reports their status, and
keeps the Cluster's status and Lease.

Its control-plane credentials are the client certificate 'flotilla register' stored in
the member (Secret karmada-system/karmada-kubeconfig), renewed before it expires; they
reach only this cluster's objects. If the control plane goes away the member keeps
running what it has, nothing is deleted, and the agent catches up when it returns.`,
		Example: `  # After 'flotilla register ... --cluster-name member3 --kubeconfig member3.config'
  flotilla agent --cluster-name member3 --kubeconfig member3.config

  # With topology, and without giving the control plane credentials for the member
  flotilla agent --cluster-name member3 --kubeconfig member3.config \
    --cluster-region eu-west-1 --cluster-zones eu-west-1a --report-secrets None`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := applyLogging(logs); err != nil {
				return err
			}
			ctx, stop := signal.NotifyContext(cmd.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			member, err := localstack.RESTConfig(kubeconfig, context)
			if err != nil {
				return err
			}
			o.Member = member
			if karmadaKubeconfig != "" {
				if o.ControlPlane, err = localstack.RESTConfig(karmadaKubeconfig, karmada); err != nil {
					return err
				}
			}
			return runAgent(klog.NewContext(ctx, klog.Background()), o)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&o.ClusterName, "cluster-name", "", "name of the member cluster on the control plane (required)")
	fl.StringVar(&kubeconfig, "kubeconfig", "", "kubeconfig of the member cluster (default: in-cluster config or $KUBECONFIG)")
	fl.StringVar(&context, "context", "", "kubeconfig context of the member cluster")
	fl.StringVar(&karmadaKubeconfig, "karmada-kubeconfig", "", "kubeconfig of the control plane (default: the member's Secret karmada-system/karmada-kubeconfig, written by 'flotilla register'; its certificate is then renewed there)")
	fl.StringVar(&karmada, "karmada-context", "", "kubeconfig context of the control plane, with --karmada-kubeconfig")
	fl.StringVar(&o.APIEndpoint, "cluster-api-endpoint", "", "the member's API server address recorded in the Cluster (default: the member kubeconfig's server)")
	fl.StringVar(&o.Provider, "cluster-provider", "", "the member's provider, recorded in the Cluster's spec.provider")
	fl.StringVar(&o.Region, "cluster-region", "", "the member's region, recorded in the Cluster's spec.region")
	fl.StringSliceVar(&o.Zones, "cluster-zones", nil, "the member's zones, recorded in the Cluster's spec.zones")
	fl.StringSliceVar(&o.ReportSecrets, "report-secrets", []string{agent.ReportKubeCredentials, agent.ReportKubeImpersonator},
		"credentials for the member to report to the control plane: KubeCredentials (a service account token, used by 'flotilla get' and 'top', the metrics adapter and FederatedHPA when the member is reachable), KubeImpersonator (the token the Cluster proxy impersonates callers with), or None")
	fl.DurationVar(&o.StatusUpdateFrequency, "cluster-status-update-frequency", cluster.DefaultStatusUpdateFrequency, "how often the member is probed for the Cluster's status (and its Lease renewed)")
	fl.DurationVar(&o.FailureThreshold, "cluster-failure-threshold", cluster.DefaultFailureThreshold, "how long the member must keep failing its probes before Ready turns False")
	fl.DurationVar(&o.SuccessThreshold, "cluster-success-threshold", cluster.DefaultSuccessThreshold, "how long the member must keep passing its probes before Ready turns True again")
	fl.StringVar(&o.MetricsAddr, "metrics-bind-address", DefaultMetricsAddr, "address for Prometheus metrics on /metrics (Karmada's metric names); 0 disables")
	fl.StringVar(&o.HealthAddr, "health-probe-bind-address", ":10357", "address for /healthz and /readyz (ready once the informer caches have synced); 0 disables")
	fl.StringVar(&o.PprofAddr, "profiling-bind-address", "0", "address for Go's /debug/pprof endpoints, e.g. 127.0.0.1:6060; 0 disables")
	fl.BoolVar(&o.DNSDetection, "service-name-resolution-detection", false, "run the service name resolution detector for the cluster while this agent leads: the Cluster's ServiceDomainNameResolutionReady condition, which Remedies match (the --coredns-* flags tune it)")
	o.DNS.AddFlags(fl)
	o.Election.AddFlags(fl, "agent of the cluster")
	logs = addLoggingFlags(fl)
	gates := features.New()
	gates.AddFlag(fl)
	o.Features = gates
	_ = cmd.MarkFlagRequired("cluster-name")
	return cmd
}

func runAgent(ctx context.Context, o agent.Options) error {
	if err := o.Election.Validate(); err != nil {
		return usageError{err}
	}
	if err := wirecodec.SetClientGates(features.Or(o.Features).Enabled(features.ClientsAllowCBOR)); err != nil {
		return err
	}
	return agent.Run(ctx, o)
}
