package cli

import (
	"context"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/internal/explain"
)

func newExplainCommand() *cobra.Command {
	var cp controlPlaneFlags
	var namespace string
	cmd := &cobra.Command{
		Use:   "explain KIND NAME [-n NS]",
		Short: "Say why a resource is where it is: policy, placement, rejections, Works, overrides",
		Long: `Explain one resource template in plain words, from what the control plane
records: which policy claims it and why that policy won, how its replicas were
divided, why each other cluster was not chosen, whether each cluster's Work is
applied and healthy, which overrides changed it there, and its recent warnings.
The dashboard (flotilla dashboard) shows the same as a page, with every event.`,
		Example: `  flotilla explain deploy web -n shop
  flotilla explain deployments.apps web -n shop
  flotilla explain clusterrole reader`,
		Args: exactArgs(2, "a kind and a name"),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx, cancel := context2(cmd, 30*time.Second)
			defer cancel()
			if namespace == "" {
				namespace = cp.defaultNamespace()
			}
			return explainTemplate(ctx, cmd.OutOrStdout(), cp, args[0], args[1], namespace)
		},
	}
	cp.add(cmd)
	cmd.Flags().StringVarP(&namespace, "namespace", "n", "", "namespace (default: the context's, else default)")
	return cmd
}

func explainTemplate(ctx context.Context, w io.Writer, cp controlPlaneFlags, kindArg, name, namespace string) error {
	cfg, cl, dyn, err := cp.clients()
	if err != nil {
		return err
	}
	m, err := mapping(target{name: controlPlaneRow, cfg: cfg}, kindArg)
	if err != nil {
		return err
	}
	story, err := explain.Tell(ctx, cl, dyn, explain.Target{Mapping: m, Namespace: namespace, Name: name})
	if err != nil {
		return err
	}
	story.Print(w)
	return nil
}
