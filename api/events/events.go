// Package events holds the reasons of the Kubernetes events Flotilla's
// controllers raise, with Karmada's strings, so that `kubectl get events
// --field-selector reason=...`, alerts and dashboards written for Karmada
// keep working. A Succeed reason is a Normal event, a Failed one a Warning;
// each is raised when the outcome changes, not on every retry.
package events

// Events on resource templates.
const (
	// ApplyPolicySucceed: a PropagationPolicy or ClusterPropagationPolicy
	// claimed the template and its binding was written.
	ApplyPolicySucceed = "ApplyPolicySucceed"
	// ApplyPolicyFailed: the claiming policy could not be applied (the
	// binding could not be written).
	ApplyPolicyFailed = "ApplyPolicyFailed"
	// PreemptPolicySucceed: a policy with preemption Always took the
	// template from the policy that held it (the message names both); one
	// event per preemption.
	PreemptPolicySucceed = "PreemptPolicySucceed"
	// PreemptPolicyFailed: a policy allowed to preempt could not take the
	// template (the message names both policies and the error).
	PreemptPolicyFailed = "PreemptPolicyFailed"
	// ApplyOverridePolicySucceed: an OverridePolicy or ClusterOverridePolicy
	// was applied to the template's copy for a cluster (one event per
	// policy and cluster, raised by the binding controller when it first
	// applies, or applies again after a failure).
	ApplyOverridePolicySucceed = "ApplyOverridePolicySucceed"
	// ApplyOverridePolicyFailed: an override policy could not be applied
	// for a cluster (the message names the policy, the cluster and the
	// cause; that cluster keeps its previous copy).
	ApplyOverridePolicyFailed = "ApplyOverridePolicyFailed"
)

// Events on ResourceBindings and ClusterResourceBindings, repeated on their
// resource template.
const (
	// ScheduleBindingSucceed: the scheduler placed the binding.
	ScheduleBindingSucceed = "ScheduleBindingSucceed"
	// ScheduleBindingFailed: no placement fits (reason and message as in the
	// Scheduled condition).
	ScheduleBindingFailed = "ScheduleBindingFailed"
	// SyncWorkSucceed: every target cluster's Work holds the current
	// rendering of the template.
	SyncWorkSucceed = "SyncWorkSucceed"
	// SyncWorkFailed: some target cluster's Work could not be rendered or
	// written (an OverridePolicy that does not apply, a vanished cluster).
	SyncWorkFailed = "SyncWorkFailed"
	// AggregateStatusSucceed: the template's status was written from its
	// members' status.
	AggregateStatusSucceed = "AggregateStatusSucceed"
	// AggregateStatusFailed: the aggregated status could not be written.
	AggregateStatusFailed = "AggregateStatusFailed"
	// SyncScheduleResultToDependenciesSucceed: a workload binding with
	// propagateDeps has its clusters recorded in the binding of every
	// dependency (spec.requiredBy). On the workload binding only.
	SyncScheduleResultToDependenciesSucceed = "SyncScheduleResultToDependenciesSucceed"
	// SyncScheduleResultToDependenciesFailed: some dependency could not
	// follow: it does not exist on the control plane (named in the
	// message), or its binding could not be written.
	SyncScheduleResultToDependenciesFailed = "SyncScheduleResultToDependenciesFailed"
)

// Events on Works, repeated on their resource template.
const (
	// SyncSucceed: the Work's manifests were applied to its member cluster.
	SyncSucceed = "SyncSucceed"
	// SyncFailed: the Work's manifests could not be applied.
	SyncFailed = "SyncFailed"
	// WorkDispatching (Normal, on the Work): its Dispatching condition
	// changed, that is, dispatching to the member was suspended or resumed
	// (Karmada's policy suspension, Work.spec.suspendDispatching).
	WorkDispatching = "WorkDispatching"
)

// Events on policies whose content breaks a rule that CEL cannot express (a
// cron schedule, a time zone, an override value).
const (
	// ValidationFailed: the object breaks such a rule; the message names
	// every bad field.
	ValidationFailed = "ValidationFailed"
	// ValidationSucceeded: an object that failed validation was fixed.
	ValidationSucceeded = "ValidationSucceeded"
)

// FederatedHPA events use the Kubernetes HPA's reasons, which are also its condition
// reasons; they are listed with those in package autoscalingv1alpha1
// (api/autoscaling/v1alpha1/federatedhpa_reasons.go), such as SuccessfulRescaleReason.

// CronFederatedHPA events, Karmada's reasons. ScaleTargetConflict is
// Flotilla's: Karmada only documents the conflict.
const (
	// StartRuleFailed: a rule cannot be scheduled (its schedule or
	// timeZone does not parse).
	StartRuleFailed = "StartRuleFailed"
	// ScaleFailed: a rule ran and could not scale its target.
	ScaleFailed = "ScaleFailed"
	// UpdateCronFederatedHPAFailed: the execution history could not be
	// written.
	UpdateCronFederatedHPAFailed = "UpdateCronFederatedHPAFailed"
	// ScaleTargetConflict: the workload a CronFederatedHPA scales is also
	// managed by a FederatedHPA.
	ScaleTargetConflict = "ScaleTargetConflict"
)

// MultiClusterService events, Karmada's reasons, on the MultiClusterService.
const (
	// SyncServiceSucceed: the Service is propagated to the provider and
	// consumer clusters (condition ServiceApplied True).
	SyncServiceSucceed = "SyncServiceSucceed"
	// SyncServiceFailed: it is not, or not to every cluster named (the
	// message says why; condition ServiceApplied False).
	SyncServiceFailed = "SyncServiceFailed"
	// DispatchEndpointSliceSucceed: every consumer has the providers'
	// EndpointSlices (condition EndpointSliceDispatched True).
	DispatchEndpointSliceSucceed = "DispatchEndpointSliceSucceed"
	// DispatchEndpointSliceFailed: some could not be written.
	DispatchEndpointSliceFailed = "DispatchEndpointSliceFailed"
	// ClusterNotFound: a provider or consumer named is not a registered
	// cluster; it is skipped.
	ClusterNotFound = "ClusterNotFound"
	// MCSLoadBalance: the load balancer of a LoadBalancer
	// MultiClusterService was set up (Normal) or could not be (Warning);
	// Karmada's multicluster-cloud-provider's reason.
	MCSLoadBalance = "MCSLoadBalance"
)

// Condition reasons of a MultiClusterService, Karmada's: ServiceApplied is
// True with ServiceAppliedSucceed or False with ServiceAppliedFailed;
// EndpointSliceDispatched likewise with EndpointSliceDispatchedSucceed and
// EndpointSliceDispatchedFailed.
const (
	ServiceAppliedSucceed          = "ServiceAppliedSucceed"
	ServiceAppliedFailed           = "ServiceAppliedFailed"
	EndpointSliceDispatchedSucceed = "EndpointSliceDispatchedSucceed"
	EndpointSliceDispatchedFailed  = "EndpointSliceDispatchedFailed"
)

// Failover events, Karmada's: raised on a binding and its template when the
// taint manager (or application failover) takes the resource off a cluster.
const (
	// EvictWorkloadFromClusterSucceed: the resource was evicted from the
	// cluster (a graceful eviction task records it while the copy stays).
	EvictWorkloadFromClusterSucceed = "EvictWorkloadFromClusterSucceed"
	// EvictWorkloadFromClusterFailed: the eviction could not be written.
	EvictWorkloadFromClusterFailed = "EvictWorkloadFromClusterFailed"
)
