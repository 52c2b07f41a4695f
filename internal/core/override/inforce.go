package override

import (
	"sync"

	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Validity keeps from effect the override policies that break a rule CEL
// cannot express (policyv1alpha1.ValidateOverrideSpec: label and annotation
// syntax, JSON patch values, image components). Karmada's webhook refuses
// such a policy, so it never takes effect there; Flotilla stores it, reports
// it with a ValidationFailed event, and applies it nowhere, as if refused.
// Verdicts are remembered per policy uid and generation, so each version is
// checked once. The zero value is ready to use and safe for concurrent use.
type Validity struct {
	verdicts sync.Map // types.UID -> verdict
}

type verdict struct {
	generation int64
	valid      bool
}

// InForce returns the policies of ops and cops that are valid, in order.
func (v *Validity) InForce(ops []*policyv1alpha1.OverridePolicy, cops []*policyv1alpha1.ClusterOverridePolicy) ([]*policyv1alpha1.OverridePolicy, []*policyv1alpha1.ClusterOverridePolicy) {
	keptOps := ops[:0:0]
	for _, p := range ops {
		if p != nil && v.valid(p.UID, p.Generation, &p.Spec) {
			keptOps = append(keptOps, p)
		}
	}
	keptCops := cops[:0:0]
	for _, p := range cops {
		if p != nil && v.valid(p.UID, p.Generation, &p.Spec) {
			keptCops = append(keptCops, p)
		}
	}
	return keptOps, keptCops
}

func (v *Validity) valid(uid types.UID, generation int64, spec *policyv1alpha1.OverrideSpec) bool {
	if uid != "" {
		if got, ok := v.verdicts.Load(uid); ok && got.(verdict).generation == generation {
			return got.(verdict).valid
		}
	}
	ok := len(policyv1alpha1.ValidateOverrideSpec(spec)) == 0
	if uid != "" {
		v.verdicts.Store(uid, verdict{generation: generation, valid: ok})
	}
	return ok
}
