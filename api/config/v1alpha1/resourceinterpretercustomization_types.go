package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceInterpreterCustomization is Karmada's Lua customization of the resource interpreter
// for one kind: how to read its replicas and requirements, revise replicas, retain fields
// changed in member clusters, reflect and aggregate status, judge health, find dependencies
// and describe components. Each operation is a Lua script.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourceinterpretercustomizations,scope=Cluster,shortName=ric,categories=karmada-io
// +kubebuilder:printcolumn:name="TARGET-API-VERSION",type=string,JSONPath=`.spec.target.apiVersion`
// +kubebuilder:printcolumn:name="TARGET-KIND",type=string,JSONPath=`.spec.target.kind`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ResourceInterpreterCustomization struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the target kind and its scripts.
	// +required
	Spec ResourceInterpreterCustomizationSpec `json:"spec"`
}

// ResourceInterpreterCustomizationSpec is Karmada's ResourceInterpreterCustomization.spec.
type ResourceInterpreterCustomizationSpec struct {
	// Target is the kind the scripts interpret.
	// +required
	Target CustomizationTarget `json:"target"`

	// Customizations are the scripts, one per interpreter operation.
	// +required
	Customizations CustomizationRules `json:"customizations"`
}

// CustomizationTarget names the kind a customization applies to.
type CustomizationTarget struct {
	// APIVersion of the kind, for example "apps.kruise.io/v1alpha1".
	// +required
	APIVersion string `json:"apiVersion"`

	// Kind name, for example "CloneSet".
	// +required
	Kind string `json:"kind"`
}

// CustomizationRules holds one optional Lua script per interpreter operation. An operation
// without a script falls back to the built-in interpreter (or none).
type CustomizationRules struct {
	// Retention keeps fields that member clusters change (for example replicas set by a
	// local HPA) when the control plane's version is applied again. The script is
	// `function Retain(desiredObj, observedObj)` returning the object to apply.
	// +optional
	Retention *LocalValueRetention `json:"retention,omitempty"`

	// ReplicaResource reads the replica count and per-replica requirements. The script is
	// `function GetReplicas(obj)` returning replica, requirement.
	// +optional
	ReplicaResource *ReplicaResourceRequirement `json:"replicaResource,omitempty"`

	// ReplicaRevision sets the replica count of the copy sent to one cluster. The script is
	// `function ReviseReplica(obj, desiredReplica)` returning the revised object.
	// +optional
	ReplicaRevision *ReplicaRevision `json:"replicaRevision,omitempty"`

	// StatusReflection picks the status reported back from a member cluster. The script is
	// `function ReflectStatus(observedObj)` returning the status.
	// +optional
	StatusReflection *StatusReflection `json:"statusReflection,omitempty"`

	// StatusAggregation merges the member clusters' statuses into the resource template. The
	// script is `function AggregateStatus(desiredObj, statusItems)` returning the object.
	// +optional
	StatusAggregation *StatusAggregation `json:"statusAggregation,omitempty"`

	// HealthInterpretation judges health in a member cluster. The script is
	// `function InterpretHealth(observedObj)` returning a boolean.
	// +optional
	HealthInterpretation *HealthInterpretation `json:"healthInterpretation,omitempty"`

	// DependencyInterpretation lists the objects the resource depends on. The script is
	// `function GetDependencies(desiredObj)` returning a list of references.
	// +optional
	DependencyInterpretation *DependencyInterpretation `json:"dependencyInterpretation,omitempty"`

	// ComponentResource describes the components (pod templates) of a multi-template
	// workload. The script is `function GetComponents(desiredObj)` returning the components.
	// +optional
	ComponentResource *ComponentResourceRequirement `json:"componentResource,omitempty"`
}

// LocalValueRetention is the Lua script of the Retain operation.
type LocalValueRetention struct {
	// LuaScript defines `function Retain(desiredObj, observedObj)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaResourceRequirement is the Lua script of the GetReplicas operation.
type ReplicaResourceRequirement struct {
	// LuaScript defines `function GetReplicas(obj)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// ReplicaRevision is the Lua script of the ReviseReplica operation.
type ReplicaRevision struct {
	// LuaScript defines `function ReviseReplica(obj, desiredReplica)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusReflection is the Lua script of the ReflectStatus operation.
type StatusReflection struct {
	// LuaScript defines `function ReflectStatus(observedObj)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// StatusAggregation is the Lua script of the AggregateStatus operation.
type StatusAggregation struct {
	// LuaScript defines `function AggregateStatus(desiredObj, statusItems)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// HealthInterpretation is the Lua script of the InterpretHealth operation.
type HealthInterpretation struct {
	// LuaScript defines `function InterpretHealth(observedObj)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// DependencyInterpretation is the Lua script of the GetDependencies operation.
type DependencyInterpretation struct {
	// LuaScript defines `function GetDependencies(desiredObj)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// ComponentResourceRequirement is the Lua script of the GetComponents operation.
type ComponentResourceRequirement struct {
	// LuaScript defines `function GetComponents(desiredObj)`.
	// +required
	LuaScript string `json:"luaScript"`
}

// ResourceInterpreterCustomizationList is a list of ResourceInterpreterCustomization.
//
// +kubebuilder:object:root=true
type ResourceInterpreterCustomizationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the customizations.
	Items []ResourceInterpreterCustomization `json:"items"`
}
