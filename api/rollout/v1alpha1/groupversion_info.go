// Package v1alpha1 holds Flotilla's own rollout.flotilla.io/v1alpha1 API group:
// RolloutStrategy and its cluster-scoped twin ClusterRolloutStrategy, which
// stage a change to a resource template across member clusters wave by wave,
// gated on health (docs/user-guide/staged-rollouts.md). Karmada has no such
// API; its kinds stay untouched: a PropagationPolicy or
// ClusterPropagationPolicy names a strategy with the annotation
// rollout.flotilla.io/strategy.
//
// +kubebuilder:object:generate=true
// +groupName=rollout.flotilla.io
package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// GroupName is the API group of Flotilla's staged rollouts.
const GroupName = "rollout.flotilla.io"

var (
	// SchemeGroupVersion is rollout.flotilla.io/v1alpha1.
	SchemeGroupVersion = schema.GroupVersion{Group: GroupName, Version: "v1alpha1"}

	// SchemeBuilder collects the functions that register this group's types in a scheme.
	SchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)

	// AddToScheme registers RolloutStrategy, ClusterRolloutStrategy and their lists in a scheme.
	AddToScheme = SchemeBuilder.AddToScheme
)

func addKnownTypes(scheme *runtime.Scheme) error {
	scheme.AddKnownTypes(SchemeGroupVersion,
		&RolloutStrategy{}, &RolloutStrategyList{},
		&ClusterRolloutStrategy{}, &ClusterRolloutStrategyList{},
	)
	metav1.AddToGroupVersion(scheme, SchemeGroupVersion)
	return nil
}
