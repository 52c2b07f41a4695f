package detector

import (
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
)

// activation orders the changes of templates and policies, for Karmada's
// activationPreference: Lazy. A Lazy policy's claim is written at once, but
// its placement reaches a template's binding only when the template itself
// changed after the policy did: the template was created, or a user edited
// it (template.ChangedByUser), after the policy's spec was last seen to
// change.
//
// The order is kept in memory, from the informers' events: one counter
// stamps every change. At start every policy is seen and no template has
// changed, so a restart never activates a pending Lazy change; a template
// edited while the controller manager was down takes the Lazy policy at
// its next change. The zero value is ready to use.
type activation struct {
	seq       atomic.Uint64
	templates sync.Map // templateKey -> uint64, the template's last change
	policies  sync.Map // types.UID -> uint64, the policy's last spec change
}

// templateChanged records a change of the template now.
func (a *activation) templateChanged(key templateKey) { a.templates.Store(key, a.seq.Add(1)) }

// templateGone forgets a deleted template.
func (a *activation) templateGone(key templateKey) { a.templates.Delete(key) }

// policyChanged records a new spec of the policy obj (either kind) now.
func (a *activation) policyChanged(obj any) {
	if uid, ok := policyUID(obj); ok {
		a.policies.Store(uid, a.seq.Add(1))
	}
}

// policyGone forgets a deleted policy.
func (a *activation) policyGone(obj any) {
	if uid, ok := policyUID(obj); ok {
		a.policies.Delete(uid)
	}
}

// changedSince reports whether the template changed after the policy's
// spec last did. A policy not seen yet has just come: its event will
// enqueue the template again, and it counts as newer.
func (a *activation) changedSince(key templateKey, policy types.UID) bool {
	t, ok := a.templates.Load(key)
	if !ok {
		return false
	}
	p, ok := a.policies.Load(policy)
	if !ok {
		return false
	}
	return t.(uint64) > p.(uint64)
}

func policyUID(obj any) (types.UID, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, err := meta.Accessor(obj)
	if err != nil || o.GetUID() == "" {
		return "", false
	}
	return o.GetUID(), true
}
