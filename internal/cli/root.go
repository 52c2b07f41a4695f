// Package cli holds flotilla's cobra commands. Each command keeps its flags
// in an options struct with Complete, Validate and Run.
package cli

import (
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
)

// NewRootCommand returns the `flotilla` command with every subcommand of this
// package, and extra (commands defined elsewhere, such as the local stack's
// `component`, which cmd/flotilla adds).
func NewRootCommand(extra ...*cobra.Command) *cobra.Command {
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
	root.AddCommand(newUpCommand(), newDownCommand(), newControllerManagerCommand(), newSchedulerCommand(), newVersionCommand(), newPromoteCommand(), newMetricsAdapterCommand(), newSearchCommand(), newDashboardCommand(), newInterpretCommand(),
		newJoinCommand(), newUnjoinCommand(), newCordonCommand(true), newCordonCommand(false), newTaintCommand(), newGetCommand(), newTopCommand(), newExplainCommand(),
		newLogsCommand(), newExecCommand(), newAttachCommand(), newDescribeCommand(), newApplyCommand(), newRebalanceCommand(), newRolloutCommand(),
		newTokenCommand(), newRegisterCommand(), newUnregisterCommand(), newAgentCommand(), newDNSDetectorCommand(), newInstallCommand(), newWebhookCommand())
	root.AddCommand(extra...)
	// cobra adds these two lazily, when it runs; add them now so that
	// reportErrorsOnce reaches them too.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	reportErrorsOnce(root)
	return root
}

// Execute runs flotilla (NewRootCommand(extra...)) with the process's arguments and returns its exit
// code. Every failure, cobra's own included (an unknown flag or command, an
// unexpected argument), is printed once to stderr in kubectl's form,
// "error: <message>", followed after a usage mistake by
// "See '<command> --help' for usage.".
func Execute(extra ...*cobra.Command) int {
	return execute(NewRootCommand(extra...), os.Args[1:], os.Stderr)
}

func execute(root *cobra.Command, args []string, stderr io.Writer) int {
	root.SetArgs(args)
	root.SetErr(stderr)
	cmd, err := root.ExecuteC()
	if err == nil {
		return 0
	}
	if errors.Is(err, errReported) {
		return 1
	}
	fmt.Fprintln(stderr, "error:", err)
	if ue := (usageError{}); errors.As(err, &ue) && cmd != nil {
		fmt.Fprintf(stderr, "See '%s --help' for usage.\n", cmd.CommandPath())
	}
	return 1
}

// errReported is returned by a command that has already printed its errors (one per member
// cluster that failed, as kubectl prints one per resource) and printed what the others
// answered: Execute then only exits 1, as kubectl does after a partial failure.
var errReported = errors.New("errors reported above")

// usageError marks a mistake in how a command was called (flags or
// arguments), as opposed to a failure while it ran.
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// reportErrorsOnce leaves error printing to Execute: cobra would otherwise
// print some errors itself ("Error: unknown command ..." from a command with
// subcommands) before Execute prints them again. Flag and argument errors
// become usageErrors so Execute can point at the command's help.
func reportErrorsOnce(cmd *cobra.Command) {
	cmd.SilenceErrors, cmd.SilenceUsage = true, true
	cmd.SetErrPrefix("error:")
	if !cmd.HasParent() {
		cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	}
	if args := cmd.Args; args != nil {
		cmd.Args = func(c *cobra.Command, a []string) error {
			if err := args(c, a); err != nil {
				return usageError{err}
			}
			return nil
		}
	}
	for _, sub := range cmd.Commands() {
		reportErrorsOnce(sub)
	}
}
