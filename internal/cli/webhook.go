package cli

import (
	"context"
	"crypto/tls"
	"fmt"
	"os/signal"
	"path/filepath"
	"syscall"

	"github.com/spf13/cobra"
	"k8s.io/client-go/dynamic"
	logsapi "k8s.io/component-base/logs/api/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/webhook"

	"github.com/flotilla-io/flotilla/internal/admission/claim"
	"github.com/flotilla-io/flotilla/internal/admission/defaulting"
	"github.com/flotilla-io/flotilla/internal/admission/validation"
	admissionwebhook "github.com/flotilla-io/flotilla/internal/admission/webhook"
	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// webhookOptions are the flags of `flotilla webhook`, named as
// karmada-webhook's.
type webhookOptions struct {
	kubeconfig, context     string
	bindAddress             string
	securePort              int
	certDir, certName       string
	keyName                 string
	metricsAddr, healthAddr string
	logs                    *logsapi.LoggingConfiguration
}

func newWebhookCommand() *cobra.Command {
	o := &webhookOptions{}
	cmd := &cobra.Command{
		Use:   "webhook",
		Short: "Serve Flotilla's admission checks as webhooks (karmada-webhook)",
		Long: `Serve, over HTTPS, the admission plugins that 'flotilla up' builds into its
control plane's API server, for a control plane Flotilla does not embed
(prepared with 'flotilla install --webhook-url' or '--webhook-service'):

  ` + controlplane.ValidatePath + `         the checks CEL cannot express (cron schedules, time zones, override values)
  ` + controlplane.MutateDefaultsPath + `  the defaults CRDs cannot express (a FederatedHPA's behavior)
  ` + controlplane.MutateClaimPath + `     a new template's claim by its PropagationPolicy, and a new policy's permanent id
  ` + controlplane.MutateValidatePath + `  the checks of ` + controlplane.ValidatePath + ` before the API server's own, so one refusal names every error

It is the same code as the built-in plugins. The serving certificate is read
from --cert-dir (reloaded when it changes). Metrics are served on
--metrics-bind-address and /healthz and /readyz on --health-probe-bind-address;
their defaults (:8080 and :8000) are karmada-webhook's, and :8080 is also the
controller manager's and the scheduler's: on a shared host give each its own.`,
		Example: `  flotilla webhook --kubeconfig cp.config --secure-port 8443 --cert-dir ./webhook-certs`,
		Args:    cobra.NoArgs,
		RunE:    func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the control plane (default: in-cluster config or $KUBECONFIG)")
	f.StringVar(&o.context, "context", "", "kubeconfig context of the control plane (default: the current context)")
	f.StringVar(&o.bindAddress, "bind-address", "0.0.0.0", "address to serve the webhooks on")
	f.IntVar(&o.securePort, "secure-port", 8443, "port to serve the webhooks on (HTTPS)")
	f.StringVar(&o.certDir, "cert-dir", "/tmp/k8s-webhook-server/serving-certs", "directory of the serving certificate and key")
	f.StringVar(&o.certName, "tls-cert-file-name", "tls.crt", "name of the certificate file in --cert-dir")
	f.StringVar(&o.keyName, "tls-private-key-file-name", "tls.key", "name of the key file in --cert-dir")
	f.StringVar(&o.metricsAddr, "metrics-bind-address", ":8080", "address for Prometheus metrics; 0 disables")
	f.StringVar(&o.healthAddr, "health-probe-bind-address", ":8000", "address for /healthz and /readyz; 0 disables")
	o.logs = addLoggingFlags(f)
	return cmd
}

func (o *webhookOptions) run(cmd *cobra.Command) error {
	if err := applyLogging(o.logs); err != nil {
		return err
	}
	cfg, err := loadKubeconfig(o.kubeconfig, o.context)
	if err != nil {
		return fmt.Errorf("load the control plane's kubeconfig (set --kubeconfig): %w", err)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	servingCert, certReloader, err := admissionwebhook.ServingCertificate(filepath.Join(o.certDir, o.certName), filepath.Join(o.certDir, o.keyName), ctrl.Log.WithName("webhook"))
	if err != nil {
		return fmt.Errorf("%w (set --cert-dir to the directory 'flotilla install --webhook-cert-dir' issued the certificate into)", err)
	}
	mgr, err := ctrl.NewManager(cfg, ctrl.Options{
		Scheme: controlplane.NewScheme(),
		WebhookServer: webhook.NewServer(webhook.Options{Host: o.bindAddress, Port: o.securePort,
			TLSOpts: []func(*tls.Config){servingCert}}),
		Metrics:                metricsserver.Options{BindAddress: o.metricsAddr},
		HealthProbeBindAddress: o.healthAddr,
	})
	if err != nil {
		return fmt.Errorf("start the webhook: %w", err)
	}
	if err := mgr.Add(certReloader); err != nil {
		return err
	}
	// Asking the manager for its webhook server is what makes it serve.
	server := mgr.GetWebhookServer()
	dyn, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return err
	}
	claim := claim.New()
	claim.SetDynamicClient(dyn)
	claim.SetRESTMapper(mgr.GetRESTMapper())
	claim.SetDrainedNotification(ctx.Done())
	server.Register(controlplane.ValidatePath, admissionwebhook.Handler(validation.New()))
	server.Register(controlplane.MutateDefaultsPath, admissionwebhook.Handler(defaulting.New()))
	server.Register(controlplane.MutateClaimPath, admissionwebhook.Handler(claim))
	server.Register(controlplane.MutateValidatePath, admissionwebhook.Handler(validation.New()))
	if o.healthAddr != "0" && o.healthAddr != "" {
		if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
			return err
		}
		if err := mgr.AddReadyzCheck("webhook", server.StartedChecker()); err != nil {
			return err
		}
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "serving webhooks on https://%s:%d (%s, %s, %s, %s)\n", o.bindAddress, o.securePort,
		controlplane.ValidatePath, controlplane.MutateDefaultsPath, controlplane.MutateClaimPath, controlplane.MutateValidatePath)
	return mgr.Start(ctx)
}
