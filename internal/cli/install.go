package cli

import (
	"bytes"
	"encoding/pem"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	certutil "k8s.io/client-go/util/cert"

	"github.com/flotilla-io/flotilla/internal/controlplane"
)

// installOptions are the flags of `flotilla install`.
type installOptions struct {
	kubeconfig, context string
	webhookURL          string
	webhookService      string
	webhookCertDir      string
	webhookCABundle     string
	adapterService      string
	adapterExternalName string
	adapterCABundle     string
	searchService       string
	searchExternalName  string
	searchCABundle      string
	dryRun              bool
	output              string
	// notes are told on stderr once the flags are read.
	notes []string
}

func newInstallCommand() *cobra.Command {
	o := &installOptions{}
	cmd := &cobra.Command{
		Use:   "install",
		Short: "Prepare any Kubernetes API server as a Flotilla control plane",
		Long: `Install or upgrade Flotilla on a kube-apiserver it does not embed (1.30 or
later), as 'karmadactl init' prepares Karmada's: the Karmada CRDs, the
namespaces karmada-system and karmada-cluster, the RBAC of each component
(ClusterRole and ClusterRoleBinding flotilla:<component>, bound to the
ServiceAccount karmada-system/flotilla-<component> and to the user
system:flotilla:<component>), Pull-mode registration (kube-public/cluster-info
and the bootstrap RBAC, with the server and CA of the kubeconfig), and, when
asked, the admission webhooks of 'flotilla webhook' and the APIServices of
'flotilla metrics-adapter' and 'flotilla search'. It is idempotent: run it again to upgrade.

The webhook is reached by URL (--webhook-url, for a webhook outside the
cluster) or by Service (--webhook-service). Its serving certificate is read
from --webhook-cert-dir (tls.crt, tls.key and the CA in ca.crt); when the
directory holds none, install issues a self-signed CA and a certificate for
the webhook's host there, to give to 'flotilla webhook --cert-dir'.
--webhook-ca-bundle uses a CA of your own instead.

--dry-run -o yaml prints everything install would apply, and writes nothing.`,
		Example: `  # A control plane on a bare kube-apiserver, the webhook on this host
  flotilla install --kubeconfig cp.config --webhook-url https://127.0.0.1:8443 --webhook-cert-dir ./webhook-certs
  flotilla webhook --kubeconfig cp.config --secure-port 8443 --cert-dir ./webhook-certs

  # In a host cluster, the webhook and metrics adapter behind Services
  flotilla install --kubeconfig cp.config --webhook-service karmada-system/flotilla-webhook:443 \
      --webhook-ca-bundle ca.crt --metrics-adapter-service karmada-system/flotilla-metrics-adapter:443

  # What would be applied
  flotilla install --kubeconfig cp.config --dry-run -o yaml`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return o.run(cmd) },
	}
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the API server to prepare (default: $KUBECONFIG, else ~/.kube/config)")
	f.StringVar(&o.context, "context", "", "kubeconfig context (default: the current context)")
	f.StringVar(&o.webhookURL, "webhook-url", "", "register 'flotilla webhook' at this https://host:port")
	f.StringVar(&o.webhookService, "webhook-service", "", "register 'flotilla webhook' behind this Service: namespace/name:port")
	f.StringVar(&o.webhookCertDir, "webhook-cert-dir", "", "directory of the webhook's serving certificate (tls.crt, tls.key, ca.crt); issued there when empty")
	f.StringVar(&o.webhookCABundle, "webhook-ca-bundle", "", "PEM file of the CA that verifies the webhook's certificate (instead of --webhook-cert-dir)")
	f.StringVar(&o.adapterService, "metrics-adapter-service", "", "register 'flotilla metrics-adapter' behind this Service as the metrics APIs: namespace/name:port")
	f.StringVar(&o.adapterExternalName, "metrics-adapter-external-name", "", "also write that Service, of type ExternalName, pointing at this host (an adapter outside the cluster network)")
	f.StringVar(&o.adapterCABundle, "metrics-adapter-ca-bundle", "", "PEM file of the CA that verifies the metrics adapter's certificate (default: not verified)")
	f.StringVar(&o.searchService, "search-service", "", "register 'flotilla search' behind this Service as search.karmada.io/v1alpha1: namespace/name:port")
	f.StringVar(&o.searchExternalName, "search-external-name", "", "also write that Service, of type ExternalName, pointing at this host (a search server outside the cluster network)")
	f.StringVar(&o.searchCABundle, "search-ca-bundle", "", "PEM file of the CA that verifies the search server's certificate (default: not verified)")
	f.BoolVar(&o.dryRun, "dry-run", false, "print what would be applied (with -o yaml) and write nothing")
	f.StringVarP(&o.output, "output", "o", "", "with --dry-run: yaml")
	return cmd
}

