// Package v1alpha1 holds the Flotilla types for Karmada's apps.karmada.io/v1alpha1 API group:
// WorkloadRebalancer, a one-shot request to reschedule workloads from scratch.
//
// +kubebuilder:object:generate=true
// +groupName=apps.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's workload operations.
const GroupName = "apps.karmada.io"

var (
	// SchemeGroupVersion is apps.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers WorkloadRebalancer and its list in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&WorkloadRebalancer{},
		&WorkloadRebalancerList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
