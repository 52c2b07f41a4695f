package component

import (
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
	return cli.Run(cmd)
}

// RunScheduler runs kube-scheduler with args until it is signalled, and
// returns the exit code. Only member clusters run one.
func RunScheduler(args []string) int {
	cmd := schedulerapp.NewSchedulerCommand()
	cmd.SetArgs(args)
	return cli.Run(cmd)
}
