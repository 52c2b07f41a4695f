package integration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	appsv1alpha1 "github.com/flotilla-io/flotilla/api/apps/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/app/controllermanager"
	"github.com/flotilla-io/flotilla/internal/controller/failover/workloadrebalancer"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// workloadRebalancerCases check the WorkloadRebalancer controller (Karmada's
// apps.karmada.io/v1alpha1 WorkloadRebalancer): it sets
// spec.rescheduleTriggeredAt of each listed workload's binding to the
// rebalancer's creation time, and reports every workload in
// status.observedWorkloads, Successful, or Failed with
// ReferencedBindingNotFound when the workload has no binding, with
// observedGeneration and finishTime. Its TTL is checked on a fake clock by
// TestWorkloadRebalancerTTL.
var workloadRebalancerCases = []integrationCase{
	{
		name: "the bindings of the listed workloads, namespaced and cluster-scoped, get the creation time; one without a binding is Failed",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("all").selecting("Deployment", "").to("member1", "member2").duplicated().obj())
			e.create(e.controlPlane, e.deployment("web", 1))
			e.waitBinding("web", "web scheduled", func(b *workv1alpha2.ResourceBinding) bool { return len(b.Spec.Clusters) == 2 })
			role := e.clusterRole()
			e.createClusterScoped(&policyv1alpha1.ClusterPropagationPolicy{
				ObjectMeta: metav1.ObjectMeta{Name: role.Name},
				Spec: policyv1alpha1.PropagationSpec{
					ResourceSelectors: []policyv1alpha1.ResourceSelector{{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}},
					Placement:         policyv1alpha1.Placement{ClusterAffinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}},
				},
			})
			e.createClusterScoped(role)
			crb := &workv1alpha2.ClusterResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: binding.Name(role.Name, "ClusterRole")}}
			waitFor(e, e.controlPlane, crb, "the ClusterRole scheduled", func(b *workv1alpha2.ClusterResourceBinding) (bool, string) {
				return len(b.Spec.Clusters) == 1, describe(b.Spec.Clusters)
			})

			roleRef := appsv1alpha1.ObjectReference{APIVersion: "rbac.authorization.k8s.io/v1", Kind: "ClusterRole", Name: role.Name}
			wr := e.rebalancer(nil, e.deploymentRef("web"), e.deploymentRef("missing"), roleRef)
			e.createClusterScoped(wr)
			got := e.waitRebalanced(wr, 1)
			want := []appsv1alpha1.ObservedWorkload{
				{Workload: e.deploymentRef("missing"), Result: appsv1alpha1.RebalanceFailed, Reason: appsv1alpha1.RebalanceObjectNotFound},
				{Workload: e.deploymentRef("web"), Result: appsv1alpha1.RebalanceSuccessful},
				{Workload: roleRef, Result: appsv1alpha1.RebalanceSuccessful},
			}
			if !slices.EqualFunc(got.Status.ObservedWorkloads, want, func(a, b appsv1alpha1.ObservedWorkload) bool { return a == b }) {
				e.Errorf("observedWorkloads = %+v, want %+v", got.Status.ObservedWorkloads, want)
			}
			created := got.CreationTimestamp
			e.waitBinding("web", "web's rescheduleTriggeredAt at the rebalancer's creation", func(b *workv1alpha2.ResourceBinding) bool {
				return triggeredAt(b.Spec.RescheduleTriggeredAt, created)
			})
			waitFor(e, e.controlPlane, crb, "the ClusterRole's rescheduleTriggeredAt at the rebalancer's creation", func(b *workv1alpha2.ClusterResourceBinding) (bool, string) {
				return triggeredAt(b.Spec.RescheduleTriggeredAt, created), describe(b.Spec.RescheduleTriggeredAt)
			})
		},
	},
	{
		name: "a Failed workload is retried when the rebalancer changes, a workload added later is triggered, and finishTime follows the spec",
		run: func(e *env) {
			e.create(e.controlPlane, e.policy("all").selecting("Deployment", "").to("member1").obj())
			e.create(e.controlPlane, e.deployment("web", 1))
			e.waitBinding("web", "web scheduled", func(b *workv1alpha2.ResourceBinding) bool { return len(b.Spec.Clusters) == 1 })
			wr := e.rebalancer(nil, e.deploymentRef("web"), e.deploymentRef("late"))
			e.createClusterScoped(wr)
			first := e.waitRebalanced(wr, 1)
			if r := resultOf(first, "late"); r.Result != appsv1alpha1.RebalanceFailed || r.Reason != appsv1alpha1.RebalanceObjectNotFound {
				e.Fatalf("late, which has no binding yet: %+v, want Failed with ReferencedBindingNotFound", r)
			}

			// The binding appears; a label on the rebalancer is a change,
			// and the controller tries again. The spec is the same, so the
			// rebalancer keeps its finishTime.
			e.create(e.controlPlane, e.deployment("late", 1))
			e.waitBinding("late", "late scheduled", func(b *workv1alpha2.ResourceBinding) bool { return len(b.Spec.Clusters) == 1 })
			update(e, e.controlPlane, wr, func(w *appsv1alpha1.WorkloadRebalancer) { w.Labels = map[string]string{"retry": "1"} })
			retried := waitFor(e, e.controlPlane, wr, "late Successful", func(w *appsv1alpha1.WorkloadRebalancer) (bool, string) {
				return resultOf(w, "late").Result == appsv1alpha1.RebalanceSuccessful, describe(w.Status)
			})
			if !retried.Status.FinishTime.Equal(first.Status.FinishTime) || retried.Status.ObservedGeneration != 1 {
				e.Errorf("after a label change: finishTime %s (was %s), observedGeneration %d; want both unchanged",
					retried.Status.FinishTime, first.Status.FinishTime, retried.Status.ObservedGeneration)
			}
			e.waitBinding("late", "late's rescheduleTriggeredAt", func(b *workv1alpha2.ResourceBinding) bool {
				return triggeredAt(b.Spec.RescheduleTriggeredAt, first.CreationTimestamp)
			})

			// A workload added to the spec is triggered too (at the same
			// creation time), and the new generation has its own finishTime.
			e.create(e.controlPlane, e.deployment("added", 1))
			e.waitBinding("added", "added scheduled", func(b *workv1alpha2.ResourceBinding) bool { return len(b.Spec.Clusters) == 1 })
			update(e, e.controlPlane, wr, func(w *appsv1alpha1.WorkloadRebalancer) {
				w.Spec.Workloads = append(w.Spec.Workloads, e.deploymentRef("added"))
			})
			second := e.waitRebalanced(wr, 2)
			for _, name := range []string{"added", "late", "web"} {
				if r := resultOf(second, name); r.Result != appsv1alpha1.RebalanceSuccessful {
					e.Errorf("%s in generation 2: %+v, want Successful", name, r)
				}
			}
			if second.Status.FinishTime.Before(first.Status.FinishTime) {
				e.Errorf("finishTime of generation 2 %s is before that of generation 1 %s", second.Status.FinishTime, first.Status.FinishTime)
			}
			e.waitBinding("added", "added's rescheduleTriggeredAt", func(b *workv1alpha2.ResourceBinding) bool {
				return triggeredAt(b.Spec.RescheduleTriggeredAt, first.CreationTimestamp)
			})
		},
	},
}

