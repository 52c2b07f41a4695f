package cronfederatedhpa

import (
	"context"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
)

var t0 = time.Date(2026, 11, 30, 9, 0, 0, 0, time.UTC)

func success(min int, replicas int32) outcome {
	return outcome{rule: "up", success: &autoscalingv1alpha1.SuccessfulExecution{
		ScheduleTime: timePtr(t0.Add(time.Duration(min) * time.Minute)), ExecutionTime: timePtr(t0.Add(time.Duration(min)*time.Minute + time.Second)),
		AppliedReplicas: ptr.To(replicas)}}
}

func cronObj(rules ...autoscalingv1alpha1.CronFederatedHPARule) *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "web"},
		Spec:       autoscalingv1alpha1.CronFederatedHPASpec{Rules: rules},
	}
}

func TestHistoryIsNewestFirstAndTrimmed(t *testing.T) {
	obj := cronObj(autoscalingv1alpha1.CronFederatedHPARule{Name: "up", Schedule: "*/1 * * * *", SuccessfulHistoryLimit: ptr.To[int32](2)})
	var pending []outcome
	for i := range 3 {
		pending = append(pending, success(i, int32(i+1)))
		obj.Status = desiredStatus(obj, map[string]*ruleState{"up": {next: t0.Add(time.Duration(i+1) * time.Minute)}}, pending)
		pending = nil
	}
	h := obj.Status.ExecutionHistories
	if len(h) != 1 || h[0].RuleName != "up" {
		t.Fatalf("histories %+v", h)
	}
	got := h[0].SuccessfulExecutions
	if len(got) != 2 || *got[0].AppliedReplicas != 3 || *got[1].AppliedReplicas != 2 {
		t.Errorf("want the two newest runs, newest first (3, 2); got %+v", got)
	}
	if !h[0].NextExecutionTime.Equal(timePtr(t0.Add(3 * time.Minute))) {
		t.Errorf("nextExecutionTime %s", h[0].NextExecutionTime)
	}
	// Default limits are 3; a failed run goes in its own list.
	obj.Spec.Rules[0].SuccessfulHistoryLimit = nil
	fail := outcome{rule: "up", failure: &autoscalingv1alpha1.FailedExecution{ScheduleTime: timePtr(t0), ExecutionTime: timePtr(t0), Message: "gone"}}
	st := desiredStatus(obj, nil, []outcome{fail, success(5, 9), success(6, 10)})
	if n := len(st.ExecutionHistories[0].SuccessfulExecutions); n != 3 {
		t.Errorf("default limit: %d successful runs kept, want 3", n)
	}
	if f := st.ExecutionHistories[0].FailedExecutions; len(f) != 1 || f[0].Message != "gone" {
		t.Errorf("failed runs %+v", f)
	}
	if st.ExecutionHistories[0].NextExecutionTime != nil {
		t.Errorf("a rule with no next run (suspended) shows %s", st.ExecutionHistories[0].NextExecutionTime)
	}
}

func TestHistoryOfADeletedRuleGoes(t *testing.T) {
	obj := cronObj(autoscalingv1alpha1.CronFederatedHPARule{Name: "up"}, autoscalingv1alpha1.CronFederatedHPARule{Name: "down"})
	obj.Status = desiredStatus(obj, nil, []outcome{success(0, 3), {rule: "down", success: success(1, 1).success}})
	obj.Spec.Rules = obj.Spec.Rules[1:]
	st := desiredStatus(obj, nil, nil)
	if len(st.ExecutionHistories) != 1 || st.ExecutionHistories[0].RuleName != "down" || len(st.ExecutionHistories[0].SuccessfulExecutions) != 1 {
		t.Errorf("want only rule down's history, got %+v", st.ExecutionHistories)
	}
}

func TestAnOutcomeAlreadyWrittenIsNotAddedTwice(t *testing.T) {
	obj := cronObj(autoscalingv1alpha1.CronFederatedHPARule{Name: "up"})
	run := success(0, 3)
	obj.Status = desiredStatus(obj, nil, []outcome{run})
	// The write succeeded but its answer was lost: the next write retries it.
	st := desiredStatus(obj, nil, []outcome{run})
	if n := len(st.ExecutionHistories[0].SuccessfulExecutions); n != 1 {
		t.Errorf("%d entries for one run", n)
	}
}

func TestBoundsAreRecordedUnswapped(t *testing.T) {
	obj := cronObj(autoscalingv1alpha1.CronFederatedHPARule{Name: "up"})
	run := outcome{rule: "up", success: &autoscalingv1alpha1.SuccessfulExecution{ScheduleTime: timePtr(t0), ExecutionTime: timePtr(t0),
		AppliedMinReplicas: ptr.To[int32](2), AppliedMaxReplicas: ptr.To[int32](8)}}
	e := desiredStatus(obj, nil, []outcome{run}).ExecutionHistories[0].SuccessfulExecutions[0]
	if *e.AppliedMinReplicas != 2 || *e.AppliedMaxReplicas != 8 || e.AppliedReplicas != nil {
		t.Errorf("recorded %+v", e)
	}
}

