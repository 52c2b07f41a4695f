package detector

import (
	"context"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/klog/v2"

	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
)

// preemptPolicy is the operation whose events a preemption raises.
var preemptPolicy = eventrecord.Operation{Succeed: events.PreemptPolicySucceed, Failed: events.PreemptPolicyFailed}

// reportPreemption counts and reports one attempt of dec.policy to take
// tmpl from dec.preempted: err is what writing the claim (or giving the
// preempting policy its permanent id) returned. Races a retry settles are
// not reported; the retry decides again.
func (d *Detector) reportPreemption(ctx context.Context, tmpl *unstructured.Unstructured, dec *decision, err error) {
	if err != nil && (apierrors.IsConflict(err) || apierrors.IsNotFound(err)) {
		return
	}
	from, to := dec.preempted.String(), dec.policy.claim.String()
	if err != nil {
		err = preemptionError{to: to, from: from, err: err}
	}
	metrics.CountPolicyPreemption(err)
	klog.FromContext(ctx).V(1).Info("Preemption", "template", klog.KObj(tmpl), "kind", tmpl.GetKind(), "policy", to, "preempted", from, "err", err)
	d.Events.Happened(preemptPolicy, err, to+" preempted "+from+" and now claims the template", tmpl)
}

// preemptionError is the message of a PreemptPolicyFailed event.
type preemptionError struct {
	to, from string
	err      error
}

func (e preemptionError) Error() string {
	return e.to + " could not preempt " + e.from + ": " + e.err.Error()
}

func (e preemptionError) Unwrap() error { return e.err }

// warnPreemptionOff logs, once per policy and process, that a policy which
// would preempt a template does not because the PropagationPolicyPreemption
// gate is off: otherwise `preemption: Always` fails silently.
func (d *Detector) warnPreemptionOff(ctx context.Context, c policymatch.Claim) {
	key := c.Kind + "/" + c.Namespace + "/" + c.Name
	if _, warned := d.preemptionOffWarned.LoadOrStore(key, true); warned {
		return
	}
	klog.FromContext(ctx).Info("Warning: a policy with preemption: Always outranks the policy holding a template, but the PropagationPolicyPreemption feature gate is off, so it takes nothing; start the controller manager with --feature-gates=PropagationPolicyPreemption=true",
		"kind", c.Kind, "namespace", c.Namespace, "policy", c.Name)
}
