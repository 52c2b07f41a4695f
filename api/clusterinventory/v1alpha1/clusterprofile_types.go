package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clientcmdv1 "k8s.io/client-go/tools/clientcmd/api/v1"
)

// Labels and condition types of the Cluster Inventory API.
const (
	// LabelClusterManagerKey names the manager that writes a profile; Flotilla's is "flotilla".
	LabelClusterManagerKey = "x-k8s.io/cluster-manager"
	// LabelClusterSetKey, on a namespace, names the ClusterSet its profiles form.
	LabelClusterSetKey = "multicluster.x-k8s.io/clusterset"
	// ConditionControlPlaneHealthy says whether the cluster's API server is healthy.
	ConditionControlPlaneHealthy = "ControlPlaneHealthy"
	// ConditionJoined says whether the cluster is a member of the manager's fleet.
	ConditionJoined = "Joined"
)

// ClusterProfile (multicluster.x-k8s.io/v1alpha1) describes one cluster of a fleet to the
// tools that place work on it: who manages it, its version, properties, health and how to
// reach it.
//
// +kubebuilder:object:root=true
// +kubebuilder:subresource:status
// +kubebuilder:resource:scope=Namespaced
// +kubebuilder:printcolumn:name="Manager",type=string,JSONPath=`.spec.clusterManager.name`
// +kubebuilder:printcolumn:name="Healthy",type=string,JSONPath=`.status.conditions[?(@.type=="ControlPlaneHealthy")].status`
// +kubebuilder:printcolumn:name="Version",type=string,JSONPath=`.status.version.kubernetes`
// +kubebuilder:printcolumn:name="Age",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterProfile struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	Spec ClusterProfileSpec `json:"spec"`
	// +optional
	Status ClusterProfileStatus `json:"status,omitempty"`
}

// ClusterProfileSpec names the cluster and its manager.
type ClusterProfileSpec struct {
	// DisplayName is a name for people; Flotilla writes the Cluster's name.
	// +optional
	DisplayName string `json:"displayName,omitempty"`
	// ClusterManager is who manages the cluster; it cannot change.
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="ClusterManager is immutable"
	ClusterManager ClusterManager `json:"clusterManager"`
}

// ClusterManager names a cluster manager.
type ClusterManager struct {
	// Name of the manager, for example "flotilla".
	Name string `json:"name"`
}

// ClusterProfileStatus is what the manager observes of the cluster.
type ClusterProfileStatus struct {
	// Conditions: ControlPlaneHealthy, Joined.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
	// Version of the cluster's Kubernetes.
	// +optional
	Version ClusterVersion `json:"version,omitempty"`
	// Properties are named facts about the cluster (region, zone, provider, ...).
	// +optional
	Properties []Property `json:"properties,omitempty"`
	// CredentialProviders say how to reach the cluster: each names a provider
	// (credentials plugins know it by name) and the cluster's address and CA.
	// +optional
	CredentialProviders []AccessProvider `json:"credentialProviders,omitempty"`
	// AccessProviders is the newer name of CredentialProviders; Flotilla writes both.
	// +optional
	AccessProviders []AccessProvider `json:"accessProviders,omitempty"`
}

// AccessProvider is one way to reach the cluster.
type AccessProvider struct {
	// Name of the provider, for example "flotilla-proxy".
	Name string `json:"name"`
	// Cluster is the address (server) and CA to use, as in a kubeconfig.
	// +kubebuilder:validation:Schemaless
	// +kubebuilder:pruning:PreserveUnknownFields
	// +optional
	Cluster clientcmdv1.Cluster `json:"cluster,omitempty"`
}

// ClusterVersion is the cluster's software version.
type ClusterVersion struct {
	// Kubernetes version, for example "v1.37.2".
	// +optional
	Kubernetes string `json:"kubernetes,omitempty"`
}

// Property is one named fact about the cluster.
type Property struct {
	// Name, for example "region".
	Name string `json:"name"`
	// Value, for example "us-east-1".
	Value string `json:"value"`
	// LastObservedTime is when the value was last read.
	// +optional
	LastObservedTime metav1.Time `json:"lastObservedTime,omitempty"`
}

// ClusterProfileList is a list of ClusterProfiles.
//
// +kubebuilder:object:root=true
type ClusterProfileList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterProfile `json:"items"`
}
