package integration

import (
	"encoding/json"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// dependencyCases check propagateDeps (Karmada's dependencies distributor):
// what a workload's pod template refers to follows it, and leaves a
// cluster when no workload there needs it any more.
var dependencyCases = []integrationCase{
	{
		name: "a ConfigMap, a Secret and a ServiceAccount follow their Deployment to both clusters, and the binding lists them",
		run: func(e *env) {
			e.create(e.controlPlane, e.configMap("app-config", map[string]string{"mode": "prod"}))
			e.create(e.controlPlane, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Name: "app-secret", Namespace: e.ns}, StringData: map[string]string{"token": "t"}})
			e.create(e.controlPlane, &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "app-sa", Namespace: e.ns}})
			tmpl := usingDependencies(e.deployment("web", 1), "app-config", "app-secret", "app-sa")
			e.create(e.controlPlane, tmpl)
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").propagatingDeps().obj())
			for _, m := range []string{"member1", "member2"} {
				e.waitCopyIn(m, tmpl)
				e.waitDependencyIn(m, &corev1.ConfigMap{}, "app-config")
				e.waitDependencyIn(m, &corev1.Secret{}, "app-secret")
				e.waitDependencyIn(m, &corev1.ServiceAccount{}, "app-sa")
			}
			e.waitBinding("web", "the Deployment's binding listing its dependencies", func(b *workv1alpha2.ResourceBinding) bool {
				var refs []map[string]string
				_ = json.Unmarshal([]byte(b.Annotations[binding.DependenciesAnnotation]), &refs)
				return len(refs) == 3
			})
			attached := waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config-configmap"}},
				"the ConfigMap's attached binding, applied", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					return len(b.Spec.RequiredBy) == 1 && b.Spec.Placement == nil && fullyApplied(b), describe(b.Spec.RequiredBy, b.Status.Conditions)
				})
			if len(attached.Spec.Clusters) != 0 {
				e.Errorf("the attached binding was scheduled: %v", attached.Spec.Clusters)
			}

			// A change of the ConfigMap reaches the members.
			update(e, e.controlPlane, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config"}}, func(c *corev1.ConfigMap) {
				c.Data["mode"] = "canary"
			})
			for _, m := range []string{"member1", "member2"} {
				waitFor(e, e.members[m], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config"}}, "the new data in "+m,
					func(c *corev1.ConfigMap) (bool, string) { return c.Data["mode"] == "canary", describe(c.Data) })
			}

			// Dropping the Secret from the pod template withdraws it from
			// the members; the template stays on the control plane.
			update(e, e.controlPlane, tmpl, func(d *appsv1.Deployment) { d.Spec.Template.Spec.Containers[0].EnvFrom = nil })
			for _, m := range []string{"member1", "member2"} {
				e.waitGone(e.members[m], &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-secret"}}, "the Secret gone from "+m)
			}
			e.waitGone(e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-secret-secret"}}, "the Secret's attached binding gone")
			if e.absent(e.controlPlane, &corev1.Secret{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-secret"}}) {
				e.Errorf("the Secret was deleted from the control plane")
			}
			if e.absent(e.members["member1"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config"}}) {
				e.Errorf("the ConfigMap, still referred to, left member1")
			}
		},
	},
	{
		name: "a ConfigMap shared by two Deployments goes to both clusters and leaves one only when its Deployment there is deleted",
		run: func(e *env) {
			e.create(e.controlPlane, e.configMap("shared", map[string]string{"k": "v"}))
			a := usingDependencies(e.deployment("a", 1), "shared")
			b := usingDependencies(e.deployment("b", 1), "shared")
			e.create(e.controlPlane, a)
			e.create(e.controlPlane, b)
			e.create(e.controlPlane, e.policy("a").selecting("Deployment", "a").to("member1").propagatingDeps().obj())
			e.create(e.controlPlane, e.policy("b").selecting("Deployment", "b").to("member2").propagatingDeps().obj())
			e.waitDependencyIn("member1", &corev1.ConfigMap{}, "shared")
			e.waitDependencyIn("member2", &corev1.ConfigMap{}, "shared")
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "shared-configmap"}},
				"the ConfigMap required by both", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
					return len(rb.Spec.RequiredBy) == 2, describe(rb.Spec.RequiredBy)
				})

			e.delete(e.controlPlane, b)
			e.waitGone(e.members["member2"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "shared"}}, "the ConfigMap gone from member2")
			if e.absent(e.members["member1"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "shared"}}) {
				e.Errorf("the ConfigMap left member1, where Deployment a still needs it")
			}
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "shared-configmap"}}
			waitFor(e, e.controlPlane, rb, "the ConfigMap required by a only", func(rb *workv1alpha2.ResourceBinding) (bool, string) {
				return len(rb.Spec.RequiredBy) == 1 && rb.Spec.RequiredBy[0].Name == "a-deployment", describe(rb.Spec.RequiredBy, rb.Labels)
			})
			for k := range rb.Labels {
				if k == binding.DependedByLabel(e.ns, "b-deployment") {
					e.Errorf("the binding still carries b's depended-by label %s", k)
				}
			}
		},
	},
	{
		name: "with Overwrite, a dependency that already exists in the member with other data is taken over",
		run: func(e *env) {
			existing := e.configMap("app-config", map[string]string{"mode": "member-own"})
			e.create(e.members["member1"], existing)
			e.create(e.controlPlane, e.configMap("app-config", map[string]string{"mode": "from-control-plane"}))
			tmpl := usingDependencies(e.deployment("web", 1), "app-config")
			e.create(e.controlPlane, tmpl)
			p := e.policy("web").selecting("Deployment", "web").to("member1").propagatingDeps().obj()
			p.Spec.ConflictResolution = policyv1alpha1.ConflictOverwrite
			e.create(e.controlPlane, p)
			waitFor(e, e.members["member1"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config"}}, "the member's ConfigMap taken over",
				func(c *corev1.ConfigMap) (bool, string) {
					return c.Data["mode"] == "from-control-plane", describe(c.Data)
				})
			waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config-configmap"}},
				"the attached binding, Overwrite and fully applied", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					return b.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite && fullyApplied(b), describe(b.Spec.ConflictResolution, b.Status.Conditions)
				})
		},
	},
	{
		name: "a missing dependency is reported on the binding without blocking the workload, and follows once created",
		run: func(e *env) {
			tmpl := usingDependencies(e.deployment("web", 1), "late-config")
			e.create(e.controlPlane, tmpl)
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1").propagatingDeps().obj())
			e.waitCopyIn("member1", tmpl)
			e.waitEvent("web-deployment", "SyncScheduleResultToDependenciesFailed", "ConfigMap "+e.ns+"/late-config", "does not exist")
			e.create(e.controlPlane, e.configMap("late-config", map[string]string{"k": "v"}))
			e.waitDependencyIn("member1", &corev1.ConfigMap{}, "late-config")
		},
	},
	{
		name: "a dependency with its own policy keeps its placement and gains the workload's clusters",
		run: func(e *env) {
			e.create(e.controlPlane, e.configMap("app-config", map[string]string{"k": "v"}))
			own := e.policy("config").to("member2").obj()
			own.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{{APIVersion: "v1", Kind: "ConfigMap", Name: "app-config"}}
			e.create(e.controlPlane, own)
			e.waitDependencyIn("member2", &corev1.ConfigMap{}, "app-config")
			tmpl := usingDependencies(e.deployment("web", 1), "app-config")
			e.create(e.controlPlane, tmpl)
			e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1").propagatingDeps().obj())
			e.waitDependencyIn("member1", &corev1.ConfigMap{}, "app-config")
			rb := waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config-configmap"}},
				"the ConfigMap's own binding, required by web", func(b *workv1alpha2.ResourceBinding) (bool, string) {
					return len(b.Spec.RequiredBy) == 1, describe(b.Spec.RequiredBy)
				})
			if rb.Spec.Placement == nil || !placedOn(rb, "member2") {
				e.Errorf("the ConfigMap's binding lost its own placement: %s", describe(rb.Spec.Placement, rb.Spec.Clusters))
			}
			// Without its workload the ConfigMap stays where its own
			// policy puts it.
			e.delete(e.controlPlane, tmpl)
			e.waitGone(e.members["member1"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config"}}, "the ConfigMap gone from member1")
			if e.absent(e.members["member2"], &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "app-config"}}) {
				e.Errorf("the ConfigMap left member2, where its own policy places it")
			}
		},
	},
}

