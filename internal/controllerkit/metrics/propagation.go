package metrics

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// The propagation path's metrics, Karmada's names: the detector finding and
// applying a policy, the binding controller syncing Works, the execution
// controller applying a Work to its member, and preemption.
var (
	matchPolicy = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "resource_match_policy_duration_seconds",
		Help:    "Seconds the detector took to find the PropagationPolicy or ClusterPropagationPolicy of a resource template.",
		Buckets: millisecondBuckets(),
	})
	applyPolicy = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "resource_apply_policy_duration_seconds",
		Help:    "Seconds the detector took to apply a policy to a resource template (its claim and its binding), by result: success or error.",
		Buckets: millisecondBuckets(),
	}, []string{"result"})
	policyApplyAttempts = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policy_apply_attempts_total",
		Help: "Number of times the detector applied a policy to a resource template, by result: success or error.",
	}, []string{"result"})
	bindingSyncWork = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "binding_sync_work_duration_seconds",
		Help:    "Seconds the binding controller took to sync the Works of a ResourceBinding or ClusterResourceBinding, by result: success or error.",
		Buckets: millisecondBuckets(),
	}, []string{"result"})
	workSyncWorkload = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "work_sync_workload_duration_seconds",
		Help:    "Seconds the execution controller took to apply the manifests of a Work to its member cluster, by result: success or error.",
		Buckets: millisecondBuckets(),
	}, []string{"result"})
	policyPreemption = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "policy_preemption_total",
		Help: "Number of preemptions of resource templates by a higher-priority policy, by result: success or error.",
	}, []string{"result"})
)

// Resolved series: each record is one atomic update.
var (
	applyPolicyBy      = newByResult(applyPolicy)
	bindingSyncWorkBy  = newByResult(bindingSyncWork)
	workSyncWorkloadBy = newByResult(workSyncWorkload)
	applyAttemptsOK    = policyApplyAttempts.WithLabelValues(ResultSuccess)
	applyAttemptsErr   = policyApplyAttempts.WithLabelValues(ResultError)
	preemptionOK       = policyPreemption.WithLabelValues(ResultSuccess)
	preemptionErr      = policyPreemption.WithLabelValues(ResultError)
)

func propagationCollectors() []prometheus.Collector {
	return []prometheus.Collector{matchPolicy, applyPolicy, policyApplyAttempts, bindingSyncWork, workSyncWorkload, policyPreemption}
}

// ObserveMatchPolicy records, in resource_match_policy_duration_seconds (no
// labels), that finding the policy of one resource template took d.
func ObserveMatchPolicy(d time.Duration) { matchPolicy.Observe(d.Seconds()) }

// ObserveApplyPolicy records one application of a policy to a resource
// template (its claim and its binding written), which took d and returned
// err: resource_apply_policy_duration_seconds and
// policy_apply_attempts_total, each with result success or error.
func ObserveApplyPolicy(err error, d time.Duration) {
	applyPolicyBy.observe(err, d)
	if err != nil {
		applyAttemptsErr.Inc()
		return
	}
	applyAttemptsOK.Inc()
}

// ObserveBindingSyncWork records, in binding_sync_work_duration_seconds
// (result success or error), that syncing the Works of one binding took d
// and returned err.
func ObserveBindingSyncWork(err error, d time.Duration) { bindingSyncWorkBy.observe(err, d) }

// ObserveWorkSyncWorkload records, in work_sync_workload_duration_seconds
// (result success or error), that applying the manifests of one Work to its
// member cluster took d and returned err.
func ObserveWorkSyncWorkload(err error, d time.Duration) { workSyncWorkloadBy.observe(err, d) }

// CountPolicyPreemption counts one preemption of a resource template in
// policy_preemption_total: result success when the preempting policy took
// the template, error when the attempt failed.
func CountPolicyPreemption(err error) {
	if err != nil {
		preemptionErr.Inc()
		return
	}
	preemptionOK.Inc()
}
