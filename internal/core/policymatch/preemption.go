package policymatch

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// MayPreempt reports whether the policy described by candidate may take a resource template
// from holder, the policy whose claim the template carries, under the rules of Karmada's design
// "PropagationPolicy Priority and Preemption":
//   - only a policy with spec.preemption Always preempts (empty means Never);
//   - a PropagationPolicy takes a template from a PropagationPolicy of strictly lower
//     spec.priority, and from any ClusterPropagationPolicy whatever its priority;
//   - a ClusterPropagationPolicy takes a template only from a ClusterPropagationPolicy of
//     strictly lower spec.priority, never from a PropagationPolicy;
//   - equal priorities never preempt: the implicit priority (name over labelSelector over kind,
//     Claim.MatchLevel) does not count;
//   - a policy never preempts itself.
//
// Both claims must carry their policy's current spec.priority and candidate its spec.preemption
// (as BestMatch and Preemptor fill them). Whether candidate selects the template, and whether the
// PropagationPolicyPreemption feature gate is on, are the caller's to check. Because the relation
// is a strict order (PropagationPolicies above ClusterPropagationPolicies, then priority), two
// policies can never take a template back and forth.
func MayPreempt(candidate, holder Claim) bool {
	if candidate.Preemption != policyv1alpha1.PreemptAlways || candidate.Same(holder) {
		return false
	}
	switch {
	case candidate.Kind == KindPropagationPolicy && holder.Kind == KindClusterPropagationPolicy:
		return true
	case candidate.Kind == holder.Kind:
		return candidate.Priority > holder.Priority
	default: // a ClusterPropagationPolicy never takes from a PropagationPolicy
		return false
	}
}

// Preemptor returns the policy that takes obj from holder, if any: among the policies that select
// obj and MayPreempt(candidate, holder), the one BestMatch would rank first (PropagationPolicies
// before ClusterPropagationPolicies, then spec.priority, implicit priority and name). Taking the
// best at once means a template moves once, not once per preempting policy. Policies being
// deleted are skipped, and nil entries too. It reports false when no policy may preempt holder.
//
// It does not check the PropagationPolicyPreemption feature gate: with the gate off, callers do
// not call it.
func Preemptor(obj *unstructured.Unstructured, holder Claim, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy) (Claim, bool) {
	if obj == nil || !anyPreempts(pps, cpps) {
		// Most policies never preempt: skip matching their selectors.
		return Claim{}, false
	}
	return bestAmong(obj, pps, cpps, func(c Claim) bool { return MayPreempt(c, holder) })
}

// anyPreempts reports whether some policy has preemption: Always.
func anyPreempts(pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy) bool {
	for _, p := range pps {
		if p != nil && p.Spec.Preemption == policyv1alpha1.PreemptAlways {
			return true
		}
	}
	for _, p := range cpps {
		if p != nil && p.Spec.Preemption == policyv1alpha1.PreemptAlways {
			return true
		}
	}
	return false
}
