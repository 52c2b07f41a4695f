package detector

import (
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/resourceversion"
	"k8s.io/client-go/tools/cache"
)

// activation orders the changes of templates and policies, for Karmada's
// activationPreference: Lazy. A Lazy policy's claim is written at once, but
// its placement reaches a template's binding only when the template itself
// changed after the policy did: the template was created, or a user edited
// it (template.ChangedByUser), after the policy's spec last changed.
//
// "After" compares the resourceVersions the two changes were written at
// (resourceversion.CompareResourceVersion). On Flotilla's control plane,
// as on Karmada's, templates and policies share one etcd, whose revisions
// order every write: a policy applied just before its templates (one
// kubectl apply) is older than all of them however late its watch event
// reaches the detector. Should a version not be a well-formed revision,
// the order in which the detector saw the two changes decides.
//
// What changed when is kept in memory, from the informers' events. At start
// every policy is seen (at its current version) and no template has
// changed, so a restart never activates a pending Lazy change; a template
// edited while the controller manager was down takes the Lazy policy at
// its next change. The zero value is ready to use.
type activation struct {
	seq       atomic.Uint64
	templates sync.Map // templateKey -> change, the template's last change
	policies  sync.Map // types.UID -> change, the policy's last spec change
}

// change is when something changed: the resourceVersion written, and the
// order in which the detector saw it.
type change struct {
	resourceVersion string
	seen            uint64
}

// templateChanged records a change of the template, written at
// resourceVersion.
func (a *activation) templateChanged(key templateKey, resourceVersion string) {
	a.templates.Store(key, change{resourceVersion: resourceVersion, seen: a.seq.Add(1)})
}

// templateGone forgets a deleted template.
func (a *activation) templateGone(key templateKey) { a.templates.Delete(key) }

// policyChanged records the spec of the policy obj (either kind), as of
// its resourceVersion.
func (a *activation) policyChanged(obj any) {
	if o, ok := policyMeta(obj); ok {
		a.policies.Store(o.GetUID(), change{resourceVersion: o.GetResourceVersion(), seen: a.seq.Add(1)})
	}
}

// policyGone forgets a deleted policy.
func (a *activation) policyGone(obj any) {
	if o, ok := policyMeta(obj); ok {
		a.policies.Delete(o.GetUID())
	}
}

// changedSince reports whether the template changed after the policy's
// spec last did. A policy not seen yet counts as newer: its event will
// enqueue the template again.
func (a *activation) changedSince(key templateKey, policy types.UID) bool {
	t, ok := a.templates.Load(key)
	if !ok {
		return false
	}
	p, ok := a.policies.Load(policy)
	if !ok {
		return false
	}
	tc, pc := t.(change), p.(change)
	if order, err := resourceversion.CompareResourceVersion(tc.resourceVersion, pc.resourceVersion); err == nil {
		return order > 0
	}
	return tc.seen > pc.seen
}

func policyMeta(obj any) (interface {
	GetUID() types.UID
	GetResourceVersion() string
}, bool) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	o, err := meta.Accessor(obj)
	if err != nil || o.GetUID() == "" {
		return nil, false
	}
	return o, true
}