// newTestReconciler has a fake clock and no API access: enough for plan and
// arm, which decide when rules run.
func newTestReconciler(now time.Time, window time.Duration) (*Reconciler, *clocktesting.FakeClock) {
	clk := clocktesting.NewFakeClock(now)
	r := &Reconciler{Clock: clk, Location: time.UTC, MissedRunWindow: window, Recorder: record.NewFakeRecorder(10),
		objects: map[types.NamespacedName]*objectState{}, wake: statusgate.NewWakeup(), stopped: make(chan struct{})}
	return r, clk
}

func TestPlanKeepsUnchangedRulesAndReschedulesEditedOnes(t *testing.T) {
	r, clk := newTestReconciler(t0.Add(30*time.Second), 0)
	obj := cronObj(
		autoscalingv1alpha1.CronFederatedHPARule{Name: "a", Schedule: "*/5 * * * *", TargetReplicas: ptr.To[int32](2)},
		autoscalingv1alpha1.CronFederatedHPARule{Name: "b", Schedule: "*/5 * * * *", TargetReplicas: ptr.To[int32](2)})
	key := types.NamespacedName{Namespace: "default", Name: "web"}
	st, first := r.state(key)
	r.plan(context.Background(), obj, st, first)
	a, b := st.rules["a"], st.rules["b"]
	if !a.next.Equal(t0.Add(5 * time.Minute)) {
		t.Fatalf("a: next %s", a.next)
	}
	// A label edit, or a new scaleTargetRef, changes no rule: both keep their
	// state (a target change is not seen as a change again and again).
	clk.Step(2 * time.Minute)
	obj.Labels = map[string]string{"x": "y"}
	obj.Spec.ScaleTargetRef.Name = "other"
	st, first = r.state(key)
	r.plan(context.Background(), obj, st, first)
	if st.rules["a"] != a || st.rules["b"] != b {
		t.Error("an unchanged rule was rescheduled")
	}
	// Editing rule b reschedules only b.
	obj.Spec.Rules[1].Schedule = "*/1 * * * *"
	r.plan(context.Background(), obj, st, false)
	if st.rules["a"] != a || st.rules["b"] == b || !st.rules["b"].next.Equal(t0.Add(3*time.Minute)) {
		t.Errorf("after editing b: a kept=%t, b next %s", st.rules["a"] == a, st.rules["b"].next)
	}
	// Suspending b clears its next run; unsuspending schedules it from now.
	obj.Spec.Rules[1].Suspend = ptr.To(true)
	r.plan(context.Background(), obj, st, false)
	if !st.rules["b"].next.IsZero() {
		t.Errorf("suspended b: next %s", st.rules["b"].next)
	}
	clk.Step(10 * time.Minute)
	obj.Spec.Rules[1].Suspend = ptr.To(false)
	r.plan(context.Background(), obj, st, false)
	if want := t0.Add(13 * time.Minute); !st.rules["b"].next.Equal(want) {
		t.Errorf("unsuspended b: next %s, want %s", st.rules["b"].next, want)
	}
}

func TestTimerWakesTheObjectAtItsNextRun(t *testing.T) {
	r, clk := newTestReconciler(t0.Add(30*time.Second), 0)
	obj := cronObj(autoscalingv1alpha1.CronFederatedHPARule{Name: "a", Schedule: "*/1 * * * *", TargetReplicas: ptr.To[int32](2)})
	key := types.NamespacedName{Namespace: "default", Name: "web"}
	st, first := r.state(key)
	r.plan(context.Background(), obj, st, first)
	r.arm(key, st)
	clk.Step(29 * time.Second)
	select {
	case <-r.wake:
		t.Fatal("woke a second early")
	default:
	}
	clk.Step(time.Second)
	select {
	case ev := <-r.wake:
		if ev.Object.GetName() != "web" || ev.Object.GetNamespace() != "default" {
			t.Errorf("woke %s/%s", ev.Object.GetNamespace(), ev.Object.GetName())
		}
	case <-time.After(5 * time.Second):
		t.Fatal("not woken at the minute")
	}
	// A deleted object's timer is stopped.
	r.arm(key, st)
	r.forget(key)
	clk.Step(time.Hour)
	select {
	case <-r.wake:
		t.Error("a forgotten object woke")
	case <-time.After(50 * time.Millisecond):
	}
}

func TestFirstSightMakesUpTheMissedRun(t *testing.T) {
	r, _ := newTestReconciler(t0.Add(2*time.Minute+10*time.Second), 5*time.Minute)
	obj := cronObj(autoscalingv1alpha1.CronFederatedHPARule{Name: "a", Schedule: "0 9 * * *", TargetReplicas: ptr.To[int32](2)})
	obj.Status.ExecutionHistories = []autoscalingv1alpha1.ExecutionHistory{{RuleName: "a", NextExecutionTime: timePtr(t0)}}
	st, first := r.state(types.NamespacedName{Namespace: "default", Name: "web"})
	r.plan(context.Background(), obj, st, first)
	if !st.rules["a"].next.Equal(t0) {
		t.Errorf("next %s, want the missed %s (due now)", st.rules["a"].next, t0)
	}
}
