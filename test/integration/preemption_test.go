package integration

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
)

// preemptionCases check Karmada's policy preemption, which TestControllers
// runs with the PropagationPolicyPreemption gate on (see modes); the gate
// off is TestControllersWithPreemptionOff's.
var preemptionCases = []integrationCase{
	{
		name: "a PropagationPolicy with preemption takes a template from a ClusterPropagationPolicy: the claim is replaced on template and binding, and the Deployment moves",
		run: func(e *env) {
			base := e.policy("base").selecting("Deployment", "").to("member1").cluster()
			e.createClusterScoped(base)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			e.waitBinding("web", "the binding of the ClusterPropagationPolicy", func(b *workv1alpha2.ResourceBinding) bool {
				return b.Annotations[policymatch.ClusterPropagationPolicyNameAnnotation] == base.Name && len(b.Spec.Clusters) == 1
			})
			e.waitCopyIn("member1", tmpl)

			pp := e.policy("nginx-pp").selecting("Deployment", "web").to("member2").priority(10).preempting().obj()
			e.create(e.controlPlane, pp)
			id := e.permanentID(pp)
			e.waitTemplateClaimedBy(tmpl, id, "nginx-pp", "the template claimed by nginx-pp alone")
			e.waitBinding("web", "the binding claimed by nginx-pp alone, with its placement", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "nginx-pp", e.ns) && placedOn(b, "member2")
			})
			e.waitCopyIn("member2", tmpl)
			e.waitCopyGone("member1", tmpl)
			e.waitEvent("web", events.PreemptPolicySucceed, "PropagationPolicy("+e.ns+"/nginx-pp)", "ClusterPropagationPolicy("+base.Name+")")
		},
	},
	{
		name: "a PropagationPolicy of higher priority with preemption takes a template from a lower one; the member copy it keeps is updated in place",
		run: func(e *env) {
			broad := e.policy("broad").selecting("Deployment", "").to("member1").duplicated().obj()
			e.create(e.controlPlane, broad)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			before := e.waitCopyIn("member1", tmpl)
			broadID := e.permanentID(broad)

			pp := e.policy("nginx-pp").selecting("Deployment", "web").to("member1", "member2").duplicated().priority(10).preempting().obj()
			e.create(e.controlPlane, pp)
			id := e.permanentID(pp)
			e.waitTemplateClaimedBy(tmpl, id, "nginx-pp", "the template claimed by nginx-pp alone")
			b := e.waitBinding("web", "the binding claimed by nginx-pp alone, on both members", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "nginx-pp", e.ns) && placedOn(b, "member1", "member2")
			})
			if strings.Contains(describe(b.Labels, b.Annotations), broadID) || strings.Contains(describe(b.Labels, b.Annotations), "broad") {
				e.Errorf("the binding still names the preempted policy: %v %v", b.Labels, b.Annotations)
			}
			e.waitCopyIn("member2", tmpl)
			waitFor(e, e.members["member1"], &appsv1.Deployment{ObjectMeta: tmpl.ObjectMeta}, "web in member1, the same object, named by the new binding",
				func(d *appsv1.Deployment) (bool, string) {
					return d.UID == before.UID && !strings.Contains(describe(d.Labels, d.Annotations), broadID), describe(d.UID, d.Labels, d.Annotations)
				})
			e.waitEvent("web", events.PreemptPolicySucceed, "PropagationPolicy("+e.ns+"/nginx-pp)", "PropagationPolicy("+e.ns+"/broad)")
		},
	},
	{
		name: "a PropagationPolicy of higher priority without preemption never takes a claimed template",
		run: func(e *env) {
			broad := e.policy("broad").selecting("Deployment", "").to("member1").obj()
			e.create(e.controlPlane, broad)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			id := e.permanentID(broad)
			e.waitBinding("web", "the binding of broad", func(b *workv1alpha2.ResourceBinding) bool { return onlyClaimOf(b, id, "broad", e.ns) })
			e.create(e.controlPlane, e.policy("high").selecting("Deployment", "web").to("member2").priority(10).obj())
			e.stillClaimedAfterAChange(tmpl, func(obj client.Object) bool { return onlyClaimOf(obj, id, "broad", e.ns) }, "member1")
		},
	},
	{
		name: "lowering the priority of the policy that holds a template hands it to a preempting policy that now outranks it",
		run: func(e *env) {
			holder := e.policy("holder").selecting("Deployment", "web").to("member1").priority(5).obj()
			e.create(e.controlPlane, holder)
			waiting := e.policy("waiting").selecting("Deployment", "web").to("member2").priority(4).preempting().obj()
			e.create(e.controlPlane, waiting)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			holderID := e.permanentID(holder)
			e.waitBinding("web", "the binding of holder, the higher priority", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, holderID, "holder", e.ns) && placedOn(b, "member1")
			})
			e.waitCopyIn("member1", tmpl)

			update(e, e.controlPlane, holder, func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Priority = ptr.To[int32](3) })
			id := e.permanentID(waiting)
			e.waitTemplateClaimedBy(tmpl, id, "waiting", "the template claimed by waiting")
			e.waitBinding("web", "the binding of waiting, on member2", func(b *workv1alpha2.ResourceBinding) bool {
				return onlyClaimOf(b, id, "waiting", e.ns) && placedOn(b, "member2")
			})
			e.waitCopyIn("member2", tmpl)
			e.waitCopyGone("member1", tmpl)
		},
	},
	{
		name: "a ClusterPropagationPolicy never takes a template from a PropagationPolicy",
		run: func(e *env) {
			low := e.policy("low").selecting("Deployment", "").to("member1").obj()
			e.create(e.controlPlane, low)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			id := e.permanentID(low)
			e.waitBinding("web", "the binding of low", func(b *workv1alpha2.ResourceBinding) bool { return onlyClaimOf(b, id, "low", e.ns) })
			e.createClusterScoped(e.policy("high").selecting("Deployment", "web").to("member2").priority(100).preempting().cluster())
			e.stillClaimedAfterAChange(tmpl, func(obj client.Object) bool { return onlyClaimOf(obj, id, "low", e.ns) }, "member1")
		},
	},
}

