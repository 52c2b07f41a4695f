// Package v1alpha1 holds the Flotilla types for Karmada's work.karmada.io/v1alpha1 API group:
// the Work object, which carries the final manifests for one member cluster in that cluster's
// execution namespace (karmada-es-<cluster>).
//
// The v1alpha1 ResourceBinding and ClusterResourceBinding versions that Karmada still serves
// through a conversion webhook are deliberately left out; see package work/v1alpha2.
//
// +kubebuilder:object:generate=true
// +groupName=work.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's bindings and works.
const GroupName = "work.karmada.io"

var (
	// SchemeGroupVersion is work.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group version's types.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers Work and WorkList in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&Work{},
		&WorkList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
