package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterPropagationPolicy is Karmada's cluster-scoped propagation policy: it may select
// cluster-scoped resource templates and namespaced ones in any namespace. A PropagationPolicy
// that matches the same template wins over it, whatever their priorities.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterpropagationpolicies,scope=Cluster,shortName=cpp,categories=karmada-io
// +kubebuilder:printcolumn:name="CONFLICT-RESOLUTION",type=string,JSONPath=`.spec.conflictResolution`
// +kubebuilder:printcolumn:name="PRIORITY",type=string,JSONPath=`.spec.priority`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterPropagationPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the propagation rule set, the same as a PropagationPolicy's.
	// +required
	Spec PropagationSpec `json:"spec"`
}

// ClusterPropagationPolicyList is a list of ClusterPropagationPolicy.
//
// +kubebuilder:object:root=true
type ClusterPropagationPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the policies.
	Items []ClusterPropagationPolicy `json:"items"`
}
