package integration

import (
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// detectorCases check the resource detector: claims on templates (which the
// control plane's FlotillaPolicyClaim admission plugin may already write at
// creation; the detector is the authority either way) and the
// ResourceBinding it keeps per claimed template.
var detectorCases = []integrationCase{
	{
		name: "a template and its PropagationPolicy give a claimed template and a <name>-<kind> binding carrying the claim",
		run: func(e *env) {
			p := e.policy("web").selecting("Deployment", "web").to("member1").obj()
			e.create(e.controlPlane, p)
			tmpl := e.deployment("web", 2)
			e.create(e.controlPlane, tmpl)
			id := waitFor(e, e.controlPlane, p, "the policy's permanent id", func(p *policyv1alpha1.PropagationPolicy) (bool, string) {
				return p.Labels[policymatch.PropagationPolicyPermanentIDLabel] != "", describe(p.Labels)
			}).Labels[policymatch.PropagationPolicyPermanentIDLabel]
			claimed := waitFor(e, e.controlPlane, tmpl, "the template's claim", func(d *appsv1.Deployment) (bool, string) {
				return claimedBy(d, id, "web", e.ns), describe(d.Labels, d.Annotations)
			})
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"the binding web-deployment", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					want := workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Name: "web", UID: claimed.UID}
					got := b.Spec.Resource
					got.ResourceVersion = "" // follows the template's writes
					owned := len(b.OwnerReferences) == 1 && b.OwnerReferences[0].UID == claimed.UID
					placed := b.Spec.Placement != nil && b.Spec.Placement.ClusterAffinity != nil &&
						slices.Equal(b.Spec.Placement.ClusterAffinity.ClusterNames, []string{"member1"})
					return claimedBy(b, id, "web", e.ns) && b.Labels[binding.PermanentIDLabel] != "" && got == want &&
							b.Spec.Replicas == 2 && owned && placed,
						describe(b.Labels, b.Annotations, b.Spec.Resource, "replicas", b.Spec.Replicas, "owners", b.OwnerReferences)
				})
			// The replicas came from the interpreter: Karmada's event on the template.
			e.waitEventWhere("web", events.GetReplicasSucceed, func(ev *corev1.Event) bool {
				return ev.Source.Component == "resource-detector" && ev.Type == corev1.EventTypeNormal && ev.InvolvedObject.Kind == "Deployment"
			})
		},
	},
	{
		name: "a template created before its policy is claimed when the policy comes, and propagated",
		run: func(e *env) {
			// No policy yet: the admission plugin leaves the template
			// unclaimed, and the claim is the detector's own patch.
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			p := e.policy("web").selecting("Deployment", "web").to("member1").obj()
			e.create(e.controlPlane, p)
			id := waitFor(e, e.controlPlane, p, "the policy's permanent id", func(p *policyv1alpha1.PropagationPolicy) (bool, string) {
				return p.Labels[policymatch.PropagationPolicyPermanentIDLabel] != "", describe(p.Labels)
			}).Labels[policymatch.PropagationPolicyPermanentIDLabel]
			waitFor(e, e.controlPlane, tmpl, "the template's claim", func(d *appsv1.Deployment) (bool, string) {
				return claimedBy(d, id, "web", e.ns), describe(d.Labels, d.Annotations)
			})
			waitFor(e, e.members["member1"], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "web in member1", exists)
		},
	},
	{
		name: "the policy of higher priority claims the template, although the other one names it and sorts first",
		run: func(e *env) {
			// Created in this order, any view of the policies (the admission
			// plugin's informer, the detector's cache) that has a-low also
			// has z-high: neither can claim for a-low by not knowing
			// z-high yet.
			e.create(e.controlPlane, e.policy("z-high").selecting("Deployment", "").to("member2").priority(5).obj())
			e.create(e.controlPlane, e.policy("a-low").selecting("Deployment", "web").to("member1").priority(1).obj())
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			waitFor(e, e.controlPlane, tmpl, "the claim of z-high", func(d *appsv1.Deployment) (bool, string) {
				return d.Annotations[policymatch.PropagationPolicyNameAnnotation] == "z-high", describe(d.Annotations)
			})
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"the binding with z-high's placement", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					p := b.Spec.Placement
					return b.Annotations[policymatch.PropagationPolicyNameAnnotation] == "z-high" && p != nil && p.ClusterAffinity != nil &&
						slices.Equal(p.ClusterAffinity.ClusterNames, []string{"member2"}), describe(b.Annotations, p)
				})
		},
	},
	{
		name: "deleting the policy releases the claim from the template and its binding, which stay with their member copy",
		run: func(e *env) {
			p := e.policy("web").selecting("Deployment", "web").to("member1").obj()
			e.create(e.controlPlane, p)
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}}
			waitFor(e, e.controlPlane, rb, "the binding, claimed", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return b.Annotations[policymatch.PropagationPolicyNameAnnotation] == "web", describe(b.Annotations)
			})
			waitFor(e, e.members["member1"], &appsv1.Deployment{ObjectMeta: tmpl.ObjectMeta}, "web in member1", exists[*appsv1.Deployment])

			e.delete(e.controlPlane, p)
			waitFor(e, e.controlPlane, tmpl, "the template, released", func(d *appsv1.Deployment) (bool, string) {
				return !hasClaim(d), describe(d.Labels, d.Annotations)
			})
			waitFor(e, e.controlPlane, rb, "the binding, released", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return !hasClaim(b), describe(b.Labels, b.Annotations)
			})
			waitFor(e, e.members["member1"], &appsv1.Deployment{ObjectMeta: tmpl.ObjectMeta}, "web still in member1", exists[*appsv1.Deployment])
		},
	},
	{
		name: "deleting the template deletes its binding, its Works and its member copies",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj())
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			for _, c := range memberNames {
				waitFor(e, e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "web in "+c, exists)
			}
			e.delete(e.controlPlane, tmpl)
			e.waitGone(e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}}, "web-deployment deleted")
			for _, c := range memberNames {
				e.waitGone(e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c+" deleted")
				e.waitGone(e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "web deleted from "+c)
			}
		},
	},
	{
		name: "a cluster-scoped template and its ClusterPropagationPolicy give a claimed template and a ClusterResourceBinding",
		run: func(e *env) {
			role := e.clusterRole()
			cpp := &policyv1alpha1.ClusterPropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				Spec: policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}},
					Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
				},
			}
			e.createClusterScoped(cpp)
			e.createClusterScoped(role)
			id := waitFor(e, e.controlPlane, cpp, "the policy's permanent id", func(p *policyv1alpha1.ClusterPropagationPolicy) (bool, string) {
				return p.Labels[policymatch.ClusterPropagationPolicyPermanentIDLabel] != "", describe(p.Labels)
			}).Labels[policymatch.ClusterPropagationPolicyPermanentIDLabel]
			claimed := func(obj client.Object) bool {
				return obj.GetLabels()[policymatch.ClusterPropagationPolicyPermanentIDLabel] == id &&
					obj.GetAnnotations()[policymatch.ClusterPropagationPolicyNameAnnotation] == cpp.Name
			}
			waitFor(e, e.controlPlane, role, "the ClusterRole's claim", func(r *rbacv1.ClusterRole) (bool, string) {
				return claimed(r), describe(r.Labels, r.Annotations)
			})
			waitFor(e, e.controlPlane, &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name(role.Name, "ClusterRole")}},
				"the ClusterResourceBinding", func(b *workv1alpha2.ClusterResourceBinding) (bool, string) {
					return claimed(b) && b.Labels[binding.ClusterPermanentIDLabel] != "" && b.Spec.Resource.Name == role.Name &&
						len(b.Spec.Clusters) == 1 && b.Spec.Clusters[0].Name == "member1", describe(b.Labels, b.Annotations, b.Spec.Resource, b.Spec.Clusters)
				})
			waitFor(e, e.members["member1"], &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: role.Name}}, "the ClusterRole in member1", exists)
		},
	},
}

