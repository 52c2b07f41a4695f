package execution

import (
	"errors"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestFirstReportWait(t *testing.T) {
	now := time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC)
	fresh := &workv1alpha1.Work{}
	reported := &workv1alpha1.Work{}
	reported.Status.Conditions = []metav1.Condition{{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue}}
	for _, tc := range []struct {
		name string
		a    applied
		w    *workv1alpha1.Work
		want time.Duration
	}{
		{"a new object its controllers have not seen waits the rest of the grace",
			applied{createdAt: now.Add(-500 * time.Millisecond)}, fresh, FirstReportGrace - 500*time.Millisecond},
		{"once the grace is over it is reported as it is (a member without controllers)",
			applied{createdAt: now.Add(-FirstReportGrace - time.Second)}, fresh, 0},
		{"an object its controllers observed is reported at once",
			applied{settled: true, createdAt: now}, fresh, 0},
		{"a failure is reported at once",
			applied{errs: []error{errors.New("refused")}, createdAt: now}, fresh, 0},
		{"only the first report waits",
			applied{createdAt: now}, reported, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.a.firstReportWait(tc.w, now); got != tc.want {
				t.Errorf("firstReportWait = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestSetDispatching(t *testing.T) {
	w := &workv1alpha1.Work{}
	if changed, news := setDispatching(w, false); !changed || news {
		t.Errorf("a first True condition is written with the report and raises no event: changed %v, news %v", changed, news)
	}
	if changed, _ := setDispatching(w, false); changed {
		t.Error("the same condition again is no change")
	}
	if changed, news := setDispatching(w, true); !changed || !news {
		t.Errorf("suspending is a change and news: changed %v, news %v", changed, news)
	}
	c := w.Status.Conditions[0]
	if c.Type != workv1alpha1.WorkDispatching || c.Status != metav1.ConditionFalse || c.Reason != "SuspendDispatching" || c.Message != "Work dispatching is in a suspended state." {
		t.Errorf("suspended condition = %+v", c)
	}
	if changed, news := setDispatching(w, false); !changed || !news {
		t.Errorf("resuming is a change and news: changed %v, news %v", changed, news)
	}
	if fresh := (&workv1alpha1.Work{}); func() bool { _, news := setDispatching(fresh, true); return !news }() {
		t.Error("a Work born suspended raises the event")
	}
}

// TestSetReport: the report a Work's write and its provisional post to the
// status board share: Applied at the Work's generation, Dispatching, and the
// manifest statuses, which a failure without statuses leaves as they were.
func TestSetReport(t *testing.T) {
	w := &workv1alpha1.Work{}
	w.Generation = 3
	statuses := []workv1alpha1.ManifestStatus{{Health: workv1alpha1.ResourceHealthy}}
	setReport(w, statuses, nil)
	applied := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
	if applied == nil || applied.Status != metav1.ConditionTrue || applied.Reason != workv1alpha1.WorkAppliedSuccessfulReason || applied.ObservedGeneration != 3 {
		t.Fatalf("Applied after a success = %+v, want True (AppliedSuccessful) at generation 3", applied)
	}
	if meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkDispatching) == nil || len(w.Status.ManifestStatuses) != 1 {
		t.Errorf("status after a success = %+v, want Dispatching and the manifest status", w.Status)
	}
	setReport(w, nil, errors.New("refused"))
	applied = meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied)
	if applied.Status != metav1.ConditionFalse || applied.Reason != workv1alpha1.WorkAppliedFailedReason || applied.Message != "refused" {
		t.Errorf("Applied after a failure = %+v, want False (AppliedFailed) with the error", applied)
	}
	if len(w.Status.ManifestStatuses) != 1 {
		t.Error("a failure without statuses dropped the manifest statuses reported before")
	}
}
