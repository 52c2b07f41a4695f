// Package v1alpha1 holds Flotilla's copy of the types of sig-multicluster's Cluster Inventory
// API (multicluster.x-k8s.io/v1alpha1 ClusterProfile, KEP-4322), which Flotilla publishes for
// every member cluster so that tools built on it (Kueue's MultiKueue, Argo CD,
// multicluster-runtime) see Flotilla's fleet. Karmada has no counterpart. The group is the one
// of the mcs-api kinds (ServiceExport, ServiceImport); the kinds differ.
//
// +kubebuilder:object:generate=true
// +groupName=multicluster.x-k8s.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the Cluster Inventory API's group.
const GroupName = "multicluster.x-k8s.io"

var (
	// SchemeGroupVersion is multicluster.x-k8s.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers ClusterProfile and ClusterProfileList in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion, &ClusterProfile{}, &ClusterProfileList{})
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
