package cli

import (
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"

	"github.com/flotilla-io/flotilla/internal/member/register"
)

func newTokenCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "token",
		Short: "Manage bootstrap tokens for registering Pull-mode clusters",
		Long: `Manage the control plane's bootstrap tokens, as 'karmadactl token' does. A
bootstrap token lets 'flotilla register' discover the control plane (its CA
and address, from the signed kube-public/cluster-info) and ask for the
Pull-mode agent's own certificate. Tokens are Secrets
kube-system/bootstrap-token-<id>; they expire after their TTL.`,
		Example: `  flotilla token create --print-register-command
  flotilla token list
  flotilla token delete abcdef`,
		// An unknown subcommand is an error, not a request for help.
		Args: cobra.NoArgs,
		Run:  func(cmd *cobra.Command, _ []string) { _ = cmd.Help() },
	}
	cmd.AddCommand(newTokenCreateCommand(), newTokenListCommand(), newTokenDeleteCommand())
	return cmd
}

// tokenCreateOptions are the flags of `flotilla token create`.
type tokenCreateOptions struct {
	cp                   controlPlaneFlags
	ttl                  time.Duration
	description          string
	printRegisterCommand bool
}

func newTokenCreateCommand() *cobra.Command {
	o := &tokenCreateOptions{}
	cmd := &cobra.Command{
		Use:   "create",
		Short: "Create a bootstrap token for 'flotilla register'",
		Long: `Create a bootstrap token on the control plane and print it, as
'karmadactl token create' does. First the control plane is prepared for
registration (idempotent): the public kube-public/cluster-info ConfigMap with
its address and CA, and the RBAC that lets the token ask for agent
certificates, which the agentcsrapproving controller approves.

--ttl 0 makes a token that never expires. --print-register-command prints the
whole 'flotilla register' command, with the CA hash that pins the control
plane.`,
		Example: `  flotilla token create
  flotilla token create --ttl 2h --description "for prod-eu" --print-register-command`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if o.ttl < 0 {
				return usageError{fmt.Errorf("--ttl must be positive, or 0 for a token that never expires; got %s", o.ttl)}
			}
			return o.run(cmd)
		},
	}
	o.cp.add(cmd)
	f := cmd.Flags()
	f.DurationVar(&o.ttl, "ttl", 24*time.Hour, "how long the token lasts before it is deleted (0: never expires)")
	f.StringVar(&o.description, "description", "", "a human-readable description of what the token is for")
	f.BoolVar(&o.printRegisterCommand, "print-register-command", false, "print the full 'flotilla register' command instead of the token alone")
	return cmd
}

func (o *tokenCreateOptions) run(cmd *cobra.Command) error {
	cfg, cs, err := o.cp.kubeClient()
	if err != nil {
		return err
	}
	ca, err := caData(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context2(cmd, time.Minute)
	defer cancel()
	if err := register.EnsureControlPlane(ctx, cs, cfg.Host, ca); err != nil {
		return err
	}
	token, err := register.CreateToken(ctx, cs, o.ttl, o.description)
	if err != nil {
		return err
	}
	out := cmd.OutOrStdout()
	if !o.printRegisterCommand {
		fmt.Fprintln(out, token)
		return nil
	}
	hash, err := register.CACertHash(ca)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s register %s --token %s --discovery-token-ca-cert-hash %s\n", self(), hostPort(cfg.Host), token, hash)
	return nil
}

// kubeClient is the control plane's config and a client-go clientset.
func (f controlPlaneFlags) kubeClient() (*rest.Config, kubernetes.Interface, error) {
	cfg, err := f.restConfig()
	if err != nil {
		return nil, nil, err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("control plane client: %w", err)
	}
	return cfg, cs, nil
}

// caData is the PEM CA the kubeconfig trusts for the server.
func caData(cfg *rest.Config) ([]byte, error) {
	if len(cfg.CAData) > 0 {
		return cfg.CAData, nil
	}
	if cfg.CAFile != "" {
		ca, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("read the control plane's CA: %w", err)
		}
		return ca, nil
	}
	return nil, fmt.Errorf("the control plane's kubeconfig names no CA (certificate-authority-data or certificate-authority): register needs one to pin")
}

// hostPort is the host:port of an API server URL, as register takes it.
func hostPort(server string) string {
	if u, err := url.Parse(server); err == nil && u.Host != "" {
		return u.Host
	}
	return server
}

func newTokenListCommand() *cobra.Command {
	var cp controlPlaneFlags
	cmd := &cobra.Command{
		Use:     "list",
		Short:   "List the control plane's bootstrap tokens",
		Long:    `List the control plane's bootstrap tokens, as 'karmadactl token list' does, expired ones included.`,
		Example: `  flotilla token list`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, cs, err := cp.kubeClient()
			if err != nil {
				return err
			}
			ctx, cancel := context2(cmd, time.Minute)
			defer cancel()
			tokens, err := register.ListTokens(ctx, cs)
			if err != nil {
				return err
			}
			printTokens(cmd.OutOrStdout(), tokens, time.Now())
			return nil
		},
	}
	cp.add(cmd)
	return cmd
}

// printTokens writes tokens as kubectl-style columns: TOKEN, TTL, EXPIRES,
// USAGES, DESCRIPTION, EXTRA GROUPS.
func printTokens(w io.Writer, tokens []register.Token, now time.Time) {
	tw := tabwriter.NewWriter(w, 0, 8, 3, ' ', 0)
	fmt.Fprintln(tw, "TOKEN\tTTL\tEXPIRES\tUSAGES\tDESCRIPTION\tEXTRA GROUPS")
	for _, t := range tokens {
		ttl, expires := "<forever>", "<never>"
		if t.Expires != nil {
			expires = t.Expires.Format(time.RFC3339)
			if left := t.Expires.Sub(now); left > 0 {
				ttl = duration.ShortHumanDuration(left)
			} else {
				ttl = "<expired>"
			}
		}
		desc := t.Description
		if desc == "" {
			desc = "<none>"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", t.Token, ttl, expires, orNone(strings.Join(t.Usages, ",")), desc, orNone(strings.Join(t.ExtraGroups, ",")))
	}
	_ = tw.Flush()
}

func orNone(s string) string {
	if s == "" {
		return "<none>"
	}
	return s
}

func newTokenDeleteCommand() *cobra.Command {
	var cp controlPlaneFlags
	cmd := &cobra.Command{
		Use:   "delete TOKEN_OR_ID",
		Short: "Delete a bootstrap token",
		Long: `Delete a bootstrap token, given whole (<id>.<secret>) or by its id, as
'karmadactl token delete' does. Clusters already registered with it keep their
certificates.`,
		Example: `  flotilla token delete abcdef.0123456789abcdef
  flotilla token delete abcdef`,
		Args: exactArgs(1, "a token or a token id"),
		RunE: func(cmd *cobra.Command, args []string) error {
			_, cs, err := cp.kubeClient()
			if err != nil {
				return err
			}
			ctx, cancel := context2(cmd, time.Minute)
			defer cancel()
			if err := register.DeleteToken(ctx, cs, args[0]); err != nil {
				return err
			}
			fmt.Fprintf(cmd.OutOrStdout(), "bootstrap token %q deleted\n", args[0])
			return nil
		},
	}
	cp.add(cmd)
	return cmd
}
