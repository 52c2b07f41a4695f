package election

import (
	"strings"
	"testing"
	"time"

	"github.com/spf13/pflag"
	ctrl "sigs.k8s.io/controller-runtime"
)

func TestFlagsHaveKarmadasDefaultsAndApplyToTheManager(t *testing.T) {
	var c Config
	fl := pflag.NewFlagSet("x", pflag.ContinueOnError)
	c.AddFlags(fl, "agent")
	if err := fl.Parse(nil); err != nil {
		t.Fatal(err)
	}
	c.Lease = AgentLease("member1")
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}
	var o ctrl.Options
	c.Apply(&o)
	if !o.LeaderElection || o.LeaderElectionID != "karmada-agent-member1" || o.LeaderElectionNamespace != "karmada-system" ||
		*o.LeaseDuration != 15*time.Second || *o.RenewDeadline != 10*time.Second || *o.RetryPeriod != 2*time.Second || !o.LeaderElectionReleaseOnCancel {
		t.Errorf("applied %+v", o)
	}
	if err := fl.Parse([]string{"--leader-elect-renew-deadline=20s"}); err != nil {
		t.Fatal(err)
	}
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "must be less than --leader-elect-lease-duration") {
		t.Errorf("a renew deadline above the lease duration: %v", err)
	}
	c.Elect = false
	if err := c.Validate(); err != nil {
		t.Errorf("without an election nothing is checked: %v", err)
	}
}
