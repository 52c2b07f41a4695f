package hpa

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
)

// The controller manager's flags for the FederatedHPA controller: Karmada's names, which are
// kube-controller-manager's names for the HPA controller.
const (
	SyncPeriodFlag                   = "horizontal-pod-autoscaler-sync-period"
	ToleranceFlag                    = "horizontal-pod-autoscaler-tolerance"
	CPUInitializationPeriodFlag      = "horizontal-pod-autoscaler-cpu-initialization-period"
	InitialReadinessDelayFlag        = "horizontal-pod-autoscaler-initial-readiness-delay"
	DownscaleStabilizationWindowFlag = "horizontal-pod-autoscaler-downscale-stabilization"
)

// The defaults of Config, Karmada's and Kubernetes'.
const (
	DefaultSyncPeriod                   = 15 * time.Second
	DefaultTolerance                    = 0.1
	DefaultCPUInitializationPeriod      = 5 * time.Minute
	DefaultInitialReadinessDelay        = 30 * time.Second
	DefaultDownscaleStabilizationWindow = 5 * time.Minute
)

// Config is the FederatedHPA controller's tuning, one field per controller-manager flag.
type Config struct {
	// SyncPeriod is how often every FederatedHPA is re-evaluated
	// (--horizontal-pod-autoscaler-sync-period; default 15s).
	SyncPeriod time.Duration
	// Tolerance is how far, as a fraction, the ratio of a metric's current value to its target
	// may stray from 1.0 before a new replica count is proposed
	// (--horizontal-pod-autoscaler-tolerance; default 0.1, that is 10%). A FederatedHPA's
	// behavior.scaleUp.tolerance and behavior.scaleDown.tolerance override it per direction.
	Tolerance float64
	// CPUInitializationPeriod is how long after a pod starts its CPU samples may be skipped:
	// while in it, a pod counts as unready unless it is Ready and its sample was taken a full
	// metric window after it became Ready
	// (--horizontal-pod-autoscaler-cpu-initialization-period; default 5m).
	CPUInitializationPeriod time.Duration
	// InitialReadinessDelay is how long after a pod starts a readiness change still counts as
	// the first one: after the CPU initialization period, an unready pod whose readiness last
	// changed within this delay of its start has never been ready, and its CPU sample is
	// skipped (--horizontal-pod-autoscaler-initial-readiness-delay; default 30s).
	InitialReadinessDelay time.Duration
	// DownscaleStabilizationWindow is how far back the autoscaler looks so as not to scale
	// below any recommendation it made in that time: the window of a FederatedHPA without
	// behavior, and of a behavior.scaleDown without stabilizationWindowSeconds
	// (--horizontal-pod-autoscaler-downscale-stabilization; default 5m).
	DownscaleStabilizationWindow time.Duration
}

// DefaultConfig returns the Config of the defaults above.
func DefaultConfig() Config {
	return Config{
		SyncPeriod:                   DefaultSyncPeriod,
		Tolerance:                    DefaultTolerance,
		CPUInitializationPeriod:      DefaultCPUInitializationPeriod,
		InitialReadinessDelay:        DefaultInitialReadinessDelay,
		DownscaleStabilizationWindow: DefaultDownscaleStabilizationWindow,
	}
}

// AddFlags registers the five --horizontal-pod-autoscaler-* flags on fs, bound to c's fields,
// with c's current values as their defaults (start from DefaultConfig).
func (c *Config) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&c.SyncPeriod, SyncPeriodFlag, c.SyncPeriod,
		"how often every FederatedHPA is re-evaluated")
	fs.Float64Var(&c.Tolerance, ToleranceFlag, c.Tolerance,
		"how far (as a fraction) the ratio of a metric's value to its target may stray from 1.0 before the FederatedHPA proposes a new replica count")
	fs.DurationVar(&c.CPUInitializationPeriod, CPUInitializationPeriodFlag, c.CPUInitializationPeriod,
		"how long after a pod starts its CPU samples may be skipped as not yet representative")
	fs.DurationVar(&c.InitialReadinessDelay, InitialReadinessDelayFlag, c.InitialReadinessDelay,
		"how long after a pod starts a change of its readiness still counts as the first one")
	fs.DurationVar(&c.DownscaleStabilizationWindow, DownscaleStabilizationWindowFlag, c.DownscaleStabilizationWindow,
		"how far back a FederatedHPA looks so as not to scale below any recommendation it made in that time (when its behavior sets no scale-down window)")
}

// Validate reports the first setting that cannot work: a sync period that is not positive, or
// a negative tolerance or duration. The error names the flag.
func (c Config) Validate() error {
	switch {
	case c.SyncPeriod <= 0:
		return fmt.Errorf("--%s must be positive, not %v", SyncPeriodFlag, c.SyncPeriod)
	case c.Tolerance < 0:
		return fmt.Errorf("--%s must not be negative, not %v", ToleranceFlag, c.Tolerance)
	case c.CPUInitializationPeriod < 0:
		return fmt.Errorf("--%s must not be negative, not %v", CPUInitializationPeriodFlag, c.CPUInitializationPeriod)
	case c.InitialReadinessDelay < 0:
		return fmt.Errorf("--%s must not be negative, not %v", InitialReadinessDelayFlag, c.InitialReadinessDelay)
	case c.DownscaleStabilizationWindow < 0:
		return fmt.Errorf("--%s must not be negative, not %v", DownscaleStabilizationWindowFlag, c.DownscaleStabilizationWindow)
	}
	return nil
}