// preemptionOffCases run with the PropagationPolicyPreemption gate at its
// default, off.
var preemptionOffCases = []integrationCase{
	{
		name: "with the gate off a higher PropagationPolicy with preemption never takes a claimed template",
		run: func(e *env) {
			broad := e.policy("broad").selecting("Deployment", "").to("member1").obj()
			e.create(e.controlPlane, broad)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			id := e.permanentID(broad)
			e.waitBinding("web", "the binding of broad", func(b *workv1alpha2.ResourceBinding) bool { return onlyClaimOf(b, id, "broad", e.ns) })
			e.create(e.controlPlane, e.policy("nginx-pp").selecting("Deployment", "web").to("member2").priority(10).preempting().obj())
			e.stillClaimedAfterAChange(tmpl, func(obj client.Object) bool { return onlyClaimOf(obj, id, "broad", e.ns) }, "member1")
		},
	},
}

// TestControllersWithPreemptionOff runs preemptionOffCases against
// controllers of their own (fast paths on), with every feature gate at its
// default; it runs after TestControllers, whose controllers have stopped.
// Its subtests are named like TestControllers' (<mode>/detector/<case>),
// so -run 'TestControllers/.*/detector' selects both.
func TestControllersWithPreemptionOff(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	m := mode{name: "preemption-off", suffix: "preemption-off", fastPaths: fastpath.All()}
	t.Run(m.name, func(t *testing.T) {
		ctl := runControllers(t, m)
		t.Run("detector", func(t *testing.T) {
			var cases sync.WaitGroup
			for i, c := range preemptionOffCases {
				cases.Go(func() {
					t.Run(c.name, func(t *testing.T) {
						c.run(newEnv(t, ctl, fmt.Sprintf("detector-%d-%s", i+1, m.suffix)))
					})
				})
			}
			cases.Wait()
		})
	})
}

// preempting sets spec.preemption to Always.
func (b *policyBuilder) preempting() *policyBuilder {
	b.p.Spec.Preemption = policyv1alpha1.PreemptAlways
	return b
}

// cluster returns the policy as a ClusterPropagationPolicy named
// <namespace>-<name>, its selectors limited to the case's namespace (cases
// run at once: a cluster-wide selector would reach the others').
func (b *policyBuilder) cluster() *policyv1alpha1.ClusterPropagationPolicy {
	spec := b.p.Spec.DeepCopy()
	for i := range spec.ResourceSelectors {
		spec.ResourceSelectors[i].Namespace = b.p.Namespace
	}
	return &policyv1alpha1.ClusterPropagationPolicy{ObjectMeta: metav1.ObjectMeta{Name: b.p.Namespace + "-" + b.p.Name}, Spec: *spec}
}

// permanentID waits for a policy's permanent-id label and returns it.
func (e *env) permanentID(p client.Object) string {
	e.Helper()
	label := policymatch.PropagationPolicyPermanentIDLabel
	if _, ok := p.(*policyv1alpha1.ClusterPropagationPolicy); ok {
		label = policymatch.ClusterPropagationPolicyPermanentIDLabel
	}
	return waitFor(e, e.controlPlane, p, p.GetName()+"'s permanent id", func(p client.Object) (bool, string) {
		return p.GetLabels()[label] != "", describe(p.GetLabels())
	}).GetLabels()[label]
}

// waitBinding waits until the ResourceBinding of the Deployment name holds
// cond, and returns it.
func (e *env) waitBinding(name, what string, cond func(*workv1alpha2.ResourceBinding) bool) *workv1alpha2.ResourceBinding {
	e.Helper()
	return waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name + "-deployment"}}, what,
		func(b *workv1alpha2.ResourceBinding) (bool, string) {
			return cond(b), describe(b.Labels, b.Annotations, b.Spec.Placement, b.Spec.Clusters)
		})
}

