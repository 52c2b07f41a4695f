// Package v1alpha1 holds the Flotilla types for Karmada's cluster.karmada.io/v1alpha1 API group:
// the Cluster object that registers a member cluster with the control plane.
//
// Karmada serves this group from its aggregated API server; Flotilla serves it as a CRD
// with the same field names and JSON keys, so karmadactl and kubectl manifests written for
// Karmada work unchanged.
//
// +kubebuilder:object:generate=true
// +groupName=cluster.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's member cluster registry.
const GroupName = "cluster.karmada.io"

var (
	// SchemeGroupVersion is cluster.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers Cluster and ClusterList in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Cluster{},
		&ClusterList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