// clusterRole is a ClusterRole template named after the case's namespace.
func (e *env) clusterRole() *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-reader"},
		Rules:      []rbacv1.PolicyRule{{APIGroups: []string{""}, Resources: []string{"configmaps"}, Verbs: []string{"get"}}},
	}
}

// claimedBy reports whether obj carries the claim of the PropagationPolicy
// ns/name with permanent id id.
func claimedBy(obj client.Object, id, name, ns string) bool {
	a := obj.GetAnnotations()
	return obj.GetLabels()[policymatch.PropagationPolicyPermanentIDLabel] == id &&
		a[policymatch.PropagationPolicyNameAnnotation] == name && a[policymatch.PropagationPolicyNamespaceAnnotation] == ns
}

// hasClaim reports whether obj carries any claim label or annotation.
func hasClaim(obj client.Object) bool {
	for _, k := range []string{policymatch.PropagationPolicyPermanentIDLabel, policymatch.ClusterPropagationPolicyPermanentIDLabel} {
		if _, ok := obj.GetLabels()[k]; ok {
			return true
		}
	}
	for _, k := range []string{policymatch.PropagationPolicyNameAnnotation, policymatch.PropagationPolicyNamespaceAnnotation, policymatch.ClusterPropagationPolicyNameAnnotation} {
		if _, ok := obj.GetAnnotations()[k]; ok {
			return true
		}
	}
	return false
}
