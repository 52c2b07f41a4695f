package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// Work is Karmada's unit of delivery: the manifests, with overrides applied, that one member
// cluster must run. Works live in the cluster's execution namespace karmada-es-<cluster>;
// the execution controller (push mode) or the agent (pull mode) applies them and the work
// status controller reports each manifest's status back.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=works,scope=Namespaced,shortName=wk,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="WORKLOAD-KIND",type=string,JSONPath=`.spec.workload.manifests[*].kind`
// +kubebuilder:printcolumn:name="APPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="Applied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type Work struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec holds the manifests to apply.
	// +required
	Spec WorkSpec `json:"spec"`

	// Status reports whether the manifests were applied and their state in the member cluster.
	// +optional
	Status WorkStatus `json:"status,omitempty"`
}

// WorkSpec is Karmada's Work.spec.
type WorkSpec struct {
	// Workload holds the manifests.
	// +optional
	Workload WorkloadTemplate `json:"workload,omitempty"`

	// SuspendDispatching, when true, stops applying changes of this Work to the member cluster.
	// +optional
	SuspendDispatching *bool `json:"suspendDispatching,omitempty"`

	// PreserveResourcesOnDeletion, when true, leaves the applied resources in the member
	// cluster when the Work is deleted.
	// +optional
	PreserveResourcesOnDeletion *bool `json:"preserveResourcesOnDeletion,omitempty"`
}

// WorkloadTemplate is the list of manifests of a Work.
type WorkloadTemplate struct {
	// (Atomic: Flotilla writes the list whole, and tracking the fields of every manifest in
	// managedFields would cost the API server a walk of the objects on every write.)

	// Manifests are the complete Kubernetes objects to apply in the member cluster, as one
	// atomic list.
	// +listType=atomic
	// +optional
	Manifests []Manifest `json:"manifests,omitempty"`
}

// Manifest is one Kubernetes object, kept as raw JSON. Its JSON form is the object itself.
//
// +kubebuilder:pruning:PreserveUnknownFields
type Manifest struct {
	runtime.RawExtension `json:",inline"`
}

// WorkStatus is Karmada's Work.status.
type WorkStatus struct {
	// Conditions of the Work: Applied (the manifests were applied), Available, Degraded, ...
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// ManifestStatuses reports the status of each applied manifest, as collected from the
	// member cluster.
	// +optional
	ManifestStatuses []ManifestStatus `json:"manifestStatuses,omitempty"`
}

// ManifestStatus is the observed state of one manifest of a Work.
type ManifestStatus struct {
	// Identifier says which manifest this is.
	// +required
	Identifier ResourceIdentifier `json:"identifier"`

	// Status is the object's status as reported by the member cluster, reduced by the
	// resource interpreter where one applies.
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Status *runtime.RawExtension `json:"status,omitempty"`

	// Health is the object's health as judged by the resource interpreter:
	// Healthy, Unhealthy or Unknown.
	// +kubebuilder:validation:Enum=Healthy;Unhealthy;Unknown
	// +optional
	Health ResourceHealth `json:"health,omitempty"`
}

// ResourceIdentifier identifies one manifest of a Work and the object it became.
type ResourceIdentifier struct {
	// Ordinal is the index of the manifest in spec.workload.manifests.
	// +required
	Ordinal int `json:"ordinal"`

	// Group is the API group of the object; empty for the core group.
	// +optional
	Group string `json:"group,omitempty"`

	// Version is the API version of the object.
	// +required
	Version string `json:"version"`

	// Kind is the kind of the object.
	// +required
	Kind string `json:"kind"`

	// Resource is the plural resource name of the object.
	// +required
	Resource string `json:"resource"`

	// Namespace of the object; empty for cluster-scoped objects.
	// +optional
	Namespace string `json:"namespace,omitempty"`

	// Name of the object.
	// +required
	Name string `json:"name"`
}

// ResourceHealth is the health of a propagated object: Healthy, Unhealthy or Unknown.
type ResourceHealth string

const (
	// ResourceHealthy means the object is working as intended.
	ResourceHealthy ResourceHealth = "Healthy"
	// ResourceUnhealthy means the object is not working as intended.
	ResourceUnhealthy ResourceHealth = "Unhealthy"
	// ResourceUnknown means health could not be judged, e.g. the object could not be read as
	// its kind. Kinds without a health rule count as healthy, as in Karmada.
	ResourceUnknown ResourceHealth = "Unknown"
)

// Condition types of Work.status.conditions, as Karmada names them.
const (
	// WorkApplied is True when every manifest was applied to the member cluster.
	WorkApplied = "Applied"
	// WorkProgressing is True while the applied objects are still rolling out.
	WorkProgressing = "Progressing"
	// WorkAvailable is True when every applied object reports healthy.
	WorkAvailable = "Available"
	// WorkDegraded is True when some applied object is unhealthy.
	WorkDegraded = "Degraded"
	// WorkDispatching reflects spec.suspendDispatching.
	WorkDispatching = "Dispatching"
)

// Reasons of the Work's Applied condition, with Karmada's strings.
const (
	// WorkAppliedSuccessfulReason: every manifest was applied.
	WorkAppliedSuccessfulReason = "AppliedSuccessful"
	// WorkAppliedFailedReason: some manifest could not be applied; the
	// message says why.
	WorkAppliedFailedReason = "AppliedFailed"
)

// The Work's Dispatching condition, with Karmada's reasons and messages:
// True while its manifests are applied to the member, False while
// spec.suspendDispatching holds them back.
const (
	// WorkDispatchingReason: dispatching is not suspended (status True).
	WorkDispatchingReason = "Dispatching"
	// WorkDispatchingMessage is the message of WorkDispatchingReason.
	WorkDispatchingMessage = "Work is being dispatched to member clusters."
	// WorkSuspendDispatchingReason: spec.suspendDispatching is true
	// (status False).
	WorkSuspendDispatchingReason = "SuspendDispatching"
	// WorkSuspendDispatchingMessage is the message of
	// WorkSuspendDispatchingReason.
	WorkSuspendDispatchingMessage = "Work dispatching is in a suspended state."
)

// WorkList is a list of Work.
//
// +kubebuilder:object:root=true
type WorkList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the works.
	Items []Work `json:"items"`
}
