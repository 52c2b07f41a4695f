package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	"github.com/spf13/cobra"
	"k8s.io/component-base/version"
)

// Version is flotilla's own version, set at build time with
// -ldflags "-X github.com/flotilla-io/flotilla/internal/cli.Version=v0.1.0";
// a development build reports the VCS revision when Go recorded one.
var Version = "dev"

func printVersion(w io.Writer) {
	v := Version
	if info, ok := debug.ReadBuildInfo(); ok && v == "dev" {
		for _, s := range info.Settings {
			if s.Key == "vcs.revision" && len(s.Value) >= 12 {
				v = "dev-" + s.Value[:12]
			}
		}
	}
	fmt.Fprintf(w, "flotilla %s (Kubernetes %s, Karmada API compatible with v1.7 to v1.19)\n", v, version.Get().GitVersion)
}

func newVersionCommand() *cobra.Command {
	return &cobra.Command{
		Use:     "version",
		Short:   "Print flotilla's version and the Kubernetes version it embeds",
		Example: "  flotilla version",
		Args:    cobra.NoArgs,
		Run:     func(cmd *cobra.Command, _ []string) { printVersion(cmd.OutOrStdout()) },
	}
}
