package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedResourceQuota is Karmada's quota for one namespace across all member clusters: an
// overall limit, optionally split statically into per-cluster ResourceQuotas, with usage
// collected back from the clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=federatedresourcequotas,scope=Namespaced,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="OVERALL",type=string,JSONPath=`.status.overall`
// +kubebuilder:printcolumn:name="OVERALL_USED",type=string,JSONPath=`.status.overallUsed`
type FederatedResourceQuota struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired quota.
	// +required
	Spec FederatedResourceQuotaSpec `json:"spec"`

	// Status is the quota and usage last observed.
	// +optional
	Status FederatedResourceQuotaStatus `json:"status,omitempty"`
}

// FederatedResourceQuotaSpec is Karmada's FederatedResourceQuota.spec.
type FederatedResourceQuotaSpec struct {
	// Overall is the hard limit of each resource summed over all member clusters.
	// +required
	Overall corev1.ResourceList `json:"overall"`

	// StaticAssignments split the overall quota into ResourceQuotas of given clusters.
	// +optional
	StaticAssignments []StaticClusterAssignment `json:"staticAssignments,omitempty"`
}

// StaticClusterAssignment is the part of a FederatedResourceQuota given to one cluster.
type StaticClusterAssignment struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	// Hard is the hard limit for the namespace in that cluster.
	// +required
	Hard corev1.ResourceList `json:"hard"`
}

// FederatedResourceQuotaStatus is Karmada's FederatedResourceQuota.status.
type FederatedResourceQuotaStatus struct {
	// Overall is the enforced overall hard limit.
	// +optional
	Overall corev1.ResourceList `json:"overall,omitempty"`

	// OverallUsed is the usage summed over all member clusters.
	// +optional
	OverallUsed corev1.ResourceList `json:"overallUsed,omitempty"`

	// AggregatedStatus is the quota and usage of each member cluster.
	// +optional
	AggregatedStatus []ClusterQuotaStatus `json:"aggregatedStatus,omitempty"`
}

// ClusterQuotaStatus is the quota and usage of the namespace in one member cluster.
type ClusterQuotaStatus struct {
	// ClusterName is the member cluster.
	// +required
	ClusterName string `json:"clusterName"`

	corev1.ResourceQuotaStatus `json:",inline"`
}

// FederatedResourceQuotaList is a list of FederatedResourceQuota.
//
// +kubebuilder:object:root=true
type FederatedResourceQuotaList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the quotas.
	Items []FederatedResourceQuota `json:"items"`
}
