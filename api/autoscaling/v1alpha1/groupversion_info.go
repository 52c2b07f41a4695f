// Package v1alpha1 holds the Flotilla types for Karmada's autoscaling.karmada.io/v1alpha1 API
// group: FederatedHPA (autoscaling a resource template on metrics gathered from every member
// cluster) and CronFederatedHPA (scaling a workload or a FederatedHPA on a schedule).
//
// +kubebuilder:object:generate=true
// +groupName=autoscaling.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's autoscalers.
const GroupName = "autoscaling.karmada.io"

var (
	// SchemeGroupVersion is autoscaling.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers FederatedHPA, CronFederatedHPA and their lists in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&FederatedHPA{},
		&FederatedHPAList{},
		&CronFederatedHPA{},
		&CronFederatedHPAList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
