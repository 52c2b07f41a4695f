package component

import (
	"fmt"
	"os"

	"github.com/spf13/pflag"
	kwokconfig "sigs.k8s.io/kwok/pkg/config"
	kwokcmd "sigs.k8s.io/kwok/pkg/kwok/cmd"
	kwoklog "sigs.k8s.io/kwok/pkg/log"
)

// RunKwok runs the kwok controller (sigs.k8s.io/kwok, as a library) with the
// given kwok command-line args, which must include --config pointing at a
// file with the stages (written by `flotilla up`). It returns the exit code.
func RunKwok(args []string) int {
	// kwok reads its --config flag from os.Args; present it the args it
	// would see as its own binary.
	os.Args = append([]string{"kwok"}, args...)
	flagset := pflag.NewFlagSet("global", pflag.ContinueOnError)
	flagset.ParseErrorsAllowlist.UnknownFlags = true
	flagset.Usage = func() {}

	ctx, cancel := signalContext()
	defer cancel()
	ctx, _ = kwoklog.InitFlags(ctx, flagset)
	ctx, err := kwokconfig.InitFlags(ctx, flagset)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error: load kwok config:", err)
		return 1
	}
	command := kwokcmd.NewCommand(ctx)
	// The Kubernetes libraries linked into this binary already define a
	// global --version flag of their own type; kwok's cobra --version would
	// clash with it.
	command.Version = ""
	command.PersistentFlags().AddFlagSet(flagset)
	command.SetArgs(args)
	// Report a failure once, as "error: ...", like every flotilla command,
	// not with cobra's own "Error:" line and usage text.
	command.SilenceErrors, command.SilenceUsage = true, true
	if err := command.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "error: kwok exited:", err)
		return 1
	}
	return 0
}
