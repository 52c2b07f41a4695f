package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterResourceBinding is Karmada's binding for a cluster-scoped resource template, created
// when a ClusterPropagationPolicy claims it. It has the same spec and status as
// ResourceBinding.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterresourcebindings,scope=Cluster,shortName=crb,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="SCHEDULED",type=string,JSONPath=`.status.conditions[?(@.type=="Scheduled")].status`
// +kubebuilder:printcolumn:name="FULLYAPPLIED",type=string,JSONPath=`.status.conditions[?(@.type=="FullyApplied")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:printcolumn:name="ROLLOUT",type=string,priority=1,JSONPath=`.status.conditions[?(@.type=="Progressing")].reason`
type ClusterResourceBinding struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the binding's desired state.
	// +required
	Spec ResourceBindingSpec `json:"spec"`

	// Status is the scheduling and propagation state observed.
	// +optional
	Status ResourceBindingStatus `json:"status,omitempty"`
}

// ClusterResourceBindingList is a list of ClusterResourceBinding.
//
// +kubebuilder:object:root=true
type ClusterResourceBindingList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the bindings.
	Items []ClusterResourceBinding `json:"items"`
}
