package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// PropagationPolicy is Karmada's namespaced propagation policy: it selects resource templates
// in its own namespace and says to which member clusters, and how, they are propagated.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=propagationpolicies,scope=Namespaced,shortName=pp,categories=karmada-io
// +kubebuilder:printcolumn:name="CONFLICT-RESOLUTION",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="PRIORITY",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type PropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the propagation rule set.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// PropagationSpec is the spec shared by PropagationPolicy and ClusterPropagationPolicy
// (Karmada's PropagationSpec).
//
// +kubebuilder:validation:XValidation:rule="!has(self.preemption) || self.preemption != 'Always' || self.resourceSelectors.all(s, has(s.name) && size(s.name) > 0)",message="spec.resourceSelectors[*].name must be set in every selector when spec.preemption is Always, so that preemption never takes over resources by accident",fieldPath=.resourceSelectors
// +kubebuilder:validation:XValidation:rule="!has(self.failover) || !has(self.failover.application) || (has(self.propagateDeps) && self.propagateDeps)",message="spec.propagateDeps must be true when spec.failover.application is set, so that dependencies migrate with the application",fieldPath=.propagateDeps
type PropagationSpec struct {
	// ResourceSelectors choose the resource templates this policy propagates. At least one is
	// required: an empty list never means "everything", so that Secrets and the like are not
	// propagated by accident.
	// +kubebuilder:validation:MinItems=1
	// +required
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`

	// Association tells whether resources referenced by the selected ones (for example a
	// ConfigMap mounted by a Deployment) are selected too.
	// Deprecated: Karmada replaced it by PropagateDeps.
	// +optional
	Association bool `json:"association,omitempty"`

	// PropagateDeps makes the dependencies of a selected resource (ConfigMaps, Secrets,
	// ServiceAccounts, PersistentVolumeClaims it references) follow it to the same clusters,
	// including during failover. Defaults to false.
	// +optional
	PropagateDeps bool `json:"propagateDeps,omitempty"`

	// Placement says which member clusters receive the selected resources and how replicas are
	// divided among them.
	// +optional
	Placement Placement `json:"placement,omitempty"`

	// Priority orders policies that select the same resource template: the higher value wins.
	// Ties go to the more precise selector (name, then labelSelector, then apiVersion/kind
	// only) and then to the alphabetically first policy name. Once a template is claimed,
	// a higher-priority policy takes it over only if it allows preemption.
	// +kubebuilder:default=0
	// +optional
	Priority *int32 `json:"priority,omitempty"`

	// Preemption says whether this policy may take resource templates already claimed by a
	// policy of lower priority (Always) or not (Never). A PropagationPolicy may preempt any
	// ClusterPropagationPolicy; a ClusterPropagationPolicy only lower-priority ones of its kind.
	// +kubebuilder:validation:Enum=Always;Never
	// +kubebuilder:default=Never
	// +optional
	Preemption PreemptionBehavior `json:"preemption,omitempty"`

	// DependentOverrides names OverridePolicies (in the policy's namespace) that must exist
	// before this policy takes effect, so that resources and their overrides created together
	// are never propagated without the overrides. Other matching overrides still apply.
	// +optional
	DependentOverrides []string `json:"dependentOverrides,omitempty"`

	// SchedulerName is the scheduler that places the selected resources.
	// +kubebuilder:default="default-scheduler"
	// +optional
	SchedulerName string `json:"schedulerName,omitempty"`

	// Failover says how applications are migrated away from failing clusters or failing
	// applications. Nil disables application failover.
	// +optional
	Failover *FailoverBehavior `json:"failover,omitempty"`

	// ConflictResolution says what happens when a propagated resource already exists in a
	// member cluster and Karmada does not manage it yet: Abort (the default) leaves it alone
	// and reports an error, Overwrite takes it over. The annotation
	// work.karmada.io/conflict-resolution on the resource template overrides this value.
	// +kubebuilder:validation:Enum=Abort;Overwrite
	// +kubebuilder:default="Abort"
	// +optional
	ConflictResolution ConflictResolution `json:"conflictResolution,omitempty"`

	// ActivationPreference says when policy changes reach the selected templates: empty means
	// at once; Lazy means only when each resource template itself next changes.
	// +kubebuilder:validation:Enum=Lazy
	// +optional
	ActivationPreference ActivationPreference `json:"activationPreference,omitempty"`

	// Suspension pauses parts of the propagation. Nil means nothing is paused.
	// +optional
	Suspension *Suspension `json:"suspension,omitempty"`

	// PreserveResourcesOnDeletion keeps the propagated resources in the member clusters when
	// the resource template is deleted. It applies to all clusters alike, and never to
	// deleting the policy itself, which leaves propagated resources alone anyway.
	// Defaults to false.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`

	// SchedulePriority gives the selected workloads a scheduling priority, which orders the
	// scheduler's queue. It is unrelated to Priority, which orders policies.
	// +optional
	SchedulePriority *SchedulePriority `json:"schedulePriority,omitempty"`
}

