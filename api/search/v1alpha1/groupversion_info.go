// Package v1alpha1 holds the Flotilla types for Karmada's search.karmada.io/v1alpha1 API group:
// ResourceRegistry, which says which kinds of which member clusters `flotilla search` caches, and
// the virtual resources search and proxying that its aggregated API serves. The group is not a
// CustomResourceDefinition: `flotilla search` serves it and stores ResourceRegistries in etcd,
// as Karmada's karmada-search does.
//
// +kubebuilder:object:generate=true
// +kubebuilder:skip
// +groupName=search.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's search and proxy.
const GroupName = "search.karmada.io"

var (
	// SchemeGroupVersion is search.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers ResourceRegistry, ResourceRegistryList, Search and Proxying in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&ResourceRegistry{},
		&ResourceRegistryList{},
		&Search{},
		&Proxying{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
