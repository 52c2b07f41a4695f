package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// WorkloadRebalancer is Karmada's one-shot rescheduling request: for each listed workload the
// binding is rescheduled from scratch (ignoring the previous result), and the outcome is
// recorded per workload. The object can delete itself a while after it finishes.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=workloadrebalancers,scope=Cluster
// +kubebuilder:subresource:status
type WorkloadRebalancer struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec lists the workloads to rebalance.
	// +required
	Spec WorkloadRebalancerSpec `json:"spec"`

	// Status is the outcome for each workload.
	// +optional
	Status WorkloadRebalancerStatus `json:"status,omitempty"`
}

// WorkloadRebalancerSpec is Karmada's WorkloadRebalancer.spec.
type WorkloadRebalancerSpec struct {
	// Workloads are the resource templates to reschedule; at least one.
	// +kubebuilder:validation:MinItems=1
	// +required
	Workloads []ObjectReference `json:"workloads"`

	// TTLSecondsAfterFinished deletes the rebalancer this many seconds after every workload
	// finished; nil keeps it.
	// +optional
	TTLSecondsAfterFinished *int32 `json:"ttlSecondsAfterFinished,omitempty"`
}

// ObjectReference names a resource template.
type ObjectReference struct {
	// APIVersion of the resource template.
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind of the resource template.
	// +required
	Kind string `json:"kind"`

	// Name of the resource template.
	// +required
	Name string `json:"name"`

	// Namespace of the resource template; empty for cluster-scoped ones.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// WorkloadRebalancerStatus is Karmada's WorkloadRebalancer.status.
type WorkloadRebalancerStatus struct {
	// ObservedWorkloads is the outcome for each workload.
	// +optional
	ObservedWorkloads []ObservedWorkload `json:"observedWorkloads,omitempty"`

	// ObservedGeneration is the generation the status describes.
	// +optional
	ObservedGeneration int64 `json:"observedGeneration,omitempty"`

	// FinishTime is when every workload finished.
	// +optional
	FinishTime *metav1.Time `json:"finishTime,omitempty"`
}

// ObservedWorkload is the rebalancing outcome of one workload.
type ObservedWorkload struct {
	// Workload is the resource template.
	// +required
	Workload ObjectReference `json:"workload"`

	// Result is Successful or Failed.
	// +optional
	Result RebalanceResult `json:"result,omitempty"`

	// Reason explains a failure, for example ReferencedBindingNotFound.
	// +optional
	Reason RebalanceFailedReason `json:"reason,omitempty"`
}

// RebalanceResult is the outcome of rebalancing one workload.
type RebalanceResult string

const (
	// RebalanceSuccessful means the workload was rescheduled.
	RebalanceSuccessful RebalanceResult = "Successful"
	// RebalanceFailed means the workload could not be rescheduled.
	RebalanceFailed RebalanceResult = "Failed"
)

// RebalanceFailedReason says why rebalancing a workload failed.
type RebalanceFailedReason string

const (
	// RebalanceObjectNotFound means the workload's binding does not exist.
	RebalanceObjectNotFound RebalanceFailedReason = "ReferencedBindingNotFound"
)

// WorkloadRebalancerList is a list of WorkloadRebalancer.
//
// +kubebuilder:object:root=true
type WorkloadRebalancerList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the rebalancers.
	Items []WorkloadRebalancer `json:"items"`
}
