package cli

import (
	"fmt"

	"github.com/spf13/pflag"
	logsapi "k8s.io/component-base/logs/api/v1"
	// The json format of --logging-format.
	_ "k8s.io/component-base/logs/json/register"
)

// addLoggingFlags adds component-base's logging flags, as Karmada's
// components take them: --logging-format (text, the default, or json), -v,
// --vmodule, --log-flush-frequency and the split-stream options. The
// returned configuration is applied with applyLogging when the command runs.
func addLoggingFlags(fs *pflag.FlagSet) *logsapi.LoggingConfiguration {
	c := logsapi.NewLoggingConfiguration()
	logsapi.AddFlags(c, fs)
	return c
}

// applyLogging makes c the process's logging (klog, and through it
// controller-runtime's logger), before anything logs. Errors: an invalid
// combination of flags, such as an unknown format.
func applyLogging(c *logsapi.LoggingConfiguration) error {
	if err := logsapi.ValidateAndApply(c, nil); err != nil {
		return fmt.Errorf("logging flags: %w", err)
	}
	return nil
}
