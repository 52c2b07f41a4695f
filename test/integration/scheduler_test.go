package integration

import (
	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler"
)

// schedulerCases check the scheduler: spec.clusters of a binding from its
// placement, and the Scheduled condition. Bare members have no nodes and so
// no capacity: only Duplicated and static-weight placement fit there.
var schedulerCases = []integrationCase{
	placementCase("Duplicated placement gives every cluster all the replicas", 3,
		func(b *policyBuilder) { b.to("member1", "member2").duplicated() },
		[]workv1alpha2.TargetCluster{{Name: "member1", Replicas: 3}, {Name: "member2", Replicas: 3}}),
	placementCase("Divided placement by static weights 1:2 splits 6 replicas 2 and 4", 6,
		func(b *policyBuilder) { b.to("member1", "member2").weighted(1, 2) },
		[]workv1alpha2.TargetCluster{{Name: "member1", Replicas: 2}, {Name: "member2", Replicas: 4}}),
	placementCase("Divided placement by static weights 2:1 splits 2 replicas 1 and 1, by Webster's method as in Karmada", 2,
		func(b *policyBuilder) { b.to("member1", "member2").weighted(2, 1) },
		[]workv1alpha2.TargetCluster{{Name: "member1", Replicas: 1}, {Name: "member2", Replicas: 1}}),
	{
		name: "a placement that no longer fits any cluster empties spec.clusters with Scheduled False, NoClusterFit",
		run: func(e *env) {
			p := e.policy("web").selecting("Deployment", "web").to("member1").duplicated().obj()
			e.create(e.controlPlane, p)
			e.create(e.controlPlane, e.deployment("web", 1))
			rb := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}}
			waitFor(e, e.controlPlane, rb, "web scheduled to member1", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				return len(b.Spec.Clusters) == 1 && b.Spec.Clusters[0].Name == "member1", describe(b.Spec.Clusters)
			})
			waitFor(e, e.controlPlane, e.workOf("member1", "Deployment", "web"), "web's Work in member1", exists)

			update(e, e.controlPlane, p, func(p *policyv1alpha1.PropagationPolicy) {
				p.Spec.Placement.ClusterAffinity = &policyv1alpha1.ClusterAffinity{
					LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"integration.flotilla.io/no-such-label": "true"}}}
			})
			waitFor(e, e.controlPlane, rb, "web unscheduled", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
				return len(b.Spec.Clusters) == 0 && c != nil && c.Status == metav1.ConditionFalse && c.Reason == scheduler.ReasonNoClusterFit,
					describe(b.Spec.Clusters, c)
			})
			// Karmada removes the copies from the clusters that no longer fit.
			e.waitGone(e.controlPlane, e.workOf("member1", "Deployment", "web"), "web's Work in member1 deleted")
		},
	},
}

// placementCase is a case in which a Deployment with replicas, claimed by a
// policy that place configures, is scheduled to want, and its Scheduled
// condition is True for the binding's current generation.
func placementCase(name string, replicas int32, place func(*policyBuilder), want []workv1alpha2.TargetCluster) integrationCase {
	return integrationCase{name: name, run: func(e *env) {
		b := e.policy("web").selecting("Deployment", "web")
		place(b)
		e.create(e.controlPlane, b.obj())
		e.create(e.controlPlane, e.deployment("web", replicas))
		waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: "web-deployment"}},
			"web-deployment scheduled", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				c := meta.FindStatusCondition(b.Status.Conditions, workv1alpha2.Scheduled)
				diff := cmp.Diff(want, b.Spec.Clusters)
				return diff == "" && c != nil && c.Status == metav1.ConditionTrue && c.Reason == scheduler.ReasonSuccess &&
						b.Status.SchedulerObservedGeneration == b.Generation,
					describe("clusters (-want +got):", diff, "condition", c, "observed", b.Status.SchedulerObservedGeneration, "generation", b.Generation)
			})
	}}
}
