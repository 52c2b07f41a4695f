package scheduler

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/quota"
)

// Reasons of a binding's Scheduled condition, with Karmada's strings (defined in work/v1alpha2).
// ConditionReason maps a Schedule error to one of them.
const (
	// ReasonSuccess: the binding was scheduled.
	ReasonSuccess = workv1alpha2.BindingReasonSuccess
	// ReasonNoClusterFit: every cluster was filtered out (see NoClusterFitError).
	ReasonNoClusterFit = workv1alpha2.BindingReasonNoClusterFit
	// ReasonUnschedulable: clusters fit, but the replicas or spread constraints cannot be
	// satisfied right now, for example for lack of resources (see UnschedulableError).
	ReasonUnschedulable = workv1alpha2.BindingReasonUnschedulable
	// ReasonSchedulerError: anything else, for example a placement that does not compile.
	ReasonSchedulerError = workv1alpha2.BindingReasonSchedulerError
	// ReasonQuotaExceeded: a FederatedResourceQuota refuses the placement (quota.ExceededError).
	ReasonQuotaExceeded = workv1alpha2.BindingReasonQuotaExceeded
)

// messageLimit bounds NoClusterFitError messages, well below the 32768-byte limit of a
// metav1.Condition message, so that thousands of clusters cannot make the status unwritable.
const messageLimit = 4096

// Rejection is why the filters rejected one cluster.
type Rejection struct {
	// Cluster is the member cluster name.
	Cluster string
	// Reason is a short phrase, for example "cluster is not Ready" or
	// "not in clusterAffinity.clusterNames".
	Reason string
}

// NoClusterFitError is returned when the filters reject every cluster: Karmada's
// "0/N clusters are available" diagnosis, meant for the message of the Scheduled=False
// condition with reason NoClusterFit.
type NoClusterFitError struct {
	// Total is the number of clusters considered.
	Total int
	// AffinityName is the placement.clusterAffinities term whose filtering produced the
	// rejections (the last one tried); empty when the placement has no clusterAffinities.
	AffinityName string
	// Rejections holds one entry per rejected cluster, sorted by cluster name.
	Rejections []Rejection
}

// Error returns a one-line message such as
// "0/3 clusters are available: member1: cluster is not Ready; member2: not in
// clusterAffinity.clusterNames; member3: API apps/v1/Deployment not enabled".
// When listing every cluster would exceed a few kilobytes, clusters sharing a reason are
// counted instead: "0/500 clusters are available: 498 clusters: cluster is not Ready (member1,
// member2, member3, ...); ...".
func (e *NoClusterFitError) Error() string {
	head := fmt.Sprintf("0/%d clusters are available", e.Total)
	if e.AffinityName != "" {
		head += fmt.Sprintf(" in clusterAffinities[%s]", e.AffinityName)
	}
	if len(e.Rejections) == 0 {
		return head
	}
	parts := make([]string, len(e.Rejections))
	for i, r := range e.Rejections {
		parts[i] = r.Cluster + ": " + r.Reason
	}
	msg := head + ": " + strings.Join(parts, "; ")
	if len(msg) <= messageLimit {
		return msg
	}
	msg = head + ": " + strings.Join(e.groupedReasons(), "; ")
	if len(msg) > messageLimit {
		msg = msg[:messageLimit-4] + " ..."
	}
	return msg
}

// groupedReasons counts the clusters of each reason, most common first, naming a few of them.
func (e *NoClusterFitError) groupedReasons() []string {
	const examples = 3
	byReason := map[string][]string{}
	for _, r := range e.Rejections {
		byReason[r.Reason] = append(byReason[r.Reason], r.Cluster)
	}
	reasons := make([]string, 0, len(byReason))
	for reason := range byReason {
		reasons = append(reasons, reason)
	}
	sort.Slice(reasons, func(i, j int) bool {
		a, b := len(byReason[reasons[i]]), len(byReason[reasons[j]])
		if a != b {
			return a > b
		}
		return reasons[i] < reasons[j]
	})
	out := make([]string, len(reasons))
	for i, reason := range reasons {
		names := byReason[reason]
		shown := strings.Join(names[:min(len(names), examples)], ", ")
		if len(names) > examples {
			shown += ", ..."
		}
		out[i] = fmt.Sprintf("%d cluster(s): %s (%s)", len(names), reason, shown)
	}
	return out
}

// UnschedulableError is returned when clusters pass the filters but the placement still
// cannot be met: the spread constraints ask for more groups than the feasible clusters form,
// or the clusters lack the resources for the replicas (Aggregated and dynamic weight
// division). It maps to Karmada's Unschedulable reason.
type UnschedulableError struct {
	// Message explains what could not be met, with the numbers involved.
	Message string
}

// Error returns Message.
func (e *UnschedulableError) Error() string { return e.Message }

func unschedulable(format string, args ...any) error {
	return &UnschedulableError{Message: fmt.Sprintf(format, args...)}
}

// ConditionReason maps the error returned by Schedule or Decide to the reason of the
// binding's Scheduled condition: nil gives ReasonSuccess, a *NoClusterFitError
// ReasonNoClusterFit, an *UnschedulableError ReasonUnschedulable, anything else
// ReasonSchedulerError. Use err.Error() as the condition message.
func ConditionReason(err error) string {
	var noFit *NoClusterFitError
	var unsched *UnschedulableError
	var exceeded *quota.ExceededError
	switch {
	case err == nil:
		return ReasonSuccess
	case errors.As(err, &exceeded):
		return ReasonQuotaExceeded
	case errors.As(err, &noFit):
		return ReasonNoClusterFit
	case errors.As(err, &unsched):
		return ReasonUnschedulable
	default:
		return ReasonSchedulerError
	}
}