func (o *installOptions) run(cmd *cobra.Command) error {
	if o.output != "" && o.output != "yaml" {
		return usageError{fmt.Errorf("--output %q: only yaml is supported", o.output)}
	}
	if o.output != "" && !o.dryRun {
		return usageError{fmt.Errorf("-o yaml goes with --dry-run")}
	}
	cfg, err := loadKubeconfig(o.kubeconfig, o.context)
	if err != nil {
		return fmt.Errorf("load the kubeconfig of the API server to prepare (set --kubeconfig): %w", err)
	}
	opts := controlplane.InstallOptions{Server: cfg.Host}
	if opts.CAPEM, err = caData(cfg); err != nil {
		return err
	}
	if opts.Webhook, err = o.webhook(); err != nil {
		return err
	}
	if opts.MetricsAdapter, err = serviceTarget("metrics-adapter", o.adapterService, o.adapterExternalName, o.adapterCABundle); err != nil {
		return err
	}
	if opts.Search, err = serviceTarget("search", o.searchService, o.searchExternalName, o.searchCABundle); err != nil {
		return err
	}
	if err := opts.Validate(); err != nil {
		return usageError{err}
	}
	for _, n := range o.notes {
		fmt.Fprintln(cmd.ErrOrStderr(), n)
	}
	if opts.Webhook == nil && !o.dryRun {
		fmt.Fprintln(cmd.ErrOrStderr(), "no --webhook-url or --webhook-service: webhook registrations already there are left as they are")
	}
	out := cmd.OutOrStdout()
	if o.dryRun {
		if o.output == "" {
			objs, err := controlplane.Objects(opts)
			if err != nil {
				return err
			}
			fmt.Fprintf(out, "would install the Karmada CRDs and %d more objects on %s (add -o yaml to see them)\n", len(objs), cfg.Host)
			return nil
		}
		return controlplane.PrintObjects(out, opts)
	}
	ctx, cancel := context2(cmd, 3*time.Minute)
	defer cancel()
	fmt.Fprintf(out, "installing Flotilla on %s\n", cfg.Host)
	if err := controlplane.Install(ctx, cfg, opts, func(s string) { fmt.Fprintf(out, "  %s\n", s) }); err != nil {
		return err
	}
	next := fmt.Sprintf("'%[1]s controller-manager', '%[1]s scheduler'", self())
	if opts.Webhook != nil {
		next += fmt.Sprintf(", '%s webhook'", self())
	}
	fmt.Fprintf(out, "Flotilla is installed. Next: run %s with this kubeconfig, then '%s join' the members.\n", next, self())
	return nil
}

// webhook reads the webhook flags; nil when no webhook is registered.
func (o *installOptions) webhook() (*controlplane.WebhookTarget, error) {
	if o.webhookURL == "" && o.webhookService == "" {
		if o.webhookCertDir != "" || o.webhookCABundle != "" {
			return nil, usageError{fmt.Errorf("--webhook-cert-dir and --webhook-ca-bundle need --webhook-url or --webhook-service")}
		}
		return nil, nil
	}
	if o.webhookURL != "" && o.webhookService != "" {
		return nil, usageError{fmt.Errorf("give --webhook-url or --webhook-service, not both")}
	}
	if (o.webhookCertDir == "") == (o.webhookCABundle == "") {
		return nil, usageError{fmt.Errorf("give --webhook-cert-dir (install issues a certificate there if it has none) or --webhook-ca-bundle (your own CA)")}
	}
	t := &controlplane.WebhookTarget{URL: o.webhookURL}
	var hosts []string
	if o.webhookService != "" {
		svc, err := controlplane.ParseServiceTarget(o.webhookService)
		if err != nil {
			return nil, usageError{fmt.Errorf("--webhook-service: %w", err)}
		}
		t.Service = svc
		hosts = []string{svc.Name + "." + svc.Namespace + ".svc", svc.Name + "." + svc.Namespace + ".svc.cluster.local"}
	} else {
		u, err := url.Parse(o.webhookURL)
		if err != nil || u.Scheme != "https" || u.Hostname() == "" {
			return nil, usageError{fmt.Errorf("--webhook-url %q: want https://host:port", o.webhookURL)}
		}
		hosts = []string{u.Hostname()}
	}
	var err error
	if o.webhookCABundle != "" {
		if t.CABundle, err = os.ReadFile(o.webhookCABundle); err != nil {
			return nil, fmt.Errorf("--webhook-ca-bundle: %w", err)
		}
		return t, nil
	}
	issued := !fileExists(filepath.Join(o.webhookCertDir, "tls.crt"))
	if t.CABundle, err = ensureServingCert(o.webhookCertDir, hosts, o.dryRun); err != nil {
		return nil, fmt.Errorf("the webhook's certificate in %s: %w", o.webhookCertDir, err)
	}
	switch {
	case issued && o.dryRun:
		o.notes = append(o.notes, fmt.Sprintf("warning: no certificate in %s yet, and a dry run issues none: the webhooks' caBundle shown is a placeholder; run install for real, or give --webhook-ca-bundle, before applying this output", o.webhookCertDir))
	case issued:
		o.notes = append(o.notes, fmt.Sprintf("issued a self-signed CA and the webhook's serving certificate (valid one year) into %s: give it to 'flotilla webhook --cert-dir'", o.webhookCertDir))
	}
	return t, nil
}

