// Package v1alpha2 holds the Flotilla types for Karmada's work.karmada.io/v1alpha2 API group:
// ResourceBinding and ClusterResourceBinding, which bind one resource template to its policy,
// its scheduling result and its failover bookkeeping.
//
// Only v1alpha2, Karmada's storage version, is served. Karmada's v1alpha1 binding version
// needs a conversion webhook and has been unused by its own components for years; Flotilla
// leaves it out.
//
// +kubebuilder:object:generate=true
// +groupName=work.karmada.io
package v1alpha2

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's bindings and works.
const GroupName = "work.karmada.io"

var (
	// SchemeGroupVersion is work.karmada.io/v1alpha2.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha2"}

	// SchemeBuilder collects the functions that register this group version's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers ResourceBinding, ClusterResourceBinding and their lists.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&ResourceBinding{},
		&ResourceBindingList{},
		&ClusterResourceBinding{},
		&ClusterResourceBindingList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
