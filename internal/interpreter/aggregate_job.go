package interpreter

import (
	"fmt"
	"strings"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Reasons and messages of the Job conditions AggregateStatus sets on a template, as Karmada
// words them.
const (
	jobFailedReason    = "JobFailed"
	jobCompletedReason = "Completed"
	jobCompletedMsg    = "Job completed"
)

// aggregateJob computes a Job template's status, following Karmada:
//   - a template that already has a Complete or Failed condition is final and left alone;
//   - active, succeeded and failed are summed over the clusters;
//   - a Failed condition is set when the Job failed in any cluster, naming those clusters;
//   - a Complete condition is set when the Job completed in every cluster;
//   - startTime is the earliest start, completionTime the latest completion once every cluster
//     has completed.
//
// Karmada stamps the new conditions with the current time; to stay a pure function this uses
// the latest transition time of the matching member conditions instead. With no items at all
// the template is left alone (Karmada would declare such a Job complete).
func aggregateJob(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	old := batchv1.JobStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	if finished, _ := jobFinished(old.Conditions); finished || len(items) == 0 {
		return template, nil
	}

	next := batchv1.JobStatus{}
	var failedIn []string
	var failedAt, completedAt *metav1.Time
	completed, withCompletionTime := 0, 0
	for _, item := range items {
		member := batchv1.JobStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		next.Active += member.Active
		next.Succeeded += member.Succeeded
		next.Failed += member.Failed
		switch finished, cond := jobFinished(member.Conditions); {
		case finished && cond.Type == batchv1.JobComplete:
			completed++
			completedAt = later(completedAt, &cond.LastTransitionTime)
		case finished && cond.Type == batchv1.JobFailed:
			failedIn = append(failedIn, item.ClusterName)
			failedAt = later(failedAt, &cond.LastTransitionTime)
		}
		if member.StartTime != nil && (next.StartTime == nil || member.StartTime.Before(next.StartTime)) {
			next.StartTime = member.StartTime
		}
		if member.CompletionTime != nil {
			withCompletionTime++
			next.CompletionTime = later(next.CompletionTime, member.CompletionTime)
		}
	}
	// The API server accepts a terminal condition only after its
	// interim one (Kubernetes 1.31+): FailureTarget before Failed,
	// SuccessCriteriaMet before Complete.
	if len(failedIn) > 0 {
		msg := fmt.Sprintf("Job executed failed in member clusters %s", strings.Join(failedIn, ","))
		next.Conditions = append(next.Conditions,
			jobCondition(batchv1.JobFailureTarget, jobFailedReason, msg, failedAt),
			jobCondition(batchv1.JobFailed, jobFailedReason, msg, failedAt))
	}
	if completed == len(items) {
		next.Conditions = append(next.Conditions,
			jobCondition(batchv1.JobSuccessCriteriaMet, jobCompletedReason, jobCompletedMsg, completedAt),
			jobCondition(batchv1.JobComplete, jobCompletedReason, jobCompletedMsg, completedAt))
	}
	if withCompletionTime != len(items) {
		next.CompletionTime = nil
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// jobFinished reports whether a Job has a true Complete or Failed condition, and which.
func jobFinished(conds []batchv1.JobCondition) (bool, batchv1.JobCondition) {
	for _, c := range conds {
		if (c.Type == batchv1.JobComplete || c.Type == batchv1.JobFailed) && c.Status == corev1.ConditionTrue {
			return true, c
		}
	}
	return false, batchv1.JobCondition{}
}

func jobCondition(t batchv1.JobConditionType, reason, msg string, at *metav1.Time) batchv1.JobCondition {
	c := batchv1.JobCondition{Type: t, Status: corev1.ConditionTrue, Reason: reason, Message: msg}
	if at != nil {
		c.LastProbeTime, c.LastTransitionTime = *at, *at
	}
	return c
}

// later returns the later of two times, either of which may be nil or zero.
func later(a, b *metav1.Time) *metav1.Time {
	if b == nil || b.IsZero() {
		return a
	}
	if a == nil || a.Before(b) {
		return b
	}
	return a
}

// aggregateCronJob computes a CronJob template's status, as Karmada does: the active Jobs of all
// clusters, and the latest lastScheduleTime and lastSuccessfulTime.
func aggregateCronJob(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	old := batchv1.CronJobStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	next := batchv1.CronJobStatus{}
	for _, item := range items {
		member := batchv1.CronJobStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		next.Active = append(next.Active, member.Active...)
		next.LastScheduleTime = later(next.LastScheduleTime, member.LastScheduleTime)
		next.LastSuccessfulTime = later(next.LastSuccessfulTime, member.LastSuccessfulTime)
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}
