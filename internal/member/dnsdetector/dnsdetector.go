// Package dnsdetector is Karmada's service name resolution detector
// (service-name-resolution-detector-example, its coredns detector): beside a
// member cluster, it looks a service name up every period and reports the
// result on the member's Cluster in the control plane as the condition
// ServiceDomainNameResolutionReady, with reason
// ServiceDomainNameResolutionReady or ServiceDomainNameResolutionFailed.
// A change is reported only once it has lasted its threshold (the success
// threshold to turn True, the failure threshold to turn False); the first
// observation is reported at once. A Remedy matching the condition then
// takes the cluster out of traffic (remedy controller).
//
// Karmada runs one detector per node (a DaemonSet), stores each node's
// result as a Node condition in the member and lets the elected one write
// False when every node fails. Flotilla runs one detector per member (its
// replicas elect one through a Lease in the member) and writes the
// cluster's condition from its own lookups: no Node conditions.
package dnsdetector

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/pflag"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// Karmada's names: the condition type and its reasons.
const (
	ConditionType = "ServiceDomainNameResolutionReady"
	ReasonReady   = "ServiceDomainNameResolutionReady"
	ReasonFailed  = "ServiceDomainNameResolutionFailed"
)

// Defaults of Karmada's flags (--coredns-detect-period,
// --coredns-success-threshold, --coredns-failure-threshold) and the name it
// looks up.
const (
	DefaultPeriod           = 5 * time.Second
	DefaultSuccessThreshold = 30 * time.Second
	DefaultFailureThreshold = 30 * time.Second
	DefaultHost             = "kubernetes.default"
)

// Thresholds turns lookups into the condition to report: a status differing
// from the one reported is reported once it has been observed for its
// threshold without a break. The zero value reports every observation.
type Thresholds struct {
	// Success is how long lookups must succeed before a False condition
	// turns True; Failure how long they must fail before True turns False.
	Success, Failure time.Duration

	reported *metav1.Condition
	pending  metav1.ConditionStatus // the differing status being timed
	since    time.Time              // when pending was first observed
}

// Observe takes one lookup's result (nil: it resolved) at now and returns
// the condition to report. Its LastTransitionTime is when the reported
// status last changed.
func (t *Thresholds) Observe(now time.Time, lookupErr error) metav1.Condition {
	observed := metav1.Condition{Type: ConditionType, Status: metav1.ConditionTrue, Reason: ReasonReady,
		Message: "service domain names resolve", LastTransitionTime: metav1.NewTime(now)}
	if lookupErr != nil {
		observed.Status, observed.Reason = metav1.ConditionFalse, ReasonFailed
		observed.Message = "service domain names do not resolve: " + lookupErr.Error()
	}
	if t.reported == nil {
		t.reported = &observed
		return observed
	}
	if observed.Status == t.reported.Status {
		t.pending = ""
		observed.LastTransitionTime = t.reported.LastTransitionTime
		t.reported = &observed
		return observed
	}
	if t.pending != observed.Status {
		t.pending, t.since = observed.Status, now
	}
	threshold := t.Failure
	if observed.Status == metav1.ConditionTrue {
		threshold = t.Success
	}
	if now.Sub(t.since) < threshold {
		return *t.reported
	}
	t.pending = ""
	t.reported = &observed
	return observed
}

// Detector looks Host up every Period and writes the condition.
type Detector struct {
	// Host is the name looked up (Karmada's is kubernetes.default).
	Host string
	// Period is the time between lookups; a lookup that takes longer fails.
	Period time.Duration
	Thresholds
	// Lookup resolves a name; nil uses the system resolver.
	Lookup func(ctx context.Context, host string) error
	// Clock is the time source (nil: the real clock).
	Clock clock.PassiveClock
	// Current, if set, returns the condition the Cluster has now; Run
	// starts from it, so that a restarted detector still waits out the
	// threshold before changing it.
	Current func(context.Context) *metav1.Condition
}

// Seed makes c the reported condition, as if observed before: a differing
// observation must last its threshold to replace it. A nil c changes nothing.
func (t *Thresholds) Seed(c *metav1.Condition) {
	if c != nil && t.reported == nil {
		cp := *c
		t.reported = &cp
	}
}

