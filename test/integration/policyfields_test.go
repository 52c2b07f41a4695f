package integration

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	schedulingv1 "k8s.io/api/scheduling/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// suspensionCases check a policy's spec.suspension (Karmada's dispatch
// suspension) through the detector, the binding controller and the
// execution controller: Works are still rendered, only their dispatch to
// the suspended members waits.
var suspensionCases = []integrationCase{
	{
		name: "dispatching suspended on one cluster holds its copy back until lifted, and deleting the template still cleans it",
		run: func(e *env) {
			p := e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj()
			p.Spec.Suspension = &policyv1alpha1.Suspension{DispatchingOnClusters: &policyv1alpha1.SuspendClusters{ClusterNames: []string{"member2"}}}
			e.create(e.controlPlane, p)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)

			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"the policy's suspension on the binding", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					s := b.Spec.Suspension
					return s != nil && s.DispatchingOnClusters != nil && len(s.DispatchingOnClusters.ClusterNames) == 1, describe(s)
				})
			inMember1 := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
			waitFor(e, e.members["member1"], inMember1, "web in member1", exists)
			e.waitDispatching("member2", metav1.ConditionFalse, workv1alpha1.WorkSuspendDispatchingReason)
			e.waitWorkEvent("member2", workv1alpha1.WorkSuspendDispatchingMessage)
			inMember2 := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
			if err := e.members["member2"].Get(e.ctx, client.ObjectKeyFromObject(inMember2), inMember2); !apierrors.IsNotFound(err) {
				e.Fatalf("web reached member2 although its dispatching is suspended (get: %v)", err)
			}

			// Lifting it dispatches the current rendering.
			update(e, e.controlPlane, tmpl, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28" })
			waitFor(e, e.members["member1"], inMember1, "the new image in member1", imageIs("nginx:1.28"))
			update(e, e.controlPlane, p, func(p *policyv1alpha1.PropagationPolicy) { p.Spec.Suspension = nil })
			waitFor(e, e.members["member2"], inMember2, "the new image in member2 once dispatching resumes", imageIs("nginx:1.28"))
			e.waitDispatching("member2", metav1.ConditionTrue, workv1alpha1.WorkDispatchingReason)
			e.waitWorkEvent("member2", workv1alpha1.WorkDispatchingMessage)

			// Suspended everywhere: changes stay on the control plane, and
			// deleting the template still deletes the member copies.
			update(e, e.controlPlane, p, func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Suspension = &policyv1alpha1.Suspension{Dispatching: ptr.To(true)}
			})
			for _, c := range memberNames {
				e.waitDispatching(c, metav1.ConditionFalse, workv1alpha1.WorkSuspendDispatchingReason)
			}
			update(e, e.controlPlane, tmpl, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].Image = "nginx:1.29" })
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"FullyApplied False, naming the suspension", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.FullyApplied)
					return c != nil && c.Status == metav1.ConditionFalse && strings.Contains(c.Message, "suspended") && strings.Contains(c.Message, "member1, member2"), describe(c)
				})
			for _, c := range memberNames {
				d := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
				if err := e.members[c].Get(e.ctx, client.ObjectKeyFromObject(d), d); err != nil {
					e.Fatal(err)
				}
				if image := d.Spec.Template.Spec.Containers[0].Image; image != "nginx:1.28" {
					e.Errorf("%s has image %s while dispatching is suspended, want nginx:1.28", c, image)
				}
			}
			e.delete(e.controlPlane, tmpl)
			for _, c := range memberNames {
				e.waitGone(e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "web deleted from "+c+" while suspended")
			}
		},
	},
}

// imageIs is a waitFor condition: the Deployment's first container runs image.
func imageIs(image string) func(*appsv1.Deployment) (bool, string) {
	return func(d *appsv1.Deployment) (bool, string) {
		got := d.Spec.Template.Spec.Containers[0].Image
		return got == image, describe("image", got)
	}
}

