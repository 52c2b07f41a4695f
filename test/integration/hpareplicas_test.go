package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/app/controllermanager"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/deploymentreplicassyncer"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/hpascaletargetmarker"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
)

// TestHPAMarkerAndReplicasSyncer runs Karmada's two controllers that are off
// by default, hpaScaleTargetMarker and deploymentReplicasSyncer, with the
// others: a propagated HPA's target gets retain-replicas (and loses it with
// the HPA), and a Deployment divided between members whose copies were
// scaled there gets their sum as its spec.replicas.
func TestHPAMarkerAndReplicasSyncer(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	m := mode{name: "hpa", suffix: "hpa", fastPaths: fastpath.All()}
	ctl := runControllers(t, m, func(o *controllermanager.Options) {
		o.Controllers = []string{"*", "-cluster", hpascaletargetmarker.ControllerName, deploymentreplicassyncer.ControllerName}
	})

	t.Run("a propagated HPA's target is marked retain-replicas until the HPA goes", func(t *testing.T) {
		e := newEnv(t, ctl, "hpa-marker")
		p := e.policy("hpa").to("member1").obj()
		p.Spec.ResourceSelectors = []policyv1alpha1.ResourceSelector{{APIVersion: "autoscaling/v2", Kind: "HorizontalPodAutoscaler"}}
		e.create(e.controlPlane, p)
		e.create(e.controlPlane, e.deployment("web", 1))
		hpa := &autoscalingv2.HorizontalPodAutoscaler{
			ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"},
			Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
				ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
				MinReplicas:    ptr.To[int32](1), MaxReplicas: 5,
			},
		}
		e.create(e.controlPlane, hpa)
		tmpl := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
		waitFor(e, e.controlPlane, tmpl, "retain-replicas on the HPA's target", func(d *appsv1.Deployment) (bool, string) {
			return d.Labels[native.RetainReplicasLabel] == "true", describe(d.Labels)
		})
		e.delete(e.controlPlane, hpa)
		waitFor(e, e.controlPlane, tmpl, "retain-replicas gone with the HPA", func(d *appsv1.Deployment) (bool, string) {
			_, has := d.Labels[native.RetainReplicasLabel]
			return !has, describe(d.Labels)
		})
	})

	t.Run("a divided Deployment whose members scaled their copies gets their sum", func(t *testing.T) {
		e := newEnv(t, ctl, "hpa-syncer")
		e.create(e.controlPlane, e.policy("web").selecting("Deployment", "web").to("member1", "member2").weighted(1, 1).obj())
		d := e.deployment("web", 2)
		d.Labels = map[string]string{native.RetainReplicasLabel: "true"}
		e.create(e.controlPlane, d)
		// Each member's own HPA scaled its copy: member1 to 3, member2 to 1
		// (bare members have no deployment controller; the status is
		// written as one would).
		for c, n := range map[string]int32{"member1": 3, "member2": 1} {
			copyOf := &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}}
			waitFor(e, e.members[c], copyOf, "web in "+c, exists)
			update(e, e.members[c], copyOf, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To(n) })
			e.eventually("the status of web in "+c, func() (bool, string) {
				cur := &appsv1.Deployment{}
				if err := e.members[c].Get(e.ctx, client.ObjectKeyFromObject(copyOf), cur); err != nil {
					return false, err.Error()
				}
				cur.Status.Replicas, cur.Status.ReadyReplicas, cur.Status.ObservedGeneration = n, n, cur.Generation
				if err := e.members[c].Status().Update(e.ctx, cur); err != nil {
					return false, err.Error()
				}
				return true, ""
			})
		}
		waitFor(e, e.controlPlane, &appsv1.Deployment{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web"}},
			"the template's spec.replicas to be the members' 4", func(d *appsv1.Deployment) (bool, string) {
				return *d.Spec.Replicas == 4, describe("spec", *d.Spec.Replicas, "status", d.Status.Replicas)
			})
		waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
			"the binding to divide 4", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return b.Spec.Replicas == 4, describe(b.Spec.Clusters)
			})
		// The members keep what their HPAs set (retain-replicas).
		for c, n := range map[string]int32{"member1": 3, "member2": 1} {
			cur := &appsv1.Deployment{}
			if err := e.members[c].Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: "web"}, cur); err != nil {
				t.Fatal(err)
			}
			if *cur.Spec.Replicas != n {
				t.Errorf("%s's copy has %d replicas, want the %d its HPA set", c, *cur.Spec.Replicas, n)
			}
		}
	})
}