// Run looks up and reports until ctx ends. write records a condition on the
// Cluster (it is called for every lookup; it should write only a change).
// A write error is logged by the caller's write and retried next period.
func (d *Detector) Run(ctx context.Context, write func(context.Context, metav1.Condition) error) {
	lookup := d.Lookup
	if lookup == nil {
		lookup = func(ctx context.Context, host string) error {
			_, err := net.DefaultResolver.LookupHost(ctx, host)
			return err
		}
	}
	clk := d.Clock
	if clk == nil {
		clk = clock.RealClock{}
	}
	period := d.Period
	if period <= 0 {
		period = DefaultPeriod
	}
	if d.Current != nil {
		d.Seed(d.Current(ctx))
	}
	t := time.NewTicker(period)
	defer t.Stop()
	for {
		lctx, cancel := context.WithTimeout(ctx, period)
		err := lookup(lctx, d.Host)
		cancel()
		if ctx.Err() != nil {
			return
		}
		if err != nil {
			err = fmt.Errorf("look up %s: %w", d.Host, err)
		}
		_ = write(ctx, d.Observe(clk.Now(), err))
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// Differs says whether conds lacks want, or has it with another status,
// reason or message: whether the Cluster needs writing.
func Differs(conds []metav1.Condition, want metav1.Condition) bool {
	c := meta.FindStatusCondition(conds, want.Type)
	return c == nil || c.Status != want.Status || c.Reason != want.Reason || c.Message != want.Message
}

// Options are Karmada's coredns detector flags, and the name looked up.
type Options struct {
	// Period, SuccessThreshold and FailureThreshold are
	// --coredns-detect-period, --coredns-success-threshold and
	// --coredns-failure-threshold.
	Period, SuccessThreshold, FailureThreshold time.Duration
	// StaleThreshold is --coredns-stale-threshold: accepted for Karmada's
	// manifests; it ages Karmada's Node conditions, which Flotilla does not
	// write.
	StaleThreshold time.Duration
	// Host is --coredns-detect-host (Flotilla's): the name looked up.
	Host string
}

// AddFlags adds the options' flags, with Karmada's defaults.
func (o *Options) AddFlags(fs *pflag.FlagSet) {
	fs.DurationVar(&o.Period, "coredns-detect-period", DefaultPeriod, "how often the service name is looked up")
	fs.DurationVar(&o.SuccessThreshold, "coredns-success-threshold", DefaultSuccessThreshold, "how long lookups must succeed before ServiceDomainNameResolutionReady turns True again")
	fs.DurationVar(&o.FailureThreshold, "coredns-failure-threshold", DefaultFailureThreshold, "how long lookups must fail before ServiceDomainNameResolutionReady turns False")
	fs.DurationVar(&o.StaleThreshold, "coredns-stale-threshold", time.Minute, "accepted for Karmada's manifests; unused (Flotilla writes no Node conditions)")
	fs.StringVar(&o.Host, "coredns-detect-host", DefaultHost, "the service name looked up (Karmada's is kubernetes.default)")
}

// Validate returns what is wrong with the options.
func (o *Options) Validate() error {
	switch {
	case o.Period <= 0:
		return fmt.Errorf("--coredns-detect-period must be positive, not %s", o.Period)
	case o.SuccessThreshold < 0 || o.FailureThreshold < 0:
		return fmt.Errorf("--coredns-success-threshold and --coredns-failure-threshold must not be negative")
	case o.Host == "":
		return fmt.Errorf("--coredns-detect-host must name a host")
	}
	return nil
}

// Detector returns the detector the options describe.
func (o *Options) Detector() *Detector {
	return &Detector{Host: o.Host, Period: o.Period, Thresholds: Thresholds{Success: o.SuccessThreshold, Failure: o.FailureThreshold}}
}

// ClusterCondition returns a Detector.Current reading the condition from
// the Cluster named cluster through c; nil when it cannot be read or is not
// there.
func ClusterCondition(c client.Client, cluster string) func(context.Context) *metav1.Condition {
	return func(ctx context.Context) *metav1.Condition {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
			return nil
		}
		return meta.FindStatusCondition(cl.Status.Conditions, ConditionType)
	}
}

// ClusterWriter returns a write for Detector.Run that sets the condition on
// the Cluster named cluster, through c (the control plane), when it differs
// from what the Cluster has. A Cluster that does not exist, or is being
// deleted, is skipped; other errors are returned (the next period retries).
func ClusterWriter(c client.Client, cluster string) func(context.Context, metav1.Condition) error {
	return func(ctx context.Context, cond metav1.Condition) error {
		cl := &clusterv1alpha1.Cluster{}
		if err := c.Get(ctx, client.ObjectKey{Name: cluster}, cl); err != nil {
			if apierrors.IsNotFound(err) {
				klog.FromContext(ctx).Info("No Cluster of this name on the control plane; the condition is not written", "cluster", cluster)
				return nil
			}
			klog.FromContext(ctx).Error(err, "Read the Cluster", "cluster", cluster)
			return err
		}
		if !cl.DeletionTimestamp.IsZero() || !Differs(cl.Status.Conditions, cond) {
			return nil
		}
		meta.SetStatusCondition(&cl.Status.Conditions, cond)
		if err := c.Status().Update(ctx, cl); err != nil {
			klog.FromContext(ctx).Error(err, "Write the Cluster's condition", "cluster", cluster, "condition", cond.Type, "status", cond.Status)
			return err
		}
		klog.FromContext(ctx).Info("Service name resolution", "cluster", cluster, "status", cond.Status, "reason", cond.Reason, "message", cond.Message)
		return nil
	}
}
