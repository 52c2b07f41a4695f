// Package events holds the reasons of the Kubernetes events Flotilla's
// controllers raise, with Karmada's strings, so that `kubectl get events
// --field-selector reason=...`, alerts and dashboards written for Karmada
// keep working. A Succeed reason is a Normal event, a Failed one a Warning;
// each is raised when the outcome changes, not on every retry.
package events

// Events on Clusters, Karmada's reasons.
const (
	// CreateExecutionSpaceSucceed (Normal, on the Cluster; cluster-controller):
	// the cluster's execution namespace karmada-es-<cluster>, where its Works
	// live, was created. One event per creation.
	CreateExecutionSpaceSucceed = "CreateExecutionSpaceSucceed"
	// CreateExecutionSpaceFailed (Warning, on the Cluster; cluster-controller):
	// the execution namespace could not be read or created; the message
	// holds the API server's error. Raised again only when the error changes.
	CreateExecutionSpaceFailed = "CreateExecutionSpaceFailed"
	// RemoveExecutionSpaceSucceed (Normal, on the Cluster being deleted;
	// cluster-controller): its Works are gone and the deletion of its
	// execution namespace was accepted. One event per deletion.
	RemoveExecutionSpaceSucceed = "RemoveExecutionSpaceSucceed"
	// RemoveExecutionSpaceFailed (Warning, on the Cluster being deleted;
	// cluster-controller): its Works or its execution namespace could not be
	// deleted; the message holds the error. Raised again only when it changes.
	RemoveExecutionSpaceFailed = "RemoveExecutionSpaceFailed"
	// TaintClusterSucceed (Normal, on the Cluster): spec.taints changed,
	// either by the cluster-controller (the NoSchedule taints
	// cluster.karmada.io/not-ready and cluster.karmada.io/unreachable follow
	// the Ready condition) or by the cluster-taint-policy-controller (a
	// ClusterTaintPolicy's addOnConditions or removeOnConditions matched).
	// The message lists the taints the cluster now has; one event per change.
	TaintClusterSucceed = "TaintClusterSucceed"
	// TaintClusterFailed (Warning, on the Cluster): such a change could not
	// be written; the message holds the error. Raised again only when it
	// changes; an optimistic-lock conflict is retried, not reported.
	TaintClusterFailed = "TaintClusterFailed"
	// SyncImpersonationConfigSucceed (Normal, on the Cluster;
	// unified-auth-controller): the Works carrying the member's
	// karmada-impersonator ClusterRole and ClusterRoleBinding now list the
	// subjects that control-plane RBAC allows on the cluster's proxy. One
	// event per change of that list.
	SyncImpersonationConfigSucceed = "SyncImpersonationConfigSucceed"
	// SyncImpersonationConfigFailed (Warning, on the Cluster;
	// unified-auth-controller): those Works could not be written; the
	// message holds the error. Raised again only when it changes.
	SyncImpersonationConfigFailed = "SyncImpersonationConfigFailed"
)

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
	// GetReplicasSucceed (Normal; resource-detector): the resource
	// interpreter told the template's replicas and per-replica requirements
	// (InterpretReplica) for its binding. Only for kinds something
	// interprets replicas of (the built-in workloads, a customization, a
	// webhook); raised on the first success and after a failure.
	GetReplicasSucceed = "GetReplicasSucceed"
	// GetReplicasFailed (Warning; resource-detector): InterpretReplica
	// failed (the message names the interpreter and its error); the binding
	// keeps its previous replicas.
	GetReplicasFailed = "GetReplicasFailed"
	// GetComponentsSucceed (Normal; resource-detector): a customization
	// told the components of a multi-pod-template workload
	// (InterpretComponent) for its binding's spec.components; raised on
	// the first success and after a failure.
	GetComponentsSucceed = "GetComponentsSucceed"
	// GetComponentsFailed (Warning; resource-detector): InterpretComponent
	// failed; the binding keeps its previous components.
	GetComponentsFailed = "GetComponentsFailed"
	// GetDependenciesSucceed (Normal, on a workload whose binding has
	// propagateDeps; dependencies-distributor): the resource interpreter
	// listed what the workload refers to (InterpretDependency). Only for
	// kinds something interprets dependencies of; raised on the first
	// success and after a failure.
	GetDependenciesSucceed = "GetDependenciesSucceed"
	// GetDependenciesFailed (Warning, on the workload;
	// dependencies-distributor): InterpretDependency failed (a pod template
	// that does not decode, a failing customization); its dependencies are
	// not followed until the workload changes.
	GetDependenciesFailed = "GetDependenciesFailed"
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
	// CleanupWorkFailed (Warning, on the binding only; binding-controller,
	// cluster-resource-binding-controller): the Works of clusters the
	// binding no longer targets, or all its Works when it is being deleted,
	// could not be listed or deleted. There is no success reason. Raised
	// again only when the error changes.
	CleanupWorkFailed = "CleanupWorkFailed"
	// DependencyPolicyConflict (Warning, on the attached binding of a
	// dependency only; dependencies-distributor): the workloads that require the
	// dependency ask for different conflictResolution (Overwrite and
	// Abort); Overwrite is used. Raised when the conflict appears or
	// changes, not on every reconcile.
	DependencyPolicyConflict = "DependencyPolicyConflict"
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
	// ReflectStatusSucceed (Normal, on the Work only;
	// work-status-controller): the status of one of its manifests' member
	// objects was read into status.manifestStatuses[].status
	// (InterpretStatus); the message names the object. One outcome per
	// object: raised on the first success and after a failure.
	ReflectStatusSucceed = "ReflectStatusSucceed"
	// ReflectStatusFailed (Warning, on the Work only;
	// work-status-controller): InterpretStatus failed for a member object
	// (the message names it and the interpreter's error); its
	// manifestStatuses entry has no status.
	ReflectStatusFailed = "ReflectStatusFailed"
	// InterpretHealthSucceed (Normal, on the Work only;
	// work-status-controller): the health of a member object was judged
	// (InterpretHealth) into status.manifestStatuses[].health. Only for
	// kinds something judges (the built-in rules of Deployments,
	// StatefulSets, Services, ..., a customization, a webhook); others are
	// Healthy without an event. Raised on the first success and after a
	// failure, not on every change of health.
	InterpretHealthSucceed = "InterpretHealthSucceed"
	// InterpretHealthFailed (Warning, on the Work only;
	// work-status-controller): InterpretHealth failed for a member object;
	// its health is Unknown.
	InterpretHealthFailed = "InterpretHealthFailed"
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
	// APIIncompatible (Warning): a provider (multiclusterservice-controller)
	// or consumer (endpointslice-dispatch-controller) cluster does not serve
	// discovery.k8s.io/v1 EndpointSlices by its status.apiEnablements; the
	// message names the clusters. No EndpointSlice is collected from such a
	// provider nor dispatched to such a consumer. Raised when the set of
	// such clusters changes.
	APIIncompatible = "APIIncompatible"
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
	// DescheduleBindingSucceed: the descheduler took replicas a member could
	// not run out of its share, for the scheduler to place elsewhere.
	DescheduleBindingSucceed = "DescheduleBindingSucceed"
	// DescheduleBindingFailed: the members could not be asked, or the
	// binding could not be written.
	DescheduleBindingFailed = "DescheduleBindingFailed"
)

