package cronfederatedhpa

import (
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// defaultHistoryLimit is the default of successfulHistoryLimit and
// failedHistoryLimit, Karmada's.
const defaultHistoryLimit = 3

// outcome is one run of a rule, waiting to be written to the status.
type outcome struct {
	rule string
	// success is set for a run that applied; failure for one that did not.
	success *autoscalingv1alpha1.SuccessfulExecution
	failure *autoscalingv1alpha1.FailedExecution
}

func limit(p *int32) int {
	if p == nil {
		return defaultHistoryLimit
	}
	return int(*p)
}

// desiredStatus is the status of obj given each rule's next run and the
// outcomes not yet written. It has one history per rule, in spec order;
// histories of rules that no longer exist are dropped. Outcomes go in
// newest first and each list is trimmed to the rule's limit. An outcome
// already in the status (same scheduleTime and executionTime, from a write
// that succeeded though its answer was lost) is not added twice.
func desiredStatus(obj *autoscalingv1alpha1.CronFederatedHPA, rules map[string]*ruleState, pending []outcome) autoscalingv1alpha1.CronFederatedHPAStatus {
	old := map[string]*autoscalingv1alpha1.ExecutionHistory{}
	for i := range obj.Status.ExecutionHistories {
		h := &obj.Status.ExecutionHistories[i]
		old[h.RuleName] = h
	}
	var out autoscalingv1alpha1.CronFederatedHPAStatus
	for i := range obj.Spec.Rules {
		rule := &obj.Spec.Rules[i]
		h := autoscalingv1alpha1.ExecutionHistory{RuleName: rule.Name}
		if o := old[rule.Name]; o != nil {
			h.SuccessfulExecutions = append([]autoscalingv1alpha1.SuccessfulExecution(nil), o.SuccessfulExecutions...)
			h.FailedExecutions = append([]autoscalingv1alpha1.FailedExecution(nil), o.FailedExecutions...)
		}
		for _, p := range pending {
			if p.rule != rule.Name {
				continue
			}
			switch {
			case p.success != nil && !hasSuccess(h.SuccessfulExecutions, p.success):
				h.SuccessfulExecutions = append([]autoscalingv1alpha1.SuccessfulExecution{*p.success}, h.SuccessfulExecutions...)
			case p.failure != nil && !hasFailure(h.FailedExecutions, p.failure):
				h.FailedExecutions = append([]autoscalingv1alpha1.FailedExecution{*p.failure}, h.FailedExecutions...)
			}
		}
		if n := limit(rule.SuccessfulHistoryLimit); len(h.SuccessfulExecutions) > n {
			h.SuccessfulExecutions = h.SuccessfulExecutions[:n]
		}
		if n := limit(rule.FailedHistoryLimit); len(h.FailedExecutions) > n {
			h.FailedExecutions = h.FailedExecutions[:n]
		}
		if len(h.SuccessfulExecutions) == 0 {
			h.SuccessfulExecutions = nil
		}
		if len(h.FailedExecutions) == 0 {
			h.FailedExecutions = nil
		}
		if rs := rules[rule.Name]; rs != nil && !rs.next.IsZero() {
			h.NextExecutionTime = timePtr(rs.next)
		}
		out.ExecutionHistories = append(out.ExecutionHistories, h)
	}
	return out
}

func sameTime(a, b *metav1.Time) bool {
	return a != nil && b != nil && a.Equal(b)
}

func hasSuccess(list []autoscalingv1alpha1.SuccessfulExecution, e *autoscalingv1alpha1.SuccessfulExecution) bool {
	for i := range list {
		if sameTime(list[i].ScheduleTime, e.ScheduleTime) && sameTime(list[i].ExecutionTime, e.ExecutionTime) {
			return true
		}
	}
	return false
}

func hasFailure(list []autoscalingv1alpha1.FailedExecution, e *autoscalingv1alpha1.FailedExecution) bool {
	for i := range list {
		if sameTime(list[i].ScheduleTime, e.ScheduleTime) && sameTime(list[i].ExecutionTime, e.ExecutionTime) {
			return true
		}
	}
	return false
}

// timePtr is t as the API stores it: whole seconds, in UTC. Karmada's
// times are in seconds too.
func timePtr(t time.Time) *metav1.Time {
	mt := metav1.NewTime(t.UTC().Truncate(time.Second))
	return &mt
}
