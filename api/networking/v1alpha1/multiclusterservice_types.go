package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MultiClusterService is Karmada's multi-cluster exposure of the Service with the same name
// and namespace: CrossCluster makes its backends in provider clusters reachable from consumer
// clusters; LoadBalancer registers it with an external multi-cluster load balancer.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=multiclusterservices,scope=Namespaced,shortName=mcs,categories=karmada-io
// +kubebuilder:subresource:status
type MultiClusterService struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec says how the Service is exposed.
	// +required
	Spec MultiClusterServiceSpec `json:"spec"`

	// Status is the exposure state, in the core Service status format.
	// +optional
	Status corev1.ServiceStatus `json:"status,omitempty"`
}

// MultiClusterServiceSpec is Karmada's MultiClusterService.spec.
type MultiClusterServiceSpec struct {
	// Types is how the Service is exposed: CrossCluster or LoadBalancer, one of them (as
	// Karmada's webhook requires since v1.9), fixed at creation.
	// +kubebuilder:validation:MaxItems=2
	// +kubebuilder:validation:XValidation:rule="self.all(t, t == self[0])",message="spec.types must hold one type, CrossCluster or LoadBalancer, not both: use one MultiClusterService for each"
	// +kubebuilder:validation:XValidation:rule="self == oldSelf",message="spec.types cannot be changed after creation: delete the MultiClusterService and create it again"
	// +required
	Types []ExposureType `json:"types"`

	// Ports limits exposure to these Service ports; empty exposes every port. Names, where
	// given, must be unique.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:XValidation:rule="self.all(p, !has(p.name) || size(p.name) == 0 || self.exists_one(q, has(q.name) && q.name == p.name))",message="spec.ports[*].name must be unique"
	// +optional
	Ports []ExposurePort `json:"ports,omitempty"`

	// Range limits CrossCluster exposure to some clusters.
	// Deprecated: the Karmada v1.7 way; use ConsumerClusters.
	// +optional
	Range ExposureRange `json:"range,omitempty"`

	// ServiceProvisionClusters are the clusters that provide backends.
	// Deprecated: use ProviderClusters.
	// +kubebuilder:validation:items:MaxLength=48
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ServiceProvisionClusters []string `json:"serviceProvisionClusters,omitempty"`

	// ServiceConsumptionClusters are the clusters the Service is exposed in.
	// Deprecated: use ConsumerClusters.
	// +kubebuilder:validation:items:MaxLength=48
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ServiceConsumptionClusters []string `json:"serviceConsumptionClusters,omitempty"`

	// ProviderClusters are the clusters that provide backends; empty means all clusters.
	// +optional
	ProviderClusters []ClusterSelector `json:"providerClusters,omitempty"`

	// ConsumerClusters are the clusters where clients can reach the Service; empty means all
	// clusters.
	// +optional
	ConsumerClusters []ClusterSelector `json:"consumerClusters,omitempty"`
}

// ExposureType is CrossCluster or LoadBalancer.
//
// +kubebuilder:validation:MaxLength=32
// +kubebuilder:validation:XValidation:rule="self == 'CrossCluster' || self == 'LoadBalancer'",message="spec.types[*] must be CrossCluster or LoadBalancer"
type ExposureType string

const (
	// ExposureTypeCrossCluster makes the Service reachable from other member clusters.
	ExposureTypeCrossCluster ExposureType = "CrossCluster"
	// ExposureTypeLoadBalancer exposes the Service through an external multi-cluster load
	// balancer.
	ExposureTypeLoadBalancer ExposureType = "LoadBalancer"
)

// ExposurePort is one Service port to expose.
//
// +kubebuilder:validation:XValidation:rule="self.port >= 1 && self.port <= 65535",message="spec.ports[*].port must be between 1 and 65535",fieldPath=.port
type ExposurePort struct {
	// Name of the Service port; a DNS-1123 label (at most 63 characters) when set.
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`

	// Port is the Service port number.
	// +required
	Port int32 `json:"port"`
}

// ExposureRange is the Karmada v1.7 way to limit CrossCluster exposure.
type ExposureRange struct {
	// ClusterNames are the clusters the Service is exposed in; empty means all.
	// +kubebuilder:validation:items:MaxLength=48
	// +kubebuilder:validation:items:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// ClusterSelector names one member cluster.
type ClusterSelector struct {
	// Name of the member cluster: a Cluster's name, a DNS-1123 label of at most 48
	// characters (as Karmada's webhook checks).
	// +kubebuilder:validation:MaxLength=48
	// +kubebuilder:validation:Pattern=`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`
	// +required
	Name string `json:"name"`
}

// Condition types and well-known keys of MultiClusterService.
const (
	// MCSServiceAppliedConditionType is True when the derived Services were applied.
	MCSServiceAppliedConditionType = "ServiceApplied"
	// EndpointSliceDispatched is True when the collected EndpointSlices were dispatched to the
	// consumer clusters.
	EndpointSliceDispatched = "EndpointSliceDispatched"

	// MultiClusterServicePermanentIDLabel is the label holding a MultiClusterService's
	// permanent id.
	MultiClusterServicePermanentIDLabel = "multiclusterservice.karmada.io/permanent-id"
	// MultiClusterServiceNameAnnotation names the MultiClusterService a derived object comes from.
	MultiClusterServiceNameAnnotation = "multiclusterservice.karmada.io/name"
	// MultiClusterServiceNamespaceAnnotation is the namespace of that MultiClusterService.
	MultiClusterServiceNamespaceAnnotation = "multiclusterservice.karmada.io/namespace"
)

// MultiClusterServiceList is a list of MultiClusterService.
//
// +kubebuilder:object:root=true
type MultiClusterServiceList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the services.
	Items []MultiClusterService `json:"items"`
}
