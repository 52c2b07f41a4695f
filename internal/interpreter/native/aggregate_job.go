package native

import (
	"cmp"
	"fmt"
	"slices"
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

// aggregateJob computes a Job template's status from its members', following Karmada:
//   - a template that already has a Complete or Failed condition is final and left alone;
//   - active, succeeded and failed are summed over the clusters;
//   - the Job fails when it failed in any cluster (the message names those clusters), and
//     completes when it completed in every cluster;
//   - startTime is the earliest start, completionTime the latest completion.
//
// Unlike Karmada's, the result is always a status update Kubernetes 1.37 accepts from the
// template's current status (pkg/apis/batch/validation ValidateJobStatusUpdate with the
// transition checks the job status strategy turns on since JobManagedBy is GA), so that the
// write cannot fail on every resync:
//   - succeeded and failed never decrease (a cluster that leaves, or is not reported for a
//     while, does not take its pods off the counts);
//   - startTime, once set, is kept (it is immutable while the Job is not suspended); a
//     suspended template's startTime follows the members';
//   - the conditions already on the template are kept, in their order (FailureTarget,
//     SuccessCriteriaMet and the terminal ones cannot be removed); new ones are appended;
//   - a Job goes one way: the first failure adds FailureTarget and the Job can no longer
//     succeed; completion everywhere adds SuccessCriteriaMet and the Job can no longer fail;
//   - the terminal condition follows its interim one (Failed after FailureTarget, Complete
//     after SuccessCriteriaMet) once no pod is active anywhere, with a startTime (the terminal
//     time when no member reported one) and, for Complete, a completionTime no earlier than
//     startTime; completionTime is set only together with Complete.
//
// Karmada stamps new conditions with the current time; to stay a pure function this uses the
// latest transition time of the matching member conditions instead. With no items at all the
// template is left alone (Karmada would write an empty status).
func aggregateJob(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	old := batchv1.JobStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	if finished, _ := jobFinished(old.Conditions); finished || len(items) == 0 {
		return template, nil
	}
	seen, err := observeJobs(items)
	if err != nil {
		return nil, err
	}
	next := batchv1.JobStatus{
		Active:     seen.active,
		Succeeded:  max(seen.succeeded, old.Succeeded),
		Failed:     max(seen.failed, old.Failed),
		StartTime:  old.StartTime,
		Conditions: slices.Clone(old.Conditions),
	}
	if suspended, _, _ := unstructured.NestedBool(template.Object, "spec", "suspend"); suspended || next.StartTime == nil {
		next.StartTime = seen.start
	}

	failing := conditionTrue(next.Conditions, batchv1.JobFailureTarget)
	succeeding := conditionTrue(next.Conditions, batchv1.JobSuccessCriteriaMet)
	allComplete := seen.completed == len(items)
	switch {
	case failing || succeeding:
		// The Job already took its way.
	case len(seen.failedIn) > 0:
		next.Conditions = append(next.Conditions, jobCondition(batchv1.JobFailureTarget, jobFailedReason, seen.failedMessage(), seen.failedAt))
		failing = true
	case allComplete:
		next.Conditions = append(next.Conditions, jobCondition(batchv1.JobSuccessCriteriaMet, jobCompletedReason, jobCompletedMsg, seen.completedAt))
		succeeding = true
	}

	if next.Active == 0 {
		finishJob(&next, &seen, failing, succeeding && allComplete)
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// finishJob appends the terminal condition to a Job status with no active pod: Failed when
// the Job is failing, Complete when it is succeeding and complete everywhere. The API server
// wants a startTime on a finished Job (the terminal time stands in when no member reported
// one) and, on a Complete one, a completionTime no earlier than startTime; without a time to
// use, the terminal condition waits.
func finishJob(next *batchv1.JobStatus, seen *jobObservation, failing, complete bool) {
	switch {
	case failing:
		target := findCondition(next.Conditions, batchv1.JobFailureTarget)
		msg, at := target.Message, seen.failedAt
		if len(seen.failedIn) > 0 {
			msg = seen.failedMessage()
		}
		if at == nil && !target.LastTransitionTime.IsZero() {
			at = &target.LastTransitionTime
		}
		if next.StartTime == nil {
			next.StartTime = at
		}
		if next.StartTime != nil {
			next.Conditions = append(next.Conditions, jobCondition(batchv1.JobFailed, jobFailedReason, msg, at))
		}
	case complete:
		at := seen.completion
		if at == nil {
			at = seen.completedAt
		}
		if at == nil {
			return
		}
		if next.StartTime == nil {
			next.StartTime = at
		}
		if at.Before(next.StartTime) {
			at = next.StartTime
		}
		next.CompletionTime = at
		condAt := seen.completedAt
		if condAt == nil {
			condAt = at
		}
		next.Conditions = append(next.Conditions, jobCondition(batchv1.JobComplete, jobCompletedReason, jobCompletedMsg, condAt))
	}
}

// jobObservation is what the members' Job statuses say together.
type jobObservation struct {
	active, succeeded, failed int32
	// completed counts the clusters whose Job is Complete; failedIn names those whose Job
	// Failed, in cluster order.
	completed int
	failedIn  []string
	// failedAt and completedAt are the latest transition times of those conditions.
	failedAt, completedAt *metav1.Time
	// start is the earliest startTime, completion the latest completionTime.
	start, completion *metav1.Time
}

// observeJobs decodes and sums the members' Job statuses; items without a status are skipped.
func observeJobs(items []workv1alpha2.AggregatedStatusItem) (jobObservation, error) {
	var seen jobObservation
	for _, item := range items {
		member := batchv1.JobStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return seen, err
		}
		if !ok {
			continue
		}
		seen.active += member.Active
		seen.succeeded += member.Succeeded
		seen.failed += member.Failed
		switch finished, cond := jobFinished(member.Conditions); {
		case finished && cond.Type == batchv1.JobComplete:
			seen.completed++
			seen.completedAt = later(seen.completedAt, &cond.LastTransitionTime)
		case finished && cond.Type == batchv1.JobFailed:
			seen.failedIn = append(seen.failedIn, item.ClusterName)
			seen.failedAt = later(seen.failedAt, &cond.LastTransitionTime)
		}
		if member.StartTime != nil && (seen.start == nil || member.StartTime.Before(seen.start)) {
			seen.start = member.StartTime
		}
		seen.completion = later(seen.completion, member.CompletionTime)
	}
	return seen, nil
}

// failedMessage is Karmada's message for a Job that failed in some member clusters.
func (o *jobObservation) failedMessage() string {
	return fmt.Sprintf("Job executed failed in member clusters %s", strings.Join(o.failedIn, ","))
}

// conditionTrue reports whether conds has a condition of type t with status True.
func conditionTrue(conds []batchv1.JobCondition, t batchv1.JobConditionType) bool {
	return findCondition(conds, t).Status == corev1.ConditionTrue
}

// findCondition returns the first condition of type t with status True, or a zero condition.
func findCondition(conds []batchv1.JobCondition, t batchv1.JobConditionType) batchv1.JobCondition {
	for _, c := range conds {
		if c.Type == t && c.Status == corev1.ConditionTrue {
			return c
		}
	}
	return batchv1.JobCondition{}
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
// clusters, and the latest lastScheduleTime and lastSuccessfulTime. The active Jobs are sorted
// by namespace, name and UID (each member names its Jobs from the schedule, so the same name
// can come from several clusters), for one order whatever the order of the reports.
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
	slices.SortStableFunc(next.Active, func(a, b corev1.ObjectReference) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Name, b.Name), cmp.Compare(a.UID, b.UID))
	})
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}
