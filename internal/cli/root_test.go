package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

func TestErrorsArePrintedOnceKubectlStyle(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "typo")
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"an unknown flag points at the command's help": {
			args: []string{"up", "--bogus"},
			want: "error: unknown flag: --bogus\nSee 'flotilla up --help' for usage.\n",
		},
		"a controller-manager flag is unknown to the scheduler": {
			args: []string{"scheduler", "--cluster-status-update-frequency=5s"},
			want: "error: unknown flag: --cluster-status-update-frequency\nSee 'flotilla scheduler --help' for usage.\n",
		},
		"an unexpected argument is a usage mistake": {
			args: []string{"version", "extra"},
			want: "error: unknown command \"extra\" for \"flotilla version\"\nSee 'flotilla version --help' for usage.\n",
		},
		"an unknown subcommand of a command group is an error": {
			args: []string{"token", "nosuch"},
			want: "error: unknown command \"nosuch\" for \"flotilla token\"\nSee 'flotilla token --help' for usage.\n",
		},
		"a failure while running gets no usage hint": {
			args: []string{"down", "--data-dir", missing},
			want: "error: no stack data in " + missing + ": the directory does not exist (check --data-dir)\n",
		},
	} {
		t.Run(name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := execute(NewRootCommand(), tc.args, &stderr); code != 1 {
				t.Errorf("exit code %d, want 1", code)
			}
			if diff := cmp.Diff(tc.want, stderr.String()); diff != "" {
				t.Errorf("stderr (-want +got):\n%s", diff)
			}
		})
	}
}

func TestSchedulerAndControllerManagerEachHaveOnlyTheirOwnFlags(t *testing.T) {
	flags := func(use string) []string {
		var names []string
		for _, c := range NewRootCommand().Commands() {
			if c.Name() == use {
				c.Flags().VisitAll(func(f *pflag.Flag) { names = append(names, f.Name) })
			}
		}
		return names
	}
	// pflag visits flags sorted by name.
	logging := []string{"log-flush-frequency", "log-json-info-buffer-size", "log-json-split-stream", "log-text-info-buffer-size", "log-text-split-stream", "logging-format"}
	want := map[string][]string{
		"scheduler": slices.Concat([]string{"context", "enable-scheduler-estimator", "feature-gates", "health-probe-bind-address", "kubeconfig", "leader-elect", "leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-resource-namespace", "leader-elect-retry-period"}, logging,
			[]string{"metrics-bind-address", "profiling-bind-address", "scheduler-estimator-timeout", "v", "vmodule"}),
		"controller-manager": slices.Concat([]string{"cluster-failure-threshold", "cluster-profile-namespace", "cluster-status-update-frequency", "cluster-success-threshold", "concurrent-cluster-syncs", "context", "controllers", "cronfederatedhpa-missed-run-window", "descheduling-interval", "enable-no-execute-taint-eviction", "enable-scheduler-estimator", "enable-taint-manager",
			"fast-path-born-scheduled", "fast-path-handoff", "fast-path-preschedule", "fast-path-read-your-writes", "fast-path-status-gate",
			"feature-gates", "federated-resource-quota-sync-period", "graceful-eviction-timeout", "health-probe-bind-address",
			"horizontal-pod-autoscaler-cpu-initialization-period", "horizontal-pod-autoscaler-downscale-stabilization", "horizontal-pod-autoscaler-initial-readiness-delay", "horizontal-pod-autoscaler-sync-period", "horizontal-pod-autoscaler-tolerance", "kubeconfig", "leader-elect", "leader-elect-lease-duration", "leader-elect-renew-deadline", "leader-elect-resource-namespace", "leader-elect-retry-period"},
			logging, []string{"mci-lb-pool", "mci-lb-port", "mcs-lb-pool", "metrics-bind-address", "multicluster-provider", "no-execute-taint-eviction-purge-mode", "profiling-bind-address", "provider-ingress-class", "resource-eviction-rate", "scheduler-estimator-timeout", "skipped-propagating-namespaces", "unschedulable-threshold", "v", "vmodule"}),
	}
	for use, w := range want {
		if diff := cmp.Diff(w, flags(use)); diff != "" {
			t.Errorf("flotilla %s flags (-want +got):\n%s", use, diff)
		}
	}
}

func TestComponentsServeMetricsProbesAndJSONLogsByDefaultAsKarmada(t *testing.T) {
	// Karmada's defaults: metrics on :8080; probes on :10357
	// (karmada-controller-manager, karmada-agent) and :10351
	// (karmada-scheduler); logs in text unless --logging-format=json.
	want := map[string]map[string]string{
		"controller-manager": {"metrics-bind-address": ":8080", "health-probe-bind-address": ":10357", "logging-format": "text"},
		"scheduler":          {"metrics-bind-address": ":8080", "health-probe-bind-address": ":10351", "logging-format": "text"},
		"agent":              {"metrics-bind-address": ":8080", "health-probe-bind-address": ":10357", "logging-format": "text"},
	}
	for _, c := range NewRootCommand().Commands() {
		flags, ok := want[c.Name()]
		if !ok {
			continue
		}
		delete(want, c.Name())
		for name, def := range flags {
			f := c.Flags().Lookup(name)
			if f == nil || f.DefValue != def {
				t.Errorf("flotilla %s --%s: got %+v, want default %q", c.Name(), name, f, def)
			}
		}
		if f := c.Flags().Lookup("logging-format"); f == nil || !strings.Contains(f.Usage, `"json"`) {
			t.Errorf("flotilla %s --logging-format does not offer json: %+v", c.Name(), f)
		}
	}
	if len(want) > 0 {
		t.Errorf("commands not found: %v", want)
	}
}

