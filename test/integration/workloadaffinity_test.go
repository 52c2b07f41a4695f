package integration

import (
	"testing"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
)

// TestWorkloadAffinity runs the controllers with Karmada's WorkloadAffinity
// gate: a policy's placement.workloadAffinity groups templates by a label,
// and the scheduler keeps a group together (affinity) or apart
// (anti-affinity), each workload on one cluster.
func TestWorkloadAffinity(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	m := mode{name: "workloadaffinity", suffix: "wa", fastPaths: fastpath.All(), featureGates: "WorkloadAffinity=true"}
	ctl := runControllers(t, m)
	oneCluster := []policyv1alpha1.SpreadConstraint{{SpreadByField: policyv1alpha1.SpreadByFieldCluster, MaxGroups: 1, MinGroups: 1}}
	grouped := func(e *env, name string) *appsv1.Deployment {
		d := e.deployment(name, 1)
		d.Labels = map[string]string{"app.group": "fe"}
		return d
	}
	// groupPolicy selects every Deployment for member1 and member2, one
	// cluster each, grouped by app.group as term says.
	groupPolicy := func(e *env, term policyv1alpha1.WorkloadAffinity) *policyv1alpha1.PropagationPolicy {
		p := e.policy("fe").selecting("Deployment", "").to("member1", "member2").duplicated().obj()
		p.Spec.Placement.SpreadConstraints = oneCluster
		p.Spec.Placement.WorkloadAffinity = &term
		return p
	}
	placed := func(e *env, name string) string {
		b := waitFor(e, e.controlPlane, &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: e.ns, Name: name + "-deployment"}},
			name+" placed on one cluster, in its group", func(b *workv1alpha2.ResourceBinding) (bool, string) {
				g := b.Spec.WorkloadAffinityGroups
				return len(b.Spec.Clusters) == 1 && g != nil && (g.AffinityGroup == "app.group=fe" || g.AntiAffinityGroup == "app.group=fe"), describe(b.Spec.Clusters, g)
			})
		return b.Spec.Clusters[0].Name
	}

	t.Run("anti-affinity keeps a group apart", func(t *testing.T) {
		e := newEnv(t, ctl, "wa-anti")
		e.create(e.controlPlane, groupPolicy(e, policyv1alpha1.WorkloadAffinity{AntiAffinity: &policyv1alpha1.WorkloadAntiAffinityTerm{GroupByLabelKey: "app.group"}}))
		e.create(e.controlPlane, grouped(e, "web"))
		first := placed(e, "web")
		e.create(e.controlPlane, grouped(e, "api"))
		if second := placed(e, "api"); second == first {
			t.Errorf("web and api are both on %s; anti-affinity keeps them apart", first)
		}
	})

	t.Run("affinity keeps a group together", func(t *testing.T) {
		e := newEnv(t, ctl, "wa-affinity")
		e.create(e.controlPlane, groupPolicy(e, policyv1alpha1.WorkloadAffinity{Affinity: &policyv1alpha1.WorkloadAffinityTerm{GroupByLabelKey: "app.group"}}))
		e.create(e.controlPlane, grouped(e, "web"))
		first := placed(e, "web")
		for _, name := range []string{"api", "ui"} {
			e.create(e.controlPlane, grouped(e, name))
			if got := placed(e, name); got != first {
				t.Errorf("%s is on %s, web on %s; affinity keeps them together", name, got, first)
			}
		}
	})
}
