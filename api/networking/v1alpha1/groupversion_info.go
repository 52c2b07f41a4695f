// Package v1alpha1 holds the Flotilla types for Karmada's networking.karmada.io/v1alpha1 API
// group: MultiClusterService (exposing a Service across member clusters or through a
// multi-cluster load balancer) and MultiClusterIngress.
//
// +kubebuilder:object:generate=true
// +groupName=networking.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's multi-cluster networking.
const GroupName = "networking.karmada.io"

var (
	// SchemeGroupVersion is networking.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers MultiClusterService, MultiClusterIngress and their lists.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&MultiClusterService{},
		&MultiClusterServiceList{},
		&MultiClusterIngress{},
		&MultiClusterIngressList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