// placedOn reports whether the binding's placement names exactly clusters.
func placedOn(b *workv1alpha2.ResourceBinding, clusters ...string) bool {
	p := b.Spec.Placement
	return p != nil && p.ClusterAffinity != nil && slices.Equal(p.ClusterAffinity.ClusterNames, clusters)
}

// onlyClaimOf reports whether obj carries the claim of the
// PropagationPolicy ns/name with permanent id id, and no key of a
// ClusterPropagationPolicy's claim.
func onlyClaimOf(obj client.Object, id, name, ns string) bool {
	l, a := obj.GetLabels(), obj.GetAnnotations()
	_, cppLabel := l[policymatch.ClusterPropagationPolicyPermanentIDLabel]
	_, cppName := a[policymatch.ClusterPropagationPolicyNameAnnotation]
	return claimedBy(obj, id, name, ns) && !cppLabel && !cppName
}

// stillClaimedAfterAChange changes the template's replicas and waits until
// the detector has written them into its binding: the detector has then
// reconciled the template since the last policy was created (it saw it
// before it saw the change, barring a slow policy watch). It then checks
// that claimed still holds for template and binding, and that the binding
// still places on clusters.
func (e *env) stillClaimedAfterAChange(tmpl *appsv1.Deployment, claimed func(client.Object) bool, clusters ...string) {
	e.Helper()
	update(e, e.controlPlane, tmpl, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](3) })
	b := e.waitBinding(tmpl.Name, "the new replicas in the binding", func(b *workv1alpha2.ResourceBinding) bool { return b.Spec.Replicas == 3 })
	if !claimed(b) || !placedOn(b, clusters...) {
		e.Errorf("the binding changed hands: %s", describe(b.Labels, b.Annotations, b.Spec.Placement))
	}
	got := &appsv1.Deployment{}
	if err := e.controlPlane.Get(e.ctx, client.ObjectKeyFromObject(tmpl), got); err != nil {
		e.Fatal(err)
	}
	if !claimed(got) {
		e.Errorf("the template changed hands: %s", describe(got.Labels, got.Annotations))
	}
}

// waitEvent waits for an event of reason on the Deployment name whose
// message contains every one of parts.
func (e *env) waitEvent(name, reason string, parts ...string) {
	e.Helper()
	e.waitEventWhere(name, reason, func(*corev1.Event) bool { return true }, parts...)
}

// waitEventWhere is waitEvent for the events that also satisfy match (a source, a type).
func (e *env) waitEventWhere(name, reason string, match func(*corev1.Event) bool, parts ...string) {
	e.Helper()
	e.eventually(reason+" on "+name, func() (bool, string) {
		list := &corev1.EventList{}
		if err := e.controlPlane.List(e.ctx, list, client.InNamespace(e.ns)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for i := range list.Items {
			ev := &list.Items[i]
			if ev.InvolvedObject.Name != name || ev.Reason != reason {
				continue
			}
			seen = append(seen, ev.Source.Component+" "+ev.Type+": "+ev.Message)
			if !match(ev) {
				continue
			}
			all := true
			for _, p := range parts {
				all = all && strings.Contains(ev.Message, p)
			}
			if all {
				return true, ""
			}
		}
		return false, describe(seen)
	})
}

// absent reports whether the object named like obj does not exist in c.
func (e *env) absent(c client.Client, obj client.Object) bool {
	e.Helper()
	err := c.Get(e.ctx, client.ObjectKeyFromObject(obj), obj.DeepCopyObject().(client.Object))
	if err != nil && !apierrors.IsNotFound(err) {
		e.Fatal(err)
	}
	return apierrors.IsNotFound(err)
}

// waitCopyIn waits until member has a copy of the Deployment template tmpl,
// and returns it.
func (e *env) waitCopyIn(member string, tmpl *appsv1.Deployment) *appsv1.Deployment {
	e.T.Helper()
	return waitFor(e, e.members[member], &appsv1.Deployment{ObjectMeta: tmpl.ObjectMeta}, tmpl.Name+" in "+member, exists[*appsv1.Deployment])
}

// waitCopyGone waits until member has no copy of tmpl.
func (e *env) waitCopyGone(member string, tmpl *appsv1.Deployment) {
	e.T.Helper()
	e.waitGone(e.members[member], &appsv1.Deployment{ObjectMeta: tmpl.ObjectMeta}, tmpl.Name+" gone from "+member)
}

// waitTemplateClaimedBy waits until tmpl carries the claim of the
// PropagationPolicy policy (permanent id id) and nothing of any other.
func (e *env) waitTemplateClaimedBy(tmpl *appsv1.Deployment, id, policy, what string) {
	e.T.Helper()
	waitFor(e, e.controlPlane, tmpl, what, func(d *appsv1.Deployment) (bool, string) {
		return onlyClaimOf(d, id, policy, e.ns), describe(d.Labels, d.Annotations)
	})
}