// waitDispatching waits until web's Work in cluster has the Dispatching
// condition with status and reason.
func (e *env) waitDispatching(cluster string, status metav1.ConditionStatus, reason string) {
	e.Helper()
	waitFor(e, e.controlPlane, e.workOf(cluster, "Deployment", "web"), "Dispatching "+string(status)+"/"+reason+" on web's Work in "+cluster,
		func(w *workv1alpha1.Work) (bool, string) {
			c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching)
			return c != nil && c.Status == status && c.Reason == reason, describe(c)
		})
}

// waitWorkEvent waits for a WorkDispatching event with message on web's
// Work in cluster.
func (e *env) waitWorkEvent(cluster, message string) {
	e.Helper()
	w := e.workOf(cluster, "Deployment", "web")
	e.eventually("WorkDispatching ("+message+") on "+w.Namespace+"/"+w.Name, func() (bool, string) {
		list := &corev1.EventList{}
		if err := e.controlPlane.List(e.ctx, list, client.InNamespace(w.Namespace)); err != nil {
			return false, err.Error()
		}
		var seen []string
		for _, ev := range list.Items {
			if ev.InvolvedObject.Name != w.Name || ev.Reason != events.WorkDispatching {
				continue
			}
			if ev.Message == message && ev.Type == corev1.EventTypeNormal {
				return true, ""
			}
			seen = append(seen, ev.Message)
		}
		return false, describe(seen)
	})
}

// dependentOverrideCases check a policy's spec.dependentOverrides (a
// Karmada v1.7 field) through the detector: the policy waits for the
// overrides it names.
var dependentOverrideCases = []integrationCase{
	{
		name: "a policy naming a missing OverridePolicy makes no binding until it exists, and the first member copy carries it",
		run: func(e *env) {
			p := e.policy("web").selecting("Deployment", "web").to("member1").obj()
			p.Spec.DependentOverrides = []string{"web-op"}
			e.create(e.controlPlane, p)
			e.create(e.controlPlane, e.deployment("web", 1))
			e.waitEvent("web", "ApplyPolicyFailed", "waiting for dependent overrides", "OverridePolicy "+e.ns+"/web-op does not exist yet")
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}}
			if err := e.controlPlane.Get(e.ctx, client.ObjectKeyFromObject(rb), rb); !apierrors.IsNotFound(err) {
				e.Fatalf("the binding exists while the dependent override is missing (get: %v)", err)
			}
			e.create(e.controlPlane, e.labelOverride("web-op", "web", "member1", map[string]string{"env": "blue"}))
			waitFor(e, e.members["member1"], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}},
				"web in member1, with the override", func(d *appsv1.Deployment) (bool, string) {
					return d.Labels["env"] == "blue", describe(d.Labels)
				})
			e.waitEvent("web", "ApplyPolicySucceed")
		},
	},
}

// deletionProtectionCases check Karmada's deletion protection in the
// control plane's admission (the FlotillaValidation plugin).
var deletionProtectionCases = []integrationCase{
	{
		name: "an object labelled deletion-protected=Always cannot be deleted until the label goes",
		run: func(e *env) {
			cm := e.configMap("settings", map[string]string{"k": "v"})
			cm.Labels = map[string]string{workv1alpha2.DeletionProtectionLabelKey: workv1alpha2.DeletionProtectionAlways}
			e.create(e.controlPlane, cm)
			err := e.controlPlane.Delete(e.ctx, cm)
			if !apierrors.IsForbidden(err) || !strings.Contains(err.Error(), "please make sure to remove the label: "+workv1alpha2.DeletionProtectionLabelKey) {
				e.Fatalf("deleting a protected ConfigMap: %v, want Forbidden naming the label", err)
			}
			update(e, e.controlPlane, cm, func(c *corev1.ConfigMap) { c.Labels[workv1alpha2.DeletionProtectionLabelKey] = "Never" })
			e.delete(e.controlPlane, cm)
			e.waitGone(e.controlPlane, cm, "the ConfigMap deleted once its label no longer says Always")
		},
	},
}