// TestSchedulerStartsWithItsDefaults runs the scheduler, which shares the
// controller manager's start-up but not all its flags, with nothing but a
// kubeconfig that does not exist: it must get past the flag checks with its
// defaults and fail on the kubeconfig. (Only one such run fits in a process:
// the logging configuration is applied once.)
func TestSchedulerStartsWithItsDefaults(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no-such-kubeconfig")
	var stderr bytes.Buffer
	code := execute(NewRootCommand(), []string{"scheduler", "--kubeconfig", missing, "--metrics-bind-address", "0", "--health-probe-bind-address", "0"}, &stderr)
	if code != 1 || !strings.Contains(stderr.String(), missing) || strings.Contains(stderr.String(), "See '") {
		t.Errorf("exit code %d, stderr %q; want 1 and an error about %s alone, past the flag checks", code, stderr.String(), missing)
	}
}

func TestFeatureGates(t *testing.T) {
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"the controller manager refuses an unknown gate by name", []string{"controller-manager", "--feature-gates=NoSuchGate=true"}, "NoSuchGate"},
		{"up refuses an unknown gate before starting anything", []string{"up", "--dry-run", "--data-dir", t.TempDir(), "--feature-gates=NoSuchGate=true"}, "--feature-gates: unrecognized feature gate: NoSuchGate"},
		{"up refuses a value that is not a boolean", []string{"up", "--dry-run", "--data-dir", t.TempDir(), "--feature-gates=PropagationPolicyPreemption=yes please"}, "PropagationPolicyPreemption"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr bytes.Buffer
			if code := execute(NewRootCommand(), tc.args, &stderr); code != 1 || !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("exit code %d, stderr %q; want 1 and an error containing %q", code, stderr.String(), tc.want)
			}
		})
	}
	var out, stderr bytes.Buffer
	root := NewRootCommand()
	root.SetOut(&out)
	if code := execute(root, []string{"up", "--dry-run", "--members", "1", "--data-dir", t.TempDir(), "--feature-gates=PropagationPolicyPreemption=true"}, &stderr); code != 0 {
		t.Fatalf("up --dry-run --feature-gates: exit code %d: %s", code, stderr.String())
	}
	if !strings.Contains(out.String(), "--feature-gates=MultiClusterService=true,PropagationPolicyPreemption=true") {
		t.Errorf("the dry run does not pass the gates to the controller manager:\n%s", out.String())
	}
}

func TestParseTaintsReadsKubectlSyntax(t *testing.T) {
	add, remove, err := parseTaints([]string{"dedicated=gpu:NoSchedule", "spot:PreferNoSchedule", "old:NoExecute-", "gone-"})
	if err != nil {
		t.Fatal(err)
	}
	if len(add) != 2 || add[0].Key != "dedicated" || add[0].Value != "gpu" || add[0].Effect != "NoSchedule" || add[1].Key != "spot" || add[1].Value != "" {
		t.Errorf("add = %+v", add)
	}
	if len(remove) != 2 || remove[0].Key != "old" || remove[0].Effect != "NoExecute" || remove[1].Key != "gone" || remove[1].Effect != "" {
		t.Errorf("remove = %+v", remove)
	}
	for _, bad := range []string{"dedicated=gpu:Sometimes", "dedicated=gpu", ":NoSchedule", "x:Bad-"} {
		if _, _, err := parseTaints([]string{bad}); err == nil {
			t.Errorf("parseTaints(%q) accepted", bad)
		}
	}
}

// TestReportedErrorsExitOneWithoutMore checks the exit of a command that printed its own
// errors beside a partial answer (get or top with one member unreachable): 1, as kubectl's
// after a partial failure, and nothing printed again.
func TestReportedErrorsExitOneWithoutMore(t *testing.T) {
	root := NewRootCommand()
	root.AddCommand(&cobra.Command{Use: "partial", RunE: func(cmd *cobra.Command, _ []string) error {
		cmd.Println("NAME   CLUSTER")
		cmd.PrintErrln("error: cluster member2: connection refused")
		return fmt.Errorf("get: %w", errReported)
	}})
	var stdout, stderr bytes.Buffer
	root.SetOut(&stdout)
	if code := execute(root, []string{"partial"}, &stderr); code != 1 {
		t.Errorf("exit code %d, want 1", code)
	}
	if got, want := stderr.String(), "error: cluster member2: connection refused\n"; got != want {
		t.Errorf("stderr %q, want only what the command printed, %q", got, want)
	}
}
