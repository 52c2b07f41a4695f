package component

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// NewCommand returns the hidden `flotilla component <kind> ...` commands
// that `flotilla up` runs as child processes: one per localstack.Kind*
// (apiserver, controller-manager, scheduler, kwok, metrics). Arguments pass
// through to the Kubernetes component unchanged, and the process exits with
// its code. cmd/flotilla adds it to the CLI, so that only the binary, not
// internal/cli's tests, links the Kubernetes components.
func NewCommand() *cobra.Command {
	cmd := &cobra.Command{
		Use:    "component",
		Short:  "Run one Kubernetes component of the local stack (used by flotilla up)",
		Hidden: true,
		// An unknown kind is an error, not a request for help.
		Args: cobra.NoArgs,
		Run:  func(cmd *cobra.Command, _ []string) { _ = cmd.Help() },
	}
	run := func(kind string, f func(args []string) int) *cobra.Command {
		return &cobra.Command{
			Use:                kind + " [flags]",
			Short:              "Run " + kind,
			DisableFlagParsing: true,
			Run: func(_ *cobra.Command, args []string) {
				os.Exit(f(args))
			},
		}
	}
	cmd.AddCommand(
		run(localstack.KindAPIServer, runAPIServer),
		run(localstack.KindControllerManager, RunControllerManager),
		run(localstack.KindScheduler, RunScheduler),
		run(localstack.KindKwok, RunKwok),
		run(localstack.KindMetrics, RunMetrics),
		run(localstack.KindLightMembers, runLightMembers),
	)
	return cmd
}

// runAPIServer splits `--etcd-* flags -- kube-apiserver flags`. Without
// --etcd-data-dir no etcd is embedded and kube-apiserver's own
// --etcd-servers reaches an etcd cluster (the Helm chart's).
func runAPIServer(args []string) int {
	split := len(args)
	for i, a := range args {
		if a == "--" {
			split = i
			break
		}
	}
	fs := flag.NewFlagSet("etcd", flag.ContinueOnError)
	var o EtcdOptions
	etcdFlags(fs, &o)
	fs.BoolVar(&o.ControlPlane, "control-plane", false, "this is the control plane's API server: claim admission plugin, GC tuned for latency")
	if err := fs.Parse(args[:split]); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 2
	}
	rest := []string{}
	if split < len(args) {
		rest = args[split+1:]
	}
	if o.DataDir == "" && !slices.ContainsFunc(rest, func(a string) bool { return strings.HasPrefix(a, "--etcd-servers") }) {
		fmt.Fprintln(os.Stderr, "error: give --etcd-data-dir (an embedded etcd) or kube-apiserver's --etcd-servers after --")
		return 2
	}
	return RunAPIServer(o, rest)
}
