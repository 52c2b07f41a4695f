package integration

import (
	"fmt"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/override"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// bindingCases check the binding controller: one Work per target cluster in
// its execution namespace karmada-es-<cluster>, holding the template as
// rendered for that cluster, kept in step with the placement and the
// OverridePolicies.
var bindingCases = []integrationCase{
	{
		name: "a binding scheduled to two clusters has one Work in each execution namespace, holding the template",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj())
			e.create(e.controlPlane, e.deployment("web", 2))
			rb := waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
				"the binding's permanent id", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					return b.Labels[binding.PermanentIDLabel] != "", describe(b.Labels)
				})
			id := rb.Labels[binding.PermanentIDLabel]
			for _, c := range memberNames {
				waitFor(e, e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c, func(w *workv1alpha1.Work) (bool, string) {
					m, err := manifest(w)
					if err != nil {
						return false, err.Error()
					}
					a := m.GetAnnotations()
					return w.Labels[binding.PermanentIDLabel] == id &&
							w.Annotations[binding.NameAnnotation] == "web-deployment" && w.Annotations[binding.NamespaceAnnotation] == e.ns &&
							m.GetKind() == "Deployment" && m.GetNamespace() == e.ns && m.GetName() == "web" && replicasOf(m) == 2 &&
							m.GetLabels()[registry.ManagedLabel] == "true" &&
							a[binding.WorkNameAnnotation] == w.Name && a[binding.WorkNamespaceAnnotation] == w.Namespace,
						describe(w.Labels, w.Annotations, m.GetLabels(), a)
				})
			}
			works := &workv1alpha1.WorkList{}
			if err := e.controlPlane.List(e.ctx, works, client.MatchingLabels{binding.PermanentIDLabel: id}); err != nil {
				e.Fatal(err)
			}
			if len(works.Items) != len(memberNames) {
				e.Errorf("the binding has %d Works, want one per member (%d)", len(works.Items), len(memberNames))
			}
		},
	},
	{
		name: "Divided placement revises the replicas in each cluster's Work",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").weighted(1, 2).obj())
			e.create(e.controlPlane, e.deployment("web", 6))
			for c, want := range map[string]int64{"member1": 2, "member2": 4} {
				waitFor(e, e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c, func(w *workv1alpha1.Work) (bool, string) {
					m, err := manifest(w)
					if err != nil {
						return false, err.Error()
					}
					return replicasOf(m) == want, describe("replicas", replicasOf(m), "want", want)
				})
			}
		},
	},
	{
		name: "an OverridePolicy, and each change to it, shows in the Work of the cluster it targets only",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj())
			e.create(e.controlPlane, e.deployment("web", 1))
			for _, c := range memberNames {
				waitFor(e, e.controlPlane, e.workOf(c, "Deployment", "web"), "web's Work in "+c, exists)
			}
			op := e.labelOverride("env", "web", "member2", map[string]string{"env": "blue"})
			e.create(e.controlPlane, op)
			waitForWorkLabel(e, "member2", "env", "blue")
			update(e, e.controlPlane, op, func(op *policyv1alpha1.OverridePolicy) {
				op.Spec.OverrideRules[0].Overriders.LabelsOverrider[0].Value = map[string]string{"env": "green"}
			})
			waitForWorkLabel(e, "member2", "env", "green")
			waitForWorkLabel(e, "member1", "env", "")

			// As in Karmada, the Work records the applied overrides, the
			// manifest (and so the member's copy) does not, and the template
			// gets ApplyOverridePolicySucceed for the policy and cluster.
			waitFor(e, e.controlPlane, e.workOf("member2", "Deployment", "web"), "applied-overrides on member2's Work", func(w *workv1alpha1.Work) (bool, string) {
				m, err := manifest(w)
				if err != nil {
					return false, err.Error()
				}
				_, onManifest := m.GetAnnotations()[override.AppliedOverridesAnnotation]
				rec := w.Annotations[override.AppliedOverridesAnnotation]
				return strings.Contains(rec, `"policyName":"env"`) && strings.Contains(rec, "green") && !onManifest, describe(w.Annotations, onManifest)
			})
			waitFor(e, e.controlPlane, e.workOf("member1", "Deployment", "web"), "no applied-overrides on member1's Work", func(w *workv1alpha1.Work) (bool, string) {
				_, rec := w.Annotations[override.AppliedOverridesAnnotation]
				return !rec, describe(w.Annotations)
			})
			e.waitEvent("web", events.ApplyOverridePolicySucceed, "Apply override policy("+e.ns+"/env) for cluster(member2) succeed.")

			// A plaintext add under a path that does not exist fails for that
			// policy and cluster, with ApplyOverridePolicyFailed.
			broken := e.labelOverride("broken", "web", "member2", nil)
			broken.Spec.OverrideRules[0].Overriders = policyv1alpha1.Overriders{Plaintext: []policyv1alpha1.PlaintextOverrider{{
				Path: "/spec/nosuch/field", Operator: policyv1alpha1.OverriderOpAdd, Value: apiextensionsv1.JSON{Raw: []byte(`"x"`)}}}}
			e.create(e.controlPlane, broken)
			e.waitEvent("web", events.ApplyOverridePolicyFailed, "Apply override policy("+e.ns+"/broken) for cluster(member2) failed")
		},
	},
	{
		name: "a change to the template is rendered into every Work and reaches every member",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj())
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			for _, c := range memberNames {
				waitFor(e, e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "web in "+c, exists)
			}
			update(e, e.controlPlane, tmpl, func(d *appsv1.Deployment) {
				d.Spec.Replicas = ptr.To[int32](3)
				d.Spec.Template.Spec.Containers[0].Image = "nginx:1.28"
			})
			for _, c := range memberNames {
				waitFor(e, e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "web's change in "+c,
					func(d *appsv1.Deployment) (bool, string) {
						image := d.Spec.Template.Spec.Containers[0].Image
						return *d.Spec.Replicas == 3 && image == "nginx:1.28", describe("replicas", *d.Spec.Replicas, "image", image)
					})
			}
		},
	},
	{
		name: "a burst of changes to the template converges to the last one in every member",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj())
			tmpl := e.deployment("web", 1)
			e.create(e.controlPlane, tmpl)
			// Each write lands while the previous one is still on its way
			// through the detector, the binding controller and the caches.
			for replicas := int32(2); replicas <= 6; replicas++ {
				update(e, e.controlPlane, tmpl, func(d *appsv1.Deployment) {
					d.Spec.Replicas = ptr.To(replicas)
					d.Spec.Template.Spec.Containers[0].Image = fmt.Sprintf("nginx:1.%d", 20+replicas)
				})
			}
			for _, c := range memberNames {
				waitFor(e, e.members[c], &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}, "the last change in "+c,
					func(d *appsv1.Deployment) (bool, string) {
						image := d.Spec.Template.Spec.Containers[0].Image
						return *d.Spec.Replicas == 6 && image == "nginx:1.26", describe("replicas", *d.Spec.Replicas, "image", image)
					})
			}
		},
	},
	{
		name: "dropping a cluster from the placement deletes its Work and its member copy",
		run: func(e *env) {
			p := e.policy("web").selecting("Deployment", "web").to("member1", "member2").duplicated().obj()
			e.create(e.controlPlane, p)
			e.create(e.controlPlane, e.deployment("web", 1))
			copyIn2 := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
			waitFor(e, e.members["member2"], copyIn2, "web in member2", exists)

			update(e, e.controlPlane, p, func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinity.ClusterNames = []string{"member1"}
			})
			e.waitGone(e.controlPlane, e.workOf("member2", "Deployment", "web"), "web's Work in member2 deleted")
			e.waitGone(e.members["member2"], copyIn2, "web deleted from member2")
			waitFor(e, e.controlPlane, e.workOf("member1", "Deployment", "web"), "web's Work in member1 kept", exists)
		},
	},
}

// waitForWorkLabel waits until the manifest in web's Work in cluster has
// label key set to value ("": no such label).
func waitForWorkLabel(e *env, cluster, key, value string) {
	e.Helper()
	waitFor(e, e.controlPlane, e.workOf(cluster, "Deployment", "web"), "label "+key+"="+value+" in web's Work in "+cluster,
		func(w *workv1alpha1.Work) (bool, string) {
			m, err := manifest(w)
			if err != nil {
				return false, err.Error()
			}
			return m.GetLabels()[key] == value, describe(m.GetLabels())
		})
}

// replicasOf returns a manifest's spec.replicas, -1 without one.
func replicasOf(m *unstructured.Unstructured) int64 {
	r, found, err := unstructured.NestedInt64(m.Object, "spec", "replicas")
	if err != nil || !found {
		return -1
	}
	return r
}