// schedulePriorityCases check a policy's spec.schedulePriority (Karmada's
// PriorityBasedScheduling) through the detector: the PriorityClass's value
// reaches the binding; a missing class is reported and waited for.
var schedulePriorityCases = []integrationCase{
	{
		name: "a policy's PriorityClass reaches the binding; a missing one is named and its creation applies the policy",
		run: func(e *env) {
			class := "prio-" + e.ns
			p := e.policy("web").selecting("Deployment", "web").to("member1").obj()
			p.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: class}
			e.create(e.controlPlane, p)
			e.create(e.controlPlane, e.deployment("web", 1))
			e.waitEvent("web", "ApplyPolicyFailed", "the PriorityClass "+class+" that PropagationPolicy "+e.ns+"/web names in spec.schedulePriority.priorityClassName does not exist")
			pc := &schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: class}, Value: 1000}
			e.createClusterScoped(pc)
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"the binding's schedulePriority 1000", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					return b.Spec.SchedulePriority != nil && b.Spec.SchedulePriority.Priority == 1000, describe(b.Spec.SchedulePriority)
				})
		},
	},
	{
		name: "a high-priority template queued behind 200 low-priority ones is scheduled before the backlog drains",
		run: func(e *env) {
			prioritized := func(name, class string, sel policyv1alpha1.ResourceSelector) *policyv1alpha1.PropagationPolicy {
				p := e.policy(name).to("member1").obj()
				p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{sel}
				p.Spec.SchedulePriority = &policyv1alpha1.SchedulePriority{PriorityClassSource: policyv1alpha1.KubePriorityClass, PriorityClassName: class}
				return p
			}
			e.createClusterScoped(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "low-" + e.ns}, Value: 10})
			e.createClusterScoped(&schedulingv1.PriorityClass{ObjectMeta: metav1.ObjectMeta{Name: "high-" + e.ns}, Value: 1000})
			e.create(e.controlPlane, prioritized("high", "high-"+e.ns, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap", Name: "high"}))
			const backlog = 200
			for i := range backlog {
				cm := e.configMap(fmt.Sprintf("low-%03d", i), map[string]string{"k": "v"})
				cm.Labels = map[string]string{"tier": "low"}
				e.create(e.controlPlane, cm)
			}
			// The bindings in the order they are created.
			w, err := client.NewWithWatch(theStack.controlPlaneConfig, client.Options{Scheme: e.controlPlane.Scheme()})
			if err != nil {
				e.Fatal(err)
			}
			watch, err := w.Watch(e.ctx, &workv1alpha2.ResourceBindingList{}, client.InNamespace(e.ns))
			if err != nil {
				e.Fatal(err)
			}
			defer watch.Stop()
			// One policy claims the 200 at once; the high one comes after.
			e.create(e.controlPlane, prioritized("low", "low-"+e.ns, policyv1alpha1.ResourceSelector{APIVersion: "v1", Kind: "ConfigMap",
				LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "low"}}}))
			e.create(e.controlPlane, e.configMap("high", map[string]string{"k": "v"}))
			seen := map[string]bool{}
			timeout := time.After(waitTimeout)
			for len(seen) < backlog+1 {
				select {
				case ev, ok := <-watch.ResultChan():
					if !ok {
						e.Fatal("the binding watch ended")
					}
					b, ok := ev.Object.(*workv1alpha2.ResourceBinding)
					if !ok || seen[b.Name] {
						continue
					}
					seen[b.Name] = true
					if b.Name == "high-configmap" {
						if lows := len(seen) - 1; lows > backlog/2 {
							e.Fatalf("the high-priority binding came after %d of the %d low-priority ones", lows, backlog)
						}
						return
					}
				case <-timeout:
					e.Fatalf("%d bindings after %s, high-configmap not among them", len(seen), waitTimeout)
				}
			}
			e.Fatal("every low-priority binding came before the high-priority one")
		},
	},
}