// propagatingDeps sets spec.propagateDeps.
func (b *policyBuilder) propagatingDeps() *policyBuilder {
	b.p.Spec.PropagateDeps = true
	return b
}

// usingDependencies makes d's pod template refer to each named object:
// "…-config" as a ConfigMap volume, "…-secret" through envFrom, "…-sa" as
// the service account, anything else as a ConfigMap volume.
func usingDependencies(d *appsv1.Deployment, names ...string) *appsv1.Deployment {
	spec := &d.Spec.Template.Spec
	for _, n := range names {
		switch {
		case strings.HasSuffix(n, "-secret"):
			spec.Containers[0].EnvFrom = append(spec.Containers[0].EnvFrom, corev1.EnvFromSource{SecretRef: &corev1.SecretEnvSource{LocalObjectReference: corev1.LocalObjectReference{Name: n}}})
		case strings.HasSuffix(n, "-sa"):
			spec.ServiceAccountName = n
		default:
			spec.Volumes = append(spec.Volumes, corev1.Volume{Name: n, VolumeSource: corev1.VolumeSource{ConfigMap: &corev1.ConfigMapVolumeSource{LocalObjectReference: corev1.LocalObjectReference{Name: n}}}})
		}
	}
	return d
}

// waitDependencyIn waits until member has the object named name of obj's
// type in the case's namespace, sent by Flotilla.
func (e *env) waitDependencyIn(member string, obj client.Object, name string) {
	e.T.Helper()
	obj.SetNamespace(e.ns)
	obj.SetName(name)
	waitFor(e, e.members[member], obj, name+" in "+member, func(o client.Object) (bool, string) {
		return o.GetLabels()["karmada.io/managed"] == "true", describe(o.GetLabels())
	})
}

// fullyApplied reports a binding whose FullyApplied condition is True.
func fullyApplied(b *workv1alpha2.ResourceBinding) bool {
	for _, c := range b.Status.Conditions {
		if c.Type == workv1alpha2.FullyApplied {
			return c.Status == metav1.ConditionTrue
		}
	}
	return false
}
