package cli

import (
	"context"
	"fmt"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/kubernetes"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/internal/app/dashboard"
)

func newDashboardCommand() *cobra.Command {
	o := &dashboard.Options{}
	cmd := &cobra.Command{
		Use:   "dashboard",
		Short: "Serve the web dashboard of the fleet (started by 'flotilla up')",
		Long: `Serve a web dashboard of the control plane over HTTPS: the fleet (every
Cluster, trouble first, by region and zone), the workloads (templates × clusters:
replicas, applied, health), each template's story (what 'flotilla explain'
says, with its events on one timeline), policies, autoscaling, operations in
progress and the components' metrics. Pages redraw as the control plane
changes.

Users sign in with a bearer token, or with a client certificate signed by
--client-ca-file. Every read and action runs as that user (their token, or
impersonation of the certificate's subject with the dashboard's own
credentials), so the control plane's RBAC decides what each one sees and may do.
There is no anonymous access.

'flotilla up' runs one and prints its address; 'flotilla dashboard token'
prints a token to sign in with.`,
		Example: `  flotilla dashboard --kubeconfig ~/.flotilla/clusters/control-plane/admin.kubeconfig \
    --secure-port 8443 --tls-cert-file serving.crt --tls-private-key-file serving.key \
    --client-ca-file ca.crt --metrics-url controller-manager=http://127.0.0.1:8080/metrics

  # A token for the local stack's administrator
  flotilla dashboard token`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := o.Validate(); err != nil {
				return usageError{err}
			}
			ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			cfg, err := dashboard.LoadConfig(*o)
			if err != nil {
				return err
			}
			s, err := dashboard.New(cfg, *o)
			if err != nil {
				return err
			}
			return s.Run(klog.NewContext(ctx, klog.Background()))
		},
	}
	o.AddFlags(cmd.Flags())
	cmd.AddCommand(newDashboardTokenCommand())
	return cmd
}

func newDashboardTokenCommand() *cobra.Command {
	var cp controlPlaneFlags
	var account string
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Print a bearer token to sign in to the dashboard with",
		Long: `Print a bearer token of a ServiceAccount of the control plane (a TokenRequest),
to paste into the dashboard's sign-in page. By default the account is
` + dashboard.AdminNamespace + `/` + dashboard.AdminServiceAccount + `, which this command creates when
missing and binds to cluster-admin: it needs a kubeconfig allowed to do that
(the local stack's is). With --service-account, the account must exist and its
RBAC is what the dashboard will allow.`,
		Example: `  flotilla dashboard token
  flotilla dashboard token --service-account shop/viewer --duration 1h`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ns, name, ok := strings.Cut(account, "/")
			if !ok || ns == "" || name == "" {
				return usageError{fmt.Errorf("--service-account %q: want NAMESPACE/NAME", account)}
			}
			if ttl < 10*time.Minute {
				return usageError{fmt.Errorf("--duration %s: a token lasts at least 10m", ttl)}
			}
			cfg, err := cp.clientConfig().ClientConfig()
			if err != nil {
				return fmt.Errorf("the control plane's kubeconfig: %w", err)
			}
			kc, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return err
			}
			ctx, cancel := context2(cmd, 30*time.Second)
			defer cancel()
			admin := account == dashboard.AdminNamespace+"/"+dashboard.AdminServiceAccount
			token, expires, err := dashboard.Token(ctx, kc, ns, name, ttl, admin)
			if err != nil {
				return err
			}
			fmt.Fprintln(cmd.OutOrStdout(), token)
			fmt.Fprintf(cmd.ErrOrStderr(), "# token of ServiceAccount %s, valid until %s\n", account, expires.Local().Format(time.RFC3339))
			return nil
		},
	}
	cp.add(cmd)
	cmd.Flags().StringVar(&account, "service-account", dashboard.AdminNamespace+"/"+dashboard.AdminServiceAccount, "NAMESPACE/NAME of the ServiceAccount to sign in as")
	cmd.Flags().DurationVar(&ttl, "duration", 8*time.Hour, "how long the token is valid (at least 10m; the API server may cap it)")
	return cmd
}
