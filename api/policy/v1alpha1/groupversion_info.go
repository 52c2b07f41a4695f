// Package v1alpha1 holds the Flotilla types for Karmada's policy.karmada.io/v1alpha1 API group:
// propagation policies (where resource templates go), override policies (how they differ per
// member cluster), federated resource quotas and cluster taint policies.
//
// Field names, JSON keys, enums and defaults follow Karmada's CRDs so that Karmada manifests
// apply unchanged. Checks that Karmada runs in its validating webhook are CEL rules here.
//
// +kubebuilder:object:generate=true
// +groupName=policy.karmada.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Karmada's policies.
const GroupName = "policy.karmada.io"

var (
	// SchemeGroupVersion is policy.karmada.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers every kind of this group version, and its list, in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

// Resource returns the group-qualified resource for a plural resource name of this group.
func Resource(resource string) schema.GroupResource {
	return SchemeGroupVersion.WithResource(resource).GroupResource()
}

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&PropagationPolicy{},
		&PropagationPolicyList{},
		&ClusterPropagationPolicy{},
		&ClusterPropagationPolicyList{},
		&OverridePolicy{},
		&OverridePolicyList{},
		&ClusterOverridePolicy{},
		&ClusterOverridePolicyList{},
		&FederatedResourceQuota{},
		&FederatedResourceQuotaList{},
		&ClusterTaintPolicy{},
		&ClusterTaintPolicyList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
