package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

func newDownCommand() *cobra.Command {
	var dataDir string
	var timeout time.Duration
	cmd := &cobra.Command{
		Use:   "down",
		Short: "Stop a local stack started with 'flotilla up'",
		Long: `Stop the local stack that runs from --data-dir: every component is stopped
cleanly (controllers first, API servers last). Data stays in the data dir, so a
later 'flotilla up' brings every object back.`,
		Example: `  flotilla down
  flotilla down --data-dir /tmp/fl`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			abs, err := filepath.Abs(dataDir)
			if err != nil {
				return err
			}
			stopped, err := localstack.Down(abs, timeout)
			if err != nil {
				return err
			}
			if !stopped {
				if _, err := os.Stat(abs); os.IsNotExist(err) {
					// Most likely a mistyped --data-dir: fail, so a script
					// can tell it from a stack that was stopped.
					return fmt.Errorf("no stack data in %s: the directory does not exist (check --data-dir)", abs)
				}
				fmt.Fprintf(cmd.OutOrStdout(), "no stack is running from %s\n", abs)
				return nil
			}
			fmt.Fprintf(cmd.OutOrStdout(), "stopped the stack in %s (data kept)\n", abs)
			return nil
		},
	}
	cmd.Flags().StringVar(&dataDir, "data-dir", defaultDataDir(), "data dir of the stack to stop")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Minute, "how long to wait for a clean stop before killing")
	return cmd
}
