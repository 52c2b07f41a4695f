// Package cli holds flotilla's cobra commands. Each command keeps its flags
// in an options struct with Complete, Validate and Run.
package cli

import (
	"fmt"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// NewRootCommand returns the `flotilla` command with every subcommand.
func NewRootCommand() *cobra.Command {
	root := &cobra.Command{
		Use:   "flotilla",
		Short: "Flotilla: Karmada-compatible multi-cluster Kubernetes orchestration",
		Long: `Flotilla runs one Kubernetes-native control plane for many clusters. Apply
ordinary manifests plus Karmada policies (PropagationPolicy, OverridePolicy, ...)
with kubectl; Flotilla places them on member clusters, keeps them in sync and
reports their status back.`,
		Example: `  # Start a local control plane with three simulated member clusters
  flotilla up

  # Use it
  export KUBECONFIG=~/.flotilla/karmada.config
  kubectl get ns`,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			// controller-runtime logs through klog, like the Kubernetes
			// components it runs beside.
			ctrl.SetLogger(klog.NewKlogr())
			if f := cmd.Flags().Lookup("version"); cmd.HasParent() && f != nil && f.Changed {
				return fmt.Errorf("--version belongs to flotilla itself, not to %q: run 'flotilla --version' or 'flotilla version'", cmd.CommandPath())
			}
			return nil
		},
	}
	// The Kubernetes libraries register a global --version flag (with a
	// =vX.Y.Z form that means nothing here); cobra shows it on every
	// command. Keep it out of help.
	if pflag.CommandLine.Lookup("version") != nil {
		_ = pflag.CommandLine.MarkHidden("version")
		root.Flags().Bool("version", false, "print the version and exit")
	}
	// The Kubernetes libraries register a global --version flag of their
	// own type; honour it on the root command instead of printing help.
	root.Args = cobra.NoArgs
	root.Run = func(cmd *cobra.Command, _ []string) {
		if f := cmd.Flags().Lookup("version"); f != nil && f.Changed {
			printVersion(cmd.OutOrStdout())
			return
		}
		_ = cmd.Help()
	}
	root.AddCommand(newUpCommand(), newDownCommand(), newControllerManagerCommand(), newSchedulerCommand(), newVersionCommand(), newComponentCommand())
	return root
}
