package component

import (
	"fmt"
	"os"

	"github.com/spf13/cobra"
	"k8s.io/component-base/cli"
	kcmapp "k8s.io/kubernetes/cmd/kube-controller-manager/app"
	schedulerapp "k8s.io/kubernetes/cmd/kube-scheduler/app"
)

// RunControllerManager runs kube-controller-manager with args until it is
// signalled, and returns the exit code. The local stack runs one per member
// with every default controller, and one for the control plane restricted to
// the controllers a Karmada control plane keeps.
func RunControllerManager(args []string) int {
	cmd := kcmapp.NewControllerManagerCommand()
	cmd.SetArgs(args)
	return runCommand(cmd)
}

// RunScheduler runs kube-scheduler with args until it is signalled, and
// returns the exit code. Only member clusters run one.
func RunScheduler(args []string) int {
	cmd := schedulerapp.NewSchedulerCommand()
	cmd.SetArgs(args)
	return runCommand(cmd)
}

// runCommand executes a Kubernetes component's command as component-base's
// cli.Run does (logging flags, flag-name normalisation, usage only after a
// flag error) and returns the exit code, but reports a failure as
// "error: <message>", the convention of every flotilla command and of
// kubectl, where cli.Run prints "Error: ..." or a klog line.
func runCommand(cmd *cobra.Command) int {
	if err := cli.RunNoErrOutput(cmd); err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	return 0
}
