package status

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

func work(applied metav1.ConditionStatus, msg string, status string) *workv1alpha1.Work {
	w := &workv1alpha1.Work{}
	w.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: applied, Message: msg}}
	w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Status: &runtime.RawExtension{Raw: []byte(status)}, Health: workv1alpha1.ResourceHealthy}}
	return w
}

func TestAggregate(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "member2"}, {Name: "member1"}, {Name: "member3"}}
	works := map[string]*workv1alpha1.Work{
		"member1": work(metav1.ConditionTrue, "", `{"readyReplicas":1}`),
		"member2": work(metav1.ConditionFalse, "already exists", `{}`),
		// member3 has no Work yet; member4 is not a target and must not appear.
		"member4": work(metav1.ConditionTrue, "", `{}`),
	}
	items, cond := Aggregate(targets, works)
	if len(items) != 3 || items[0].ClusterName != "member1" || items[1].ClusterName != "member2" || items[2].ClusterName != "member3" {
		t.Fatalf("items not one per target, sorted: %+v", items)
	}
	if !items[0].Applied || items[0].Health != workv1alpha2.ResourceHealthy || string(items[0].Status.Raw) != `{"readyReplicas":1}` {
		t.Errorf("member1 item: %+v", items[0])
	}
	if items[1].Applied || items[1].AppliedMessage != "already exists" {
		t.Errorf("member2 item should carry the failure: %+v", items[1])
	}
	if cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.FullyAppliedFailedReason || cond.Message != "Not applied yet in 2 of 3 clusters: member2, member3" {
		t.Errorf("condition: %+v", cond)
	}
	works["member2"] = work(metav1.ConditionTrue, "", `{}`)
	works["member3"] = work(metav1.ConditionTrue, "", `{}`)
	if _, cond := Aggregate(targets, works); cond.Status != metav1.ConditionTrue || cond.Reason != workv1alpha2.FullyAppliedSuccessReason {
		t.Errorf("all applied: %+v", cond)
	}
	if _, cond := Aggregate(nil, works); cond.Status != metav1.ConditionFalse {
		t.Errorf("no targets must not be FullyApplied: %+v", cond)
	}
}

func TestAggregateStaleRenderingIsNotFullyApplied(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member3"}}
	stale := work(metav1.ConditionTrue, "", `{}`)
	stale.Annotations = map[string]string{binding.StaleRenderingAnnotation: "override for cluster member3: /spec/nosuch does not exist"}
	works := map[string]*workv1alpha1.Work{"member1": work(metav1.ConditionTrue, "", `{}`), "member3": stale}
	items, cond := Aggregate(targets, works)
	if !items[1].Applied {
		t.Errorf("member3's Work is applied (an earlier rendering); its item should say so: %+v", items[1])
	}
	want := "The Works of 1 of 2 clusters hold an earlier version of the template: member3 (override for cluster member3: /spec/nosuch does not exist)"
	if cond.Status != metav1.ConditionFalse || cond.Reason != workv1alpha2.FullyAppliedFailedReason || cond.Message != want {
		t.Errorf("condition = %+v, want False/%s %q", cond, workv1alpha2.FullyAppliedFailedReason, want)
	}
}

func TestAggregateSuspendedDispatchingIsNotFullyApplied(t *testing.T) {
	targets := []workv1alpha2.TargetCluster{{Name: "member1"}, {Name: "member2"}}
	held := work(metav1.ConditionTrue, "", `{}`)
	held.Generation, held.Status.Conditions[0].ObservedGeneration = 3, 2
	held.Spec.SuspendDispatching = ptr.To(true)
	current := work(metav1.ConditionTrue, "", `{}`)
	current.Generation, current.Status.Conditions[0].ObservedGeneration = 2, 2
	current.Spec.SuspendDispatching = ptr.To(true)
	_, cond := Aggregate(targets, map[string]*workv1alpha1.Work{"member1": current, "member2": held})
	want := "Dispatching is suspended in 1 of 2 clusters, which hold an earlier version of the template: member2"
	if cond.Status != metav1.ConditionFalse || cond.Message != want {
		t.Errorf("condition = %+v, want False %q", cond, want)
	}
	// Suspended, but nothing changed since it was applied: fully applied.
	held.Generation = 2
	if _, cond := Aggregate(targets, map[string]*workv1alpha1.Work{"member1": current, "member2": held}); cond.Status != metav1.ConditionTrue {
		t.Errorf("a suspended Work holding the current version is applied: %+v", cond)
	}
}