// TestWorkloadRebalancerTTL runs the WorkloadRebalancer controller alone on
// a fake clock and checks ttlSecondsAfterFinished: finishTime is the
// clock's time, a change of the spec starts the TTL again, and the
// rebalancer is deleted once the clock has passed finishTime plus the TTL.
// The binding is written by hand (no detector runs). The controller checks
// the TTL at each reconcile, and otherwise at a requeue after the time left
// on the queue's own, real, clock: having moved the fake clock, the test
// changes a label so that the check runs at once.
func TestWorkloadRebalancerTTL(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	start := time.Date(2026, 3, 2, 10, 0, 0, 0, time.UTC)
	clk := testingclock.NewFakeClock(start)
	m := mode{name: "workloadrebalancer", suffix: "rebalancer", fastPaths: fastpath.All()}
	ctl := runControllers(t, m, func(o *controllermanager.Options) {
		o.Controllers = []string{workloadrebalancer.ControllerName}
		o.Clock = clk
	})
	ns := "rebalancer-ttl"
	e := &env{T: t, ctx: t.Context(), controlPlane: theStack.controlPlane, members: theStack.members, ns: ns, ctl: ctl}
	e.create(e.controlPlane, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
	t.Cleanup(func() { deleteNamespace(t, ctl, ns) })
	e.create(e.controlPlane, &workv1alpha2.ResourceBinding{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: binding.Name("web", "Deployment")},
		Spec:       workv1alpha2.ResourceBindingSpec{Resource: workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: ns, Name: "web"}},
	})

	wr := e.rebalancer(ptr.To[int32](60), e.deploymentRef("web"))
	e.createClusterScoped(wr)
	got := e.waitRebalanced(wr, 1)
	if !got.Status.FinishTime.Time.Equal(start) {
		t.Fatalf("finishTime %s, want the fake clock's %s", got.Status.FinishTime, start)
	}
	if r := resultOf(got, "web"); r.Result != appsv1alpha1.RebalanceSuccessful {
		t.Errorf("web: %+v, want Successful", r)
	}

	// 59 s later a new workload is listed: the rebalancer, not yet
	// expired, finishes again then, and its TTL starts again.
	clk.Step(59 * time.Second)
	update(e, e.controlPlane, wr, func(w *appsv1alpha1.WorkloadRebalancer) {
		w.Spec.Workloads = append(w.Spec.Workloads, e.deploymentRef("api"))
	})
	got = e.waitRebalanced(wr, 2)
	if want := start.Add(59 * time.Second); !got.Status.FinishTime.Time.Equal(want) {
		t.Fatalf("finishTime of generation 2 %s, want %s", got.Status.FinishTime, want)
	}

	// 60 s after that, the TTL is over. A reconcile already queued (the echo of the last
	// status write) may see it first; else a nudge brings one.
	clk.Step(60 * time.Second)
	nudge := client.MergeFrom(wr.DeepCopy())
	withLabel := wr.DeepCopy()
	withLabel.Labels = map[string]string{"nudge": "1"}
	if err := e.controlPlane.Patch(e.ctx, withLabel, nudge); err != nil && !apierrors.IsNotFound(err) {
		t.Fatalf("nudge the rebalancer: %v", err)
	}
	e.waitGone(e.controlPlane, wr, "the rebalancer deleted 60 s after it finished")
}

