package v1alpha1

import (
	networkingv1 "k8s.io/api/networking/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// MultiClusterIngress is Karmada's Ingress spanning member clusters: the spec is an ordinary
// networking.k8s.io/v1 IngressSpec, served by a multi-cluster ingress controller over the
// backends in every cluster.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=multiclusteringresses,scope=Namespaced,shortName=mci,categories=karmada-io
// +kubebuilder:subresource:status
type MultiClusterIngress struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the Ingress specification.
	// +optional
	Spec networkingv1.IngressSpec `json:"spec,omitempty"`

	// Status is the Ingress status plus where the backends run.
	// +optional
	Status MultiClusterIngressStatus `json:"status,omitempty"`
}

// MultiClusterIngressStatus is the Ingress status plus multi-cluster details.
type MultiClusterIngressStatus struct {
	networkingv1.IngressStatus `json:",inline"`

	// TrafficBlockClusters are the clusters that currently receive no traffic.
	// +optional
	TrafficBlockClusters []string `json:"trafficBlockClusters,omitempty"`

	// ServiceLocations says in which clusters each backend Service runs.
	// +optional
	ServiceLocations []ServiceLocation `json:"serviceLocations,omitempty"`
}

// ServiceLocation is where one backend Service runs.
type ServiceLocation struct {
	// Name of the Service.
	// +required
	Name string `json:"name"`

	// Clusters running the Service.
	// +optional
	Clusters []string `json:"clusters,omitempty"`
}

// MultiClusterIngressList is a list of MultiClusterIngress.
//
// +kubebuilder:object:root=true
type MultiClusterIngressList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the ingresses.
	Items []MultiClusterIngress `json:"items"`
}
