package integration

import (
	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// lazyCases check Karmada's activationPreference: Lazy: the claim moves at
// once, the policy's placement only when the template itself changes after
// the policy.
var lazyCases = []integrationCase{
	{
		name: "a Lazy policy created for an existing Deployment claims it but propagates it only once the template changes",
		run: func(e *env) {
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			lazy := e.policy("lazy").selecting("Deployment", "web").to("member1").lazy().obj()
			e.create(e.controlPlane, lazy)
			id := e.permanentID(lazy)
			e.waitTemplateClaimedBy(tmpl, id, "lazy", "the template claimed by the Lazy policy")
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}}
			if !e.absent(e.controlPlane, rb) {
				e.Errorf("a binding appeared before the template changed")
			}
			update(e, e.controlPlane, tmpl, touch)
			e.waitBinding("web", "the binding of the Lazy policy, once the template changed", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "lazy", e.ns) && placedOn(b, "member1")
			})
			e.waitCopyIn("member1", tmpl)
		},
	},
	{
		name: "deleting a Lazy policy leaves no claim on the template, and a second, non-lazy policy then propagates it without the template changing",
		run: func(e *env) {
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			lazy := e.policy("lazy").selecting("Deployment", "web").to("member1").lazy().obj()
			e.create(e.controlPlane, lazy)
			id := e.permanentID(lazy)
			e.waitTemplateClaimedBy(tmpl, id, "lazy", "the template claimed by the Lazy policy")
			e.delete(e.controlPlane, lazy)
			waitFor(e, e.controlPlane, tmpl, "the template with no claim left", func(d *appsv1.Deployment) (bool, string) {
				return !hasClaim(d), describe(d.Labels, d.Annotations)
			})
			// The reconcile that released the claim came after the one
			// that wrote it: any binding that one made would exist by now.
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}}
			if !e.absent(e.controlPlane, rb) {
				e.Errorf("the Lazy policy made a binding although the template never changed")
			}

			second := e.policy("second").selecting("Deployment", "web").to("member2").obj()
			e.create(e.controlPlane, second)
			secondID := e.permanentID(second)
			e.waitBinding("web", "the binding of the second policy", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, secondID, "second", e.ns) && placedOn(b, "member2")
			})
			e.waitCopyIn("member2", tmpl)
			if !e.absent(e.members["member1"], &appsv1.Deployment{ObjectMeta: tmpl.ObjectMeta}) {
				e.Errorf("web reached member1, the deleted Lazy policy's cluster")
			}
		},
	},
	{
		name: "a Lazy policy created before its Deployment propagates it at once; a new placement waits for the template to change",
		run: func(e *env) {
			lazy := e.policy("lazy").selecting("Deployment", "web").to("member1").lazy().obj()
			e.create(e.controlPlane, lazy)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			id := e.permanentID(lazy)
			e.waitBinding("web", "the binding of the Lazy policy", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "lazy", e.ns) && placedOn(b, "member1")
			})
			e.waitCopyIn("member1", tmpl)

			update(e, e.controlPlane, lazy, func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member2"}
			})
			// Until the template changes, the binding keeps the placement
			// it has; the next change of the template brings the new one.
			// (The binding is read at once here: the detector may not have
			// seen the policy change yet, so this only shows nothing moved
			// early, not that nothing ever would.)
			if b := e.waitBinding("web", "the binding", func(*workv1alpha2.ResourceBinding) bool { return true }); !placedOn(b, "member1") {
				e.Errorf("the new placement reached the binding before the template changed: %s", describe(b.Spec.Placement))
			}
			update(e, e.controlPlane, tmpl, touch)
			e.waitBinding("web", "the new placement, once the template changed", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "lazy", e.ns) && placedOn(b, "member2")
			})
			e.waitCopyIn("member2", tmpl)
			e.waitCopyGone("member1", tmpl)
		},
	},
	{
		name: "a Lazy policy that preempts takes the claim on template and binding at once, and its placement when the template changes",
		run: func(e *env) {
			first := e.policy("first").selecting("Deployment", "web").to("member1").obj()
			e.create(e.controlPlane, first)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			e.waitBinding("web", "the binding of the first policy", func(b *workv1alpha2.ResourceBinding) bool { return placedOn(b, "member1") })
			e.waitCopyIn("member1", tmpl)

			lazy := e.policy("lazy").selecting("Deployment", "web").to("member2").priority(2).preempting().lazy().obj()
			e.create(e.controlPlane, lazy)
			id := e.permanentID(lazy)
			e.waitBinding("web", "the binding claimed by the Lazy policy, its placement kept", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "lazy", e.ns) && placedOn(b, "member1")
			})
			update(e, e.controlPlane, tmpl, touch)
			e.waitBinding("web", "the Lazy policy's placement, once the template changed", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "lazy", e.ns) && placedOn(b, "member2")
			})
			e.waitCopyIn("member2", tmpl)
			e.waitCopyGone("member1", tmpl)
		},
	},
}

// lazy sets spec.activationPreference to Lazy.
func (b *policyBuilder) lazy() *policyBuilder {
	b.p.Spec.ActivationPreference = policyv1alpha1.LazyActivation
	return b
}

// touch changes a Deployment the way a user would, to wake a Lazy policy:
// a new label.
func touch(d *appsv1.Deployment) {
	if d.Labels == nil {
		d.Labels = map[string]string{}
	}
	d.Labels["refresh-time"] = d.ResourceVersion
}
