package scheduling

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// bindingOf is a ResourceBinding of replicas with placement p, scheduled to
// clusters (name, replicas pairs) from the placement applied.
func bindingOf(p *policyv1alpha1.Placement, replicas int32, applied string, clusters ...any) *workv1alpha2.ResourceBinding {
	b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web-deployment"}}
	b.Spec.Placement, b.Spec.Replicas = p, replicas
	if applied != "" {
		b.Annotations = map[string]string{binding.AppliedPlacementAnnotation: applied}
	}
	for i := 0; i+1 < len(clusters); i += 2 {
		b.Spec.Clusters = append(b.Spec.Clusters, workv1alpha2.TargetCluster{Name: clusters[i].(string), Replicas: clusters[i+1].(int32)})
	}
	return b
}

func TestScheduleTypeSaysWhatChangedSinceTheLastDecision(t *testing.T) {
	divided := &policyv1alpha1.Placement{ReplicaScheduling: &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDivided}}
	duplicated := &policyv1alpha1.Placement{}
	placement := func(p *policyv1alpha1.Placement) string {
		return binding.AppliedPlacement(&workv1alpha2.ResourceBindingSpec{Placement: p})
	}
	earlier, later := metav1.NewTime(time.Unix(100, 0)), metav1.NewTime(time.Unix(200, 0))
	rescheduled := bindingOf(divided, 4, placement(divided), "member1", int32(2), "member2", int32(2))
	rescheduled.Spec.RescheduleTriggeredAt, rescheduled.Status.LastScheduledTime = &later, &earlier
	for name, tc := range map[string]struct {
		b    *workv1alpha2.ResourceBinding
		want metrics.ScheduleType
	}{
		"a new binding has no decision yet":                            {bindingOf(divided, 4, ""), metrics.FirstSchedule},
		"a binding prescheduled at creation has one":                   {bindingOf(divided, 4, "", "member1", int32(4)), metrics.ReconcileSchedule},
		"a binding nothing fitted has one (an empty one)":              {bindingOf(divided, 4, placement(divided)), metrics.ReconcileSchedule},
		"a new placement is scheduled afresh":                          {bindingOf(divided, 4, placement(duplicated), "member1", int32(4)), metrics.ReconcileSchedule},
		"divided replicas that no longer add up are a scale":           {bindingOf(divided, 6, placement(divided), "member1", int32(2), "member2", int32(2)), metrics.ScaleSchedule},
		"duplicated replicas that differ are a scale":                  {bindingOf(duplicated, 3, placement(duplicated), "member1", int32(2), "member2", int32(2)), metrics.ScaleSchedule},
		"nothing of the binding changed: the clusters did, or a retry": {bindingOf(divided, 4, placement(divided), "member1", int32(2), "member2", int32(2)), metrics.ReconcileSchedule},
		"a requested reschedule is a reconcile":                        {rescheduled, metrics.ReconcileSchedule},
	} {
		t.Run(name, func(t *testing.T) {
			if got := scheduleType(tc.b, placement(tc.b.Spec.Placement)); got != tc.want {
				t.Errorf("scheduleType = %s, want %s", got, tc.want)
			}
		})
	}
}
