package v1alpha2

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// ResourceBinding is Karmada's binding of one namespaced resource template to the policy that
// claimed it: it carries the template's replica needs and placement to the scheduler, holds
// the scheduling result (spec.clusters), and collects the per-cluster status. It lives next
// to the template, in the same namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourcebindings,scope=Namespaced,shortName=rb,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="ROLLOUT",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Progressing")].reason`
type ResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the binding's desired state.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the scheduling and propagation state observed.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ResourceBindingSpec is the spec shared by ResourceBinding and ClusterResourceBinding
// (Karmada's ResourceBindingSpec).
type ResourceBindingSpec struct {
	// Resource is the resource template this binding is for.
	// +required
	Resource ObjectReference `json:"resource"`

	// PropagateDeps is copied from the policy: dependencies follow the resource.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// ReplicaRequirements are the scheduling needs of one replica of the resource.
	// +optional
	ReplicaRequirements *ReplicaRequirements `json:"replicaRequirements,omitempty"`

	// Replicas is the resource's desired replica count; 0 for kinds without replicas.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Components describe each pod template of a multi-template workload (for example the
	// roles of a training job). It replaces ReplicaRequirements and Replicas when the
	// MultiplePodTemplatesScheduling feature is on.
	// +optional
	Components []Component `json:"components,omitempty"`

	// Clusters is the scheduling result: the target clusters and their replica counts.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`

	// Placement is copied from the policy.
	// +optional
	Placement *policyv1alpha1.Placement `json:"placement,omitempty"`

	// GracefulEvictionTasks are evictions in progress: the resource is being removed from
	// these clusters once its replacement is healthy or a grace period ends.
	// +optional
	GracefulEvictionTasks []GracefulEvictionTask `json:"gracefulEvictionTasks,omitempty"`

	// RequiredBy lists the bindings that depend on this resource (it is propagated as their
	// dependency) and the clusters they were scheduled to.
	// +optional
	RequiredBy []BindingSnapshot `json:"requiredBy,omitempty"`

	// SchedulerName is copied from the policy.
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover is copied from the policy.
	// +optional
	Failover *policyv1alpha1.FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution is the resolved conflict handling (policy field or template
	// annotation): Abort or Overwrite. Defaults to Abort.
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +kubebuilder:default="Abort"
	// +optional
	ConflictResolution policyv1alpha1.ConflictResolution `json:"conflictResolution,omitempty"`

	// RescheduleTriggeredAt requests a full rescheduling when it is later than
	// status.lastScheduledTime (set by `karmadactl` / WorkloadRebalancer).
	// +optional
	RescheduleTriggeredAt *metav1.Time `json:"rescheduleTriggeredAt,omitempty"`

	// Suspension is copied from the policy, plus the binding-only Scheduling switch.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion is copied from the policy.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority is the resolved scheduling priority of the workload.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`

	// WorkloadAffinityGroups are the affinity and anti-affinity groups the resource belongs
	// to, resolved from placement.workloadAffinity. Only used on ResourceBinding.
	// +optional
	WorkloadAffinityGroups *WorkloadAffinityGroups `json:"workloadAffinityGroups,omitempty"`
}

// ObjectReference identifies the resource template of a binding.
type ObjectReference struct {
	// APIVersion of the resource template.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the resource template.
	// +required
	Kind string `json:"kind"`

	// Namespace of the resource template; empty for cluster-scoped ones.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the resource template.
	// +required
	Name string `json:"name"`

	// UID of the resource template.
	// +optional
	UID types.UID `json:"uid,omitempty"`

	// ResourceVersion of the resource template last seen.
	// +optional
	ResourceVersion string `json:"resourceVersion,omitempty"`
}

// ReplicaRequirements are the scheduling needs of one replica.
type ReplicaRequirements struct {
	// NodeClaim is the node selection of the replica's pod.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// ResourceRequest is the resource request of one replica.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// Namespace is the namespace of the resource, used to look up quotas.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// PriorityClassName is the priority class of the replica's pod.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// ComponentReplicaRequirements are the scheduling needs of one replica of a component.
type ComponentReplicaRequirements struct {
	// NodeClaim is the node selection of the component's pods.
	// +optional
	NodeClaim *NodeClaim `json:"nodeClaim,omitempty"`

	// ResourceRequest is the resource request of one replica of the component.
	// +optional
	ResourceRequest corev1.ResourceList `json:"resourceRequest,omitempty"`

	// PriorityClassName is the priority class of the component's pods.
	// +optional
	PriorityClassName string `json:"priorityClassName,omitempty"`
}

// NodeClaim is the node selection of a replica's pod.
type NodeClaim struct {
	// HardNodeAffinity is the pod's required node affinity.
	// +optional
	HardNodeAffinity *corev1.NodeSelector `json:"hardNodeAffinity,omitempty"`

	// NodeSelector is the pod's node selector.
	// +optional
	NodeSelector map[string]string `json:"nodeSelector,omitempty"`

	// Tolerations are the pod's tolerations.
	// +optional
	Tolerations []corev1.Toleration `json:"tolerations,omitempty"`
}

// Component is one pod template of a multi-template workload.
type Component struct {
	// Name identifies the component; unique within the resource.
	// +kubebuilder:validation:MaxLength=32
	// +required
	Name string `json:"name"`

	// Replicas is the component's replica count.
	// +required
	Replicas int32 `json:"replicas"`

	// ReplicaRequirements are the scheduling needs of one replica of the component.
	// +optional
	ReplicaRequirements *ComponentReplicaRequirements `json:"replicaRequirements,omitempty"`
}

// TargetCluster is one cluster of a scheduling result.
type TargetCluster struct {
	// Name of the member cluster.
	// +required
	Name string `json:"name"`

	// Replicas assigned to the cluster.
	// +optional
	Replicas int32 `json:"replicas,omitempty"`

	// Components are the per-component replicas assigned to the cluster.
	// +optional
	Components []ComponentReplicas `json:"components,omitempty"`
}

// ComponentReplicas is the replica count of one component in one cluster.
type ComponentReplicas struct {
	// Name of the component.
	// +required
	Name string `json:"name"`

	// Replicas of the component in the cluster.
	// +required
	Replicas int32 `json:"replicas"`
}

// GracefulEvictionTask is one eviction of the resource from a cluster that waits for the
// replacement to become healthy (Karmada's graceful eviction).
type GracefulEvictionTask struct {
	// FromCluster is the cluster the resource is evicted from.
	// +required
	FromCluster string `json:"fromCluster"`

	// PurgeMode is how the evicted copy is removed: Directly, Gracefully or Never.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never
	// +optional
	PurgeMode policyv1alpha1.PurgeMode `json:"purgeMode,omitempty"`

	// Replicas is the number of replicas evicted; nil for kinds without replicas.
	// +optional
	Replicas *int32 `json:"replicas,omitempty"`

	// Reason is a CamelCase identifier of why the eviction happened.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +kubebuilder:validation:Pattern=`^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$`
	// +required
	Reason string `json:"reason"`

	// Message is a human-readable explanation.
	// +kubebuilder:validation:MaxLength=1024
	// +optional
	Message string `json:"message,omitempty"`

	// Producer is the controller that started the eviction.
	// +required
	Producer string `json:"producer"`

	// GracePeriodSeconds is the longest wait, in seconds, before the evicted copy is deleted
	// even if the replacement is not healthy. Cannot be combined with SuppressDeletion.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// SuppressDeletion keeps the evicted copy until a person or tool clears it. Cannot be
	// combined with GracePeriodSeconds.
	// +optional
	SuppressDeletion *bool `json:"suppressDeletion,omitempty"`

	// PreservedLabelState is state taken from the evicted copy (see StatePreservation),
	// injected as labels into the replacement.
	// +optional
	PreservedLabelState map[string]string `json:"preservedLabelState,omitempty"`

	// ClustersBeforeFailover are the clusters the application ran in before the failover.
	// +optional
	ClustersBeforeFailover []string `json:"clustersBeforeFailover,omitempty"`

	// CreationTimestamp is when the task was created, set by the server side.
	// +optional
	CreationTimestamp *metav1.Time `json:"creationTimestamp,omitempty"`
}

// BindingSnapshot records a dependent binding and where it was scheduled.
type BindingSnapshot struct {
	// Namespace of the dependent binding.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the dependent binding.
	// +required
	Name string `json:"name"`

	// Clusters the dependent binding was scheduled to.
	// +optional
	Clusters []TargetCluster `json:"clusters,omitempty"`
}

// Suspension is the policy's Suspension plus the binding-only Scheduling switch.
type Suspension struct {
	policyv1alpha1.Suspension `json:",inline"`

	// Scheduling, when true, stops scheduling the binding.
	// +optional
	Scheduling *bool `json:"scheduling,omitempty"`
}

// SchedulePriority is the resolved scheduling priority of a workload.
type SchedulePriority struct {
	// Priority is the value of the workload's priority class; higher is scheduled first.
	// +kubebuilder:default=0
	// +optional
	Priority int32 `json:"priority,omitempty"`
}

// WorkloadAffinityGroups are the groups a workload belongs to.
type WorkloadAffinityGroups struct {
	// AffinityGroup is the workload's affinity group.
	// +optional
	AffinityGroup string `json:"affinityGroup,omitempty"`

	// AntiAffinityGroup is the workload's anti-affinity group.
	// +optional
	AntiAffinityGroup string `json:"antiAffinityGroup,omitempty"`
}

// ResourceBindingStatus is the status shared by ResourceBinding and ClusterResourceBinding.
type ResourceBindingStatus struct {
	// SchedulerObservedGeneration is the generation the scheduler last acted on.
	// +optional
	SchedulerObservedGeneration int64 `json:"schedulerObservedGeneration,omitempty"`

	// SchedulerObservedAffinityName is the affinityName of the clusterAffinities group the
	// last scheduling used.
	// +optional
	SchedulerObservedAffinityName string `json:"schedulerObservingAffinityName,omitempty"`

	// LastScheduledTime is when the binding was last scheduled.
	// +optional
	LastScheduledTime *metav1.Time `json:"lastScheduledTime,omitempty"`

	// Conditions of the binding: Scheduled, FullyApplied, ...
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// AggregatedStatus is the status of the resource in each target cluster.
	// +optional
	AggregatedStatus []AggregatedStatusItem `json:"aggregatedStatus,omitempty"`

	// Rollout is Flotilla's staged rollout of the template's latest change,
	// when the claiming policy names a rollout.flotilla.io strategy
	// (annotation rollout.flotilla.io/strategy). Not a Karmada field.
	// +optional
	Rollout *RolloutStatus `json:"rollout,omitempty"`
}

// AggregatedStatusItem is the status of the resource in one member cluster.
type AggregatedStatusItem struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Status is the resource's status in that cluster.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Applied tells whether the resource was applied to the cluster.
	// +optional
	Applied bool `json:"applied,omitempty"`

	// AppliedMessage explains a failure to apply.
	// +optional
	AppliedMessage string `json:"appliedMessage,omitempty"`

	// Health of the resource in the cluster: Healthy, Unhealthy or Unknown.
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceHealth is the health of a propagated object: Healthy, Unhealthy or Unknown.
type ResourceHealth string

const (
	// ResourceHealthy means the object is working as intended.
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy means the object is not working as intended.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown means health could not be judged.
	ResourceUnknown ResourceHealth = "Unknown"
)

// Condition types of ResourceBinding.status.conditions, as Karmada names them.
const (
	// Scheduled is True when the scheduler found target clusters for the binding.
	Scheduled = "Scheduled"
	// FullyApplied is True when the resource was applied to every target cluster.
	FullyApplied = "FullyApplied"
)

// Reasons of the Scheduled condition, with Karmada's strings.
const (
	// BindingReasonSuccess: the scheduler placed the binding.
	BindingReasonSuccess = "Success"
	// BindingReasonNoClusterFit: no cluster passed the placement's filters
	// (affinity, taints, API enablement, spread constraints); spec.clusters
	// is emptied.
	BindingReasonNoClusterFit = "NoClusterFit"
	// BindingReasonUnschedulable: clusters fit but cannot hold the replicas
	// (capacity, spread); the last placement is kept.
	BindingReasonUnschedulable = "Unschedulable"
	// BindingReasonSchedulerError: the placement could not be evaluated (an
	// invalid selector, an unknown value); the last placement is kept.
	BindingReasonSchedulerError = "SchedulerError"
	// BindingReasonQuotaExceeded: the placement would take the namespace's
	// bindings past a FederatedResourceQuota's spec.overall
	// (FederatedQuotaEnforcement); the last placement is kept.
	BindingReasonQuotaExceeded = "QuotaExceeded"
)

// Reasons of the FullyApplied condition, with Karmada's strings.
const (
	// FullyAppliedSuccessReason: every target cluster's Work is applied and
	// holds the current rendering of the template.
	FullyAppliedSuccessReason = "FullyAppliedSuccess"
	// FullyAppliedFailedReason: some target cluster's Work is not applied
	// yet, failed, or holds an earlier rendering; the message names them.
	FullyAppliedFailedReason = "FullyAppliedFailed"
)

// ResourceBindingList is a list of ResourceBinding.
//
// +kubebuilder:object:root=true
type ResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the bindings.
	Items []ResourceBinding `json:"items"`
}