// FederatedResourceQuota events, Karmada's, on the quota: SyncWorkSucceed and SyncWorkFailed
// (its ResourceQuota Works, from federatedResourceQuotaSync), AggregateStatusSucceed and
// AggregateStatusFailed (its aggregatedStatus, from federatedResourceQuotaStatus) and, with
// FederatedQuotaEnforcement:
const (
	// CollectOverallStatusSucceed: overall and overallUsed were computed from the
	// namespace's ResourceBindings.
	CollectOverallStatusSucceed = "CollectOverallStatusSucceed"
	// CollectOverallStatusFailed: they could not be computed or written.
	CollectOverallStatusFailed = "CollectOverallStatusFailed"
)

// MultiClusterIngress events, on the MultiClusterIngress (Flotilla's:
// Karmada's multicluster-cloud-provider raises none for this).
const (
	// BackendServiceNotFound (Warning; multiclusteringress-controller): a
	// backend Service has no ResourceBinding, so it has no location; the
	// message says whether the Service does not exist or is not propagated.
	// One per backend Service, raised again only when its message changes.
	BackendServiceNotFound = "BackendServiceNotFound"
	// BackendServicePortNotFound (Warning; multiclusteringress-controller):
	// a backend names a port (by number or name) its Service does not have;
	// the message lists the Service's ports. One per backend Service,
	// raised again only when its message changes.
	BackendServicePortNotFound = "BackendServicePortNotFound"
	// MCILoadBalance (multiclusteringress-controller): the provider set up
	// the load balancer of a MultiClusterIngress (Normal; the message has
	// its address) or released it because its IngressClass changed
	// (Normal), or could not set it up or release it (Warning; the message
	// has the provider's error), or no provider serves it because its
	// IngressClass does not exist, none is named and none is the default, or
	// several are the default (Warning). Raised when the outcome changes.
	MCILoadBalance = "MCILoadBalance"
)
