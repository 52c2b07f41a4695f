// Package v1alpha1 holds the Flotilla types for Karmada's config.karmada.io/v1alpha1 API group:
// the resource interpreter's configuration, as Lua scripts (ResourceInterpreterCustomization)
// or as webhooks (ResourceInterpreterWebhookConfiguration).
//
// +kubebuilder:object:generate=true
// +groupName=config.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's resource interpreter configuration.
const GroupName = "config.karmada.io"

var (
	// SchemeGroupVersion is config.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers this group's kinds and their lists in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&ResourceInterpreterCustomization{},
		&ResourceInterpreterCustomizationList{},
		&ResourceInterpreterWebhookConfiguration{},
		&ResourceInterpreterWebhookConfigurationList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
