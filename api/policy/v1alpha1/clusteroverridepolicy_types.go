package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterOverridePolicy is Karmada's cluster-scoped override policy: it overrides
// cluster-scoped resource templates, and namespaced ones in any namespace. When both apply,
// ClusterOverridePolicies run before the namespace's OverridePolicies.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusteroverridepolicies,scope=Cluster,shortName=cop,categories=karmada-io
type ClusterOverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the set of override rules, the same as an OverridePolicy's.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// ClusterOverridePolicyList is a list of ClusterOverridePolicy.
//
// +kubebuilder:object:root=true
type ClusterOverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the policies.
	Items []ClusterOverridePolicy `json:"items"`
}