// ensureServingCert returns the CA (PEM) of the serving certificate in dir
// (tls.crt, tls.key, ca.crt), issuing a self-signed CA and a certificate
// for hosts there when dir holds none. With dryRun nothing is written and a
// placeholder CA is returned for a missing certificate.
func ensureServingCert(dir string, hosts []string, dryRun bool) ([]byte, error) {
	crt, key, caPath := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key"), filepath.Join(dir, "ca.crt")
	if fileExists(crt) && fileExists(key) {
		ca, err := os.ReadFile(caPath)
		if err != nil {
			return nil, fmt.Errorf("tls.crt and tls.key are there but not the CA that signed them (ca.crt): %w", err)
		}
		return ca, nil
	}
	if dryRun {
		return []byte("(issued by install)"), nil
	}
	var ips []net.IP
	var dns []string
	for _, h := range hosts {
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
		} else {
			dns = append(dns, h)
		}
	}
	certPEM, keyPEM, err := certutil.GenerateSelfSignedCertKey(hosts[0], ips, dns)
	if err != nil {
		return nil, err
	}
	// The first block is the serving certificate, the last the CA that signed it.
	var blocks [][]byte
	for rest := certPEM; ; {
		var b *pem.Block
		if b, rest = pem.Decode(rest); b == nil {
			break
		}
		blocks = append(blocks, pem.EncodeToMemory(b))
	}
	if len(blocks) < 2 {
		return nil, fmt.Errorf("the issued certificate has no CA")
	}
	ca := blocks[len(blocks)-1]
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	for path, data := range map[string][]byte{crt: bytes.Join(blocks[:len(blocks)-1], nil), key: keyPEM, caPath: ca} {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return nil, err
		}
	}
	return ca, nil
}

// loadKubeconfig loads a client config as kubectl does: path when set,
// else $KUBECONFIG, else ~/.kube/config, else the in-cluster config; context
// "" is the current one. Requests are allowed 100/s (burst 200).
func loadKubeconfig(path, context string) (*rest.Config, error) {
	rules := clientcmd.NewDefaultClientConfigLoadingRules()
	rules.ExplicitPath = path
	cfg, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: context}).ClientConfig()
	if err != nil {
		return nil, err
	}
	cfg.QPS, cfg.Burst = 100, 200
	return cfg, nil
}

// serviceTarget reads the flags --<prefix>-service, --<prefix>-external-name
// and --<prefix>-ca-bundle of an aggregated API server: nil when the service
// is not given (then neither may the other two be).
func serviceTarget(prefix, service, externalName, caBundle string) (*controlplane.ServiceTarget, error) {
	if service == "" {
		if externalName != "" || caBundle != "" {
			return nil, usageError{fmt.Errorf("--%[1]s-external-name and --%[1]s-ca-bundle need --%[1]s-service", prefix)}
		}
		return nil, nil
	}
	t, err := controlplane.ParseServiceTarget(service)
	if err != nil {
		return nil, usageError{fmt.Errorf("--%s-service: %w", prefix, err)}
	}
	t.ExternalName = externalName
	if caBundle != "" {
		if t.CABundle, err = os.ReadFile(caBundle); err != nil {
			return nil, fmt.Errorf("--%s-ca-bundle: %w", prefix, err)
		}
	}
	return t, nil
}