// ResourceSelector selects resource templates by apiVersion and kind and, optionally, by
// namespace, name or labels.
type ResourceSelector struct {
	// APIVersion of the selected resources, for example "apps/v1".
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the selected resources, for example "Deployment".
	// +required
	Kind string `json:"kind"`

	// Namespace of the selected resources. Empty means the namespace of a PropagationPolicy,
	// or every namespace for a ClusterPropagationPolicy.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the selected resource. Empty selects every resource that matches the rest.
	// +optional
	Name string `json:"name,omitempty"`

	// LabelSelector selects by labels. It is ignored when Name is set.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// ConflictResolution is how an existing, unmanaged resource in a member cluster is treated:
// Abort or Overwrite.
type ConflictResolution string

const (
	// ConflictOverwrite takes over and overwrites a resource that already exists in the member
	// cluster; useful when migrating existing workloads in batches.
	ConflictOverwrite ConflictResolution = "Overwrite"

	// ConflictAbort leaves an existing, unmanaged resource alone and reports the conflict.
	ConflictAbort ConflictResolution = "Abort"
)

// PreemptionBehavior is whether a policy may preempt resource templates from policies of lower
// priority: Always or Never.
type PreemptionBehavior string

const (
	// PreemptAlways lets the policy take over templates claimed by lower-priority policies.
	PreemptAlways PreemptionBehavior = "Always"

	// PreemptNever keeps claimed templates with the policy that claimed them.
	PreemptNever PreemptionBehavior = "Never"
)

// ActivationPreference is when policy changes reach the resource templates; only Lazy is defined.
type ActivationPreference string

const (
	// LazyActivation defers a policy change until the resource template itself changes.
	LazyActivation ActivationPreference = "Lazy"
)

// Suspension pauses parts of propagation (Karmada's Suspension).
//
// +kubebuilder:validation:XValidation:rule="!has(self.dispatching) || !self.dispatching || !has(self.dispatchingOnClusters) || !has(self.dispatchingOnClusters.clusterNames) || size(self.dispatchingOnClusters.clusterNames) == 0",message="suspension.dispatching cannot be combined with suspension.dispatchingOnClusters.clusterNames"
type Suspension struct {
	// Dispatching, when true, stops propagating changes to every member cluster.
	// Nil means not suspended.
	// +optional
	Dispatching *bool `json:"dispatching,omitempty"`

	// DispatchingOnClusters stops propagating changes to the listed clusters only.
	// +optional
	DispatchingOnClusters *SuspendClusters `json:"dispatchingOnClusters,omitempty"`
}

// SuspendClusters lists the member clusters on which dispatching is suspended.
type SuspendClusters struct {
	// ClusterNames are the names of the clusters.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// SchedulePriority selects the scheduling priority of propagated workloads
// (Karmada's policy SchedulePriority).
type SchedulePriority struct {
	// PriorityClassSource is where the PriorityClass is looked up. Only KubePriorityClass
	// (scheduling.k8s.io/v1 PriorityClass in the control plane) is accepted.
	// +kubebuilder:validation:Enum=KubePriorityClass
	// +required
	PriorityClassSource PriorityClassSource `json:"priorityClassSource"`

	// PriorityClassName names the PriorityClass.
	// +required
	PriorityClassName string `json:"priorityClassName"`
}

// PriorityClassSource is where a workload's PriorityClass is found.
type PriorityClassSource string

const (
	// KubePriorityClass is a scheduling.k8s.io/v1 PriorityClass.
	KubePriorityClass PriorityClassSource = "KubePriorityClass"
	// PodPriorityClass is the priorityClassName of the workload's pod template (reserved).
	PodPriorityClass PriorityClassSource = "PodPriorityClass"
	// FederatedPriorityClass is a Karmada FederatedPriorityClass (reserved).
	FederatedPriorityClass PriorityClassSource = "FederatedPriorityClass"
)

// PropagationPolicyList is a list of PropagationPolicy.
//
// +kubebuilder:object:root=true
type PropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the policies.
	Items []PropagationPolicy `json:"items"`
}
