package dnsdetector

import (
	"errors"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestThresholds(t *testing.T) {
	th := Thresholds{Success: 30 * time.Second, Failure: 10 * time.Second}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	fail := errors.New("no such host")
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	steps := []struct {
		sec    int
		err    error
		want   metav1.ConditionStatus
		reason string
	}{
		{0, nil, metav1.ConditionTrue, ReasonReady},     // the first observation, at once
		{5, fail, metav1.ConditionTrue, ReasonReady},    // failing for 0 s
		{10, nil, metav1.ConditionTrue, ReasonReady},    // a success resets the failure's clock
		{15, fail, metav1.ConditionTrue, ReasonReady},   // failing since 15
		{24, fail, metav1.ConditionTrue, ReasonReady},   // 9 s < 10 s
		{25, fail, metav1.ConditionFalse, ReasonFailed}, // 10 s: reported
		{30, nil, metav1.ConditionFalse, ReasonFailed},  // resolving since 30
		{59, nil, metav1.ConditionFalse, ReasonFailed},  // 29 s < 30 s
		{60, nil, metav1.ConditionTrue, ReasonReady},    // 30 s: reported
	}
	var lastTransition metav1.Time
	for _, s := range steps {
		got := th.Observe(at(s.sec), s.err)
		if got.Type != ConditionType || got.Status != s.want || got.Reason != s.reason {
			t.Fatalf("at %d s: %s %s, want %s %s", s.sec, got.Status, got.Reason, s.want, s.reason)
		}
		if got.Status == s.want && s.sec == 25 {
			lastTransition = got.LastTransitionTime
		}
	}
	if !lastTransition.Time.Equal(at(25)) {
		t.Errorf("the False condition's lastTransitionTime is %s, want when it was reported", lastTransition)
	}
}

func TestDiffers(t *testing.T) {
	c := metav1.Condition{Type: ConditionType, Status: metav1.ConditionTrue, Reason: ReasonReady, Message: "ok"}
	if Differs([]metav1.Condition{c}, c) || !Differs(nil, c) {
		t.Errorf("Differs: an equal condition differs, or a missing one does not")
	}
	other := c
	other.Status = metav1.ConditionFalse
	if !Differs([]metav1.Condition{c}, other) {
		t.Errorf("a status change does not differ")
	}
}

// A restarted detector starts from the Cluster's condition: recovery still
// waits out the success threshold.
func TestSeed(t *testing.T) {
	th := Thresholds{Success: 30 * time.Second}
	th.Seed(&metav1.Condition{Type: ConditionType, Status: metav1.ConditionFalse, Reason: ReasonFailed})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if got := th.Observe(t0, nil); got.Status != metav1.ConditionFalse {
		t.Errorf("the first success after a restart: %s, want the seeded False until the threshold", got.Status)
	}
	if got := th.Observe(t0.Add(30*time.Second), nil); got.Status != metav1.ConditionTrue {
		t.Errorf("after the success threshold: %s, want True", got.Status)
	}
}
