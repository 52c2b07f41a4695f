// Package election holds Karmada's leader-election settings, shared by the
// controller manager, the scheduler and the Pull-mode agent: the
// --leader-elect* flags with Karmada's defaults, and the Lease names
// Karmada's components hold (karmada-controller-manager,
// karmada-scheduler, karmada-agent-<cluster>), so that tools and runbooks
// written for Karmada find them.
package election

import (
	"fmt"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
)

// Karmada's Lease names.
const (
	// ControllerManagerLease is karmada-controller-manager's Lease.
	ControllerManagerLease = "karmada-controller-manager"
	// SchedulerLease is karmada-scheduler's Lease (the scheduler run apart).
	SchedulerLease = "karmada-scheduler"
	// SearchLease is held by the flotilla search replica that writes the
	// ResourceRegistries' status (karmada-search has no election: its
	// replicas all write).
	SearchLease = "flotilla-search"
	// DefaultNamespace holds the Leases unless
	// --leader-elect-resource-namespace says otherwise.
	DefaultNamespace = "karmada-system"
)

// AgentLease is the Lease of the agents of one Pull-mode cluster
// (karmada-agent-<cluster>), held on the control plane.
func AgentLease(cluster string) string { return "karmada-agent-" + cluster }

// Config is one component's leader election.
type Config struct {
	// Elect makes replicas elect one active leader (--leader-elect; true
	// by default, as in Karmada). Off, every replica acts.
	Elect bool
	// Lease is the Lease's name (one of the names above).
	Lease string
	// Namespace holds the Lease (--leader-elect-resource-namespace);
	// empty means DefaultNamespace.
	Namespace string
	// LeaseDuration is how long the other replicas wait, after the leader
	// last renewed, before one takes over (--leader-elect-lease-duration,
	// 15s). RenewDeadline is how long the leader keeps retrying to renew
	// before it stops leading (--leader-elect-renew-deadline, 10s).
	// RetryPeriod is the wait between attempts (--leader-elect-retry-period,
	// 2s). Zero values mean these defaults.
	LeaseDuration, RenewDeadline, RetryPeriod time.Duration
}

// AddFlags registers Karmada's --leader-elect flags on fl, into c, with
// Karmada's defaults; what names the component gives the help text.
func (c *Config) AddFlags(fl *pflag.FlagSet, what string) {
	fl.BoolVar(&c.Elect, "leader-elect", true, "elect one active "+what+" among its replicas, holding a Lease on the control plane")
	fl.DurationVar(&c.LeaseDuration, "leader-elect-lease-duration", 15*time.Second,
		"how long the other replicas wait, after the leader last renewed its lease, before one of them takes over")
	fl.DurationVar(&c.RenewDeadline, "leader-elect-renew-deadline", 10*time.Second,
		"how long the leader keeps trying to renew its lease before it stops leading; less than --leader-elect-lease-duration")
	fl.DurationVar(&c.RetryPeriod, "leader-elect-retry-period", 2*time.Second,
		"how long replicas wait between attempts to acquire or renew the lease")
	fl.StringVar(&c.Namespace, "leader-elect-resource-namespace", DefaultNamespace,
		"namespace of the leader-election Lease")
}

// Validate refuses durations an election cannot run with: a renew deadline
// not below the lease duration, or a retry period that is not positive.
// Nothing is checked when Elect is off.
func (c Config) Validate() error {
	if !c.Elect {
		return nil
	}
	d := c.withDefaults()
	if d.RenewDeadline >= d.LeaseDuration || d.RetryPeriod <= 0 {
		return fmt.Errorf("--leader-elect-renew-deadline (%s) must be less than --leader-elect-lease-duration (%s), and --leader-elect-retry-period (%s) positive",
			d.RenewDeadline, d.LeaseDuration, d.RetryPeriod)
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.Namespace == "" {
		c.Namespace = DefaultNamespace
	}
	if c.LeaseDuration == 0 {
		c.LeaseDuration = 15 * time.Second
	}
	if c.RenewDeadline == 0 {
		c.RenewDeadline = 10 * time.Second
	}
	if c.RetryPeriod == 0 {
		c.RetryPeriod = 2 * time.Second
	}
	return c
}

// Apply sets o's leader-election fields from c. A replica that stops on
// purpose hands the Lease over at once (LeaderElectionReleaseOnCancel).
func (c Config) Apply(o *ctrl.Options) {
	d := c.withDefaults()
	o.LeaderElection = d.Elect
	o.LeaderElectionID = d.Lease
	o.LeaderElectionNamespace = d.Namespace
	o.LeaseDuration = &d.LeaseDuration
	o.RenewDeadline = &d.RenewDeadline
	o.RetryPeriod = &d.RetryPeriod
	o.LeaderElectionReleaseOnCancel = true
}