// rebalancer is a WorkloadRebalancer named after the case's namespace (it
// is cluster-scoped) listing workloads, with ttl as its
// ttlSecondsAfterFinished.
func (e *env) rebalancer(ttl *int32, workloads ...appsv1alpha1.ObjectReference) *appsv1alpha1.WorkloadRebalancer {
	return &appsv1alpha1.WorkloadRebalancer{
		ObjectMeta: metav1.ObjectMeta{Name: e.ns + "-rebalance"},
		Spec:       appsv1alpha1.WorkloadRebalancerSpec{Workloads: workloads, TTLSecondsAfterFinished: ttl},
	}
}

// deploymentRef names the Deployment name of the case's namespace as a
// rebalancer lists it.
func (e *env) deploymentRef(name string) appsv1alpha1.ObjectReference {
	return appsv1alpha1.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: e.ns, Name: name}
}

// waitRebalanced waits until the rebalancer's status describes generation
// (observedGeneration, a result for each listed workload, a finishTime),
// and returns it.
func (e *env) waitRebalanced(wr *appsv1alpha1.WorkloadRebalancer, generation int64) *appsv1alpha1.WorkloadRebalancer {
	e.Helper()
	return waitFor(e, e.controlPlane, wr, fmt.Sprintf("the rebalancer's status of generation %d", generation), func(w *appsv1alpha1.WorkloadRebalancer) (bool, string) {
		s := w.Status
		return w.Generation == generation && s.ObservedGeneration == generation && len(s.ObservedWorkloads) == len(w.Spec.Workloads) && s.FinishTime != nil,
			describe(w.Generation, s)
	})
}

// resultOf is the observed result of the Deployment name in w's status.
func resultOf(w *appsv1alpha1.WorkloadRebalancer, name string) appsv1alpha1.ObservedWorkload {
	for _, o := range w.Status.ObservedWorkloads {
		if o.Workload.Kind == "Deployment" && o.Workload.Name == name {
			return o
		}
	}
	return appsv1alpha1.ObservedWorkload{}
}

// triggeredAt reports whether a binding's rescheduleTriggeredAt is at.
func triggeredAt(t *metav1.Time, at metav1.Time) bool {
	return t != nil && t.Equal(&at)
}
