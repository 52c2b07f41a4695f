package hpa

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"k8s.io/apimachinery/pkg/api/resource"
)

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestConfigFlags(t *testing.T) {
	t.Run("the five flags, with Karmada's names and defaults", func(t *testing.T) {
		cfg := DefaultConfig()
		fs := pflag.NewFlagSet("controller-manager", pflag.ContinueOnError)
		cfg.AddFlags(fs)
		got := map[string]string{}
		fs.VisitAll(func(f *pflag.Flag) { got[f.Name] = f.DefValue })
		want := map[string]string{
			"horizontal-pod-autoscaler-sync-period":               "15s",
			"horizontal-pod-autoscaler-tolerance":                 "0.1",
			"horizontal-pod-autoscaler-cpu-initialization-period": "5m0s",
			"horizontal-pod-autoscaler-initial-readiness-delay":   "30s",
			"horizontal-pod-autoscaler-downscale-stabilization":   "5m0s",
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("flags and defaults (-want +got):\n%s", diff)
		}
	})

	t.Run("parsed values land in the Config", func(t *testing.T) {
		cfg := DefaultConfig()
		fs := pflag.NewFlagSet("controller-manager", pflag.ContinueOnError)
		cfg.AddFlags(fs)
		err := fs.Parse([]string{
			"--horizontal-pod-autoscaler-sync-period=5s",
			"--horizontal-pod-autoscaler-tolerance=0.05",
			"--horizontal-pod-autoscaler-cpu-initialization-period=10s",
			"--horizontal-pod-autoscaler-initial-readiness-delay=1s",
			"--horizontal-pod-autoscaler-downscale-stabilization=20s",
		})
		if err != nil {
			t.Fatal(err)
		}
		want := Config{SyncPeriod: 5 * time.Second, Tolerance: 0.05, CPUInitializationPeriod: 10 * time.Second,
			InitialReadinessDelay: time.Second, DownscaleStabilizationWindow: 20 * time.Second}
		if diff := cmp.Diff(want, cfg); diff != "" {
			t.Errorf("config (-want +got):\n%s", diff)
		}
	})
}

func TestConfigValidate(t *testing.T) {
	if err := DefaultConfig().Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	tests := []struct {
		name     string
		edit     func(*Config)
		wantFlag string
	}{
		{"a zero sync period", func(c *Config) { c.SyncPeriod = 0 }, SyncPeriodFlag},
		{"a negative tolerance", func(c *Config) { c.Tolerance = -0.1 }, ToleranceFlag},
		{"a negative CPU initialization period", func(c *Config) { c.CPUInitializationPeriod = -time.Second }, CPUInitializationPeriodFlag},
		{"a negative readiness delay", func(c *Config) { c.InitialReadinessDelay = -time.Second }, InitialReadinessDelayFlag},
		{"a negative stabilization window", func(c *Config) { c.DownscaleStabilizationWindow = -time.Second }, DownscaleStabilizationWindowFlag},
	}
	for _, tc := range tests {
		t.Run(tc.name+" is refused, naming the flag", func(t *testing.T) {
			cfg := DefaultConfig()
			tc.edit(&cfg)
			err := cfg.Validate()
			if err == nil || !strings.Contains(err.Error(), "--"+tc.wantFlag) {
				t.Errorf("Validate() = %v, want an error naming --%s", err, tc.wantFlag)
			}
		})
	}
}

func TestTolerancesFor(t *testing.T) {
	if got := TolerancesFor(nil, 0.1); got != (Tolerances{0.1, 0.1}) {
		t.Errorf("no behavior: %v", got)
	}
	b := behaviorWithTolerances("50m", "")
	if got := TolerancesFor(b, 0.1); got != (Tolerances{ScaleDown: 0.05, ScaleUp: 0.1}) {
		t.Errorf("scaleDown tolerance 5%%: %v", got)
	}
	b = behaviorWithTolerances("", "20m")
	if got := TolerancesFor(b, 0.1); got != (Tolerances{ScaleDown: 0.1, ScaleUp: 0.02}) {
		t.Errorf("scaleUp tolerance 2%%: %v", got)
	}
}
