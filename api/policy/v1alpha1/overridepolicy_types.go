package v1alpha1

import (
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// OverridePolicy is Karmada's namespaced override policy: it changes resource templates of its
// namespace differently per member cluster when they are propagated (image registry, labels,
// arguments, arbitrary JSON patches, ...).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=overridepolicies,scope=Namespaced,shortName=op,categories=karmada-io
type OverridePolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the set of override rules.
	// +required
	Spec OverrideSpec `json:"spec"`
}

// OverrideSpec is the spec shared by OverridePolicy and ClusterOverridePolicy
// (Karmada's OverrideSpec).
//
// +kubebuilder:validation:XValidation:rule="!has(self.overrideRules) || !has(self.targetCluster)",message="spec.overrideRules and the deprecated spec.targetCluster cannot both be set",fieldPath=.targetCluster
// +kubebuilder:validation:XValidation:rule="!has(self.overrideRules) || !has(self.overriders) || ((!has(self.overriders.plaintext) || size(self.overriders.plaintext) == 0) && (!has(self.overriders.imageOverrider) || size(self.overriders.imageOverrider) == 0) && (!has(self.overriders.commandOverrider) || size(self.overriders.commandOverrider) == 0) && (!has(self.overriders.argsOverrider) || size(self.overriders.argsOverrider) == 0) && (!has(self.overriders.labelsOverrider) || size(self.overriders.labelsOverrider) == 0) && (!has(self.overriders.annotationsOverrider) || size(self.overriders.annotationsOverrider) == 0) && (!has(self.overriders.fieldOverrider) || size(self.overriders.fieldOverrider) == 0))",message="spec.overrideRules and the deprecated spec.overriders cannot both be set",fieldPath=.overriders
type OverrideSpec struct {
	// ResourceSelectors choose the resource templates the policy overrides. Empty selects
	// every resource template the policy can see.
	// +optional
	ResourceSelectors []ResourceSelector `json:"resourceSelectors,omitempty"`

	// OverrideRules are applied in order; each applies its overriders to the clusters its
	// targetCluster selects.
	// +optional
	OverrideRules []RuleWithCluster `json:"overrideRules,omitempty"`

	// TargetCluster selects the clusters Overriders apply to.
	// Deprecated: use OverrideRules. Cannot be combined with OverrideRules.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders are applied to the clusters TargetCluster selects.
	// Deprecated: use OverrideRules. Cannot be combined with OverrideRules.
	// +optional
	Overriders Overriders `json:"overriders,omitempty"`
}

// RuleWithCluster applies overriders to the clusters it targets.
type RuleWithCluster struct {
	// TargetCluster selects the clusters the rule applies to. Nil selects all.
	// +optional
	TargetCluster *ClusterAffinity `json:"targetCluster,omitempty"`

	// Overriders are the changes to make.
	// +required
	Overriders Overriders `json:"overriders"`
}

// Overriders are the kinds of change an override rule makes. As in Karmada they are applied
// in the order ImageOverrider, CommandOverrider, ArgsOverrider, LabelsOverrider,
// AnnotationsOverrider, FieldOverrider, Plaintext, and within a kind in list order.
type Overriders struct {
	// Plaintext are raw JSON patch operations on the resource.
	// +optional
	Plaintext []PlaintextOverrider `json:"plaintext,omitempty"`

	// ImageOverrider change container images.
	// +optional
	ImageOverrider []ImageOverrider `json:"imageOverrider,omitempty"`

	// CommandOverrider change container commands.
	// +optional
	CommandOverrider []CommandArgsOverrider `json:"commandOverrider,omitempty"`

	// ArgsOverrider change container arguments.
	// +optional
	ArgsOverrider []CommandArgsOverrider `json:"argsOverrider,omitempty"`

	// LabelsOverrider change the resource's labels.
	// +optional
	LabelsOverrider []LabelAnnotationOverrider `json:"labelsOverrider,omitempty"`

	// AnnotationsOverrider change the resource's annotations.
	// +optional
	AnnotationsOverrider []LabelAnnotationOverrider `json:"annotationsOverrider,omitempty"`

	// FieldOverrider patch JSON or YAML documents held in string fields of the resource (for
	// example a config file inside a ConfigMap).
	// +optional
	FieldOverrider []FieldOverrider `json:"fieldOverrider,omitempty"`
}

// PlaintextOverrider is one JSON patch operation on the resource.
//
// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="plaintext[*].path must be a JSON pointer starting with '/'",fieldPath=.path
type PlaintextOverrider struct {
	// Path is the JSON pointer of the field to change, for example "/spec/replicas".
	// +required
	Path string `json:"path"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the new value, for add and replace.
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// ImageOverrider changes one component of container images.
type ImageOverrider struct {
	// Predicate selects the image field to change. Nil changes the image of every container
	// (not init containers, as in Karmada) of a known workload kind.
	// +optional
	Predicate *ImagePredicate `json:"predicate,omitempty"`

	// Component is the part of the image reference to change: Registry, Repository or Tag.
	// +kubebuilder:validation:Enum=Registry;Repository;Tag
	// +required
	Component ImageComponent `json:"component"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the new component value, for add and replace.
	// +optional
	Value string `json:"value,omitempty"`
}

// ImagePredicate selects the image field an ImageOverrider changes.
//
// +kubebuilder:validation:XValidation:rule="self.path.startsWith('/')",message="imageOverrider[*].predicate.path must be a JSON pointer starting with '/'",fieldPath=.path
type ImagePredicate struct {
	// Path is the JSON pointer of the image field, for example
	// "/spec/template/spec/containers/0/image".
	// +required
	Path string `json:"path"`
}

// ImageComponent is a part of an image reference: Registry, Repository or Tag.
type ImageComponent string

const (
	// Registry is the registry host (and port) of an image reference.
	Registry ImageComponent = "Registry"
	// Repository is the repository path of an image reference.
	Repository ImageComponent = "Repository"
	// Tag is the tag (or digest) of an image reference.
	Tag ImageComponent = "Tag"
)

// CommandArgsOverrider adds or removes command or argument entries of one container.
type CommandArgsOverrider struct {
	// ContainerName is the container to change.
	// +required
	ContainerName string `json:"containerName"`

	// Operator is add or remove.
	// +kubebuilder:validation:Enum=add;remove
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value are the entries to append (add) or delete (remove).
	// +optional
	Value []string `json:"value,omitempty"`
}

// LabelAnnotationOverrider adds, removes or replaces labels or annotations.
type LabelAnnotationOverrider struct {
	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value are the keys (and values) to change. Karmada v1.19 requires it; it stays optional
	// here because Karmada v1.7 manifests may omit it.
	// +optional
	Value map[string]string `json:"value,omitempty"`
}

// FieldOverrider patches a JSON or YAML document held in a string field of the resource.
// Exactly one of JSON and YAML is used.
//
// +kubebuilder:validation:XValidation:rule="self.fieldPath.startsWith('/')",message="fieldOverrider[*].fieldPath must be a JSON pointer starting with '/'",fieldPath=.fieldPath
// +kubebuilder:validation:XValidation:rule="!has(self.json) || !has(self.yaml) || size(self.json) == 0 || size(self.yaml) == 0",message="fieldOverrider[*] cannot set both json and yaml"
// +kubebuilder:validation:XValidation:rule="(has(self.json) && size(self.json) > 0) || (has(self.yaml) && size(self.yaml) > 0)",message="fieldOverrider[*] must set json or yaml"
type FieldOverrider struct {
	// FieldPath is the JSON pointer of the string field that holds the document, for example
	// "/data/config.yaml".
	// +required
	FieldPath string `json:"fieldPath"`

	// JSON are patch operations for a JSON document.
	// +optional
	JSON []JSONPatchOperation `json:"json,omitempty"`

	// YAML are patch operations for a YAML document.
	// +optional
	YAML []YAMLPatchOperation `json:"yaml,omitempty"`
}

// JSONPatchOperation is one patch operation inside a JSON document.
//
// +kubebuilder:validation:XValidation:rule="size(self.subPath) == 0 || self.subPath.startsWith('/')",message="fieldOverrider[*].json[*].subPath must be empty or a JSON pointer starting with '/'",fieldPath=.subPath
type JSONPatchOperation struct {
	// SubPath is the JSON pointer inside the document; empty means the whole document.
	// +required
	SubPath string `json:"subPath"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the new value: required for add and replace, not allowed for remove (checked
	// by ValidateOverrideSpec, since CEL cannot see untyped values).
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// YAMLPatchOperation is one patch operation inside a YAML document.
//
// +kubebuilder:validation:XValidation:rule="size(self.subPath) == 0 || self.subPath.startsWith('/')",message="fieldOverrider[*].yaml[*].subPath must be empty or a JSON pointer starting with '/'",fieldPath=.subPath
type YAMLPatchOperation struct {
	// SubPath is the JSON pointer inside the document; empty means the whole document.
	// +required
	SubPath string `json:"subPath"`

	// Operator is add, remove or replace.
	// +kubebuilder:validation:Enum=add;remove;replace
	// +required
	Operator OverriderOperator `json:"operator"`

	// Value is the new value: required for add and replace, not allowed for remove (checked
	// by ValidateOverrideSpec, since CEL cannot see untyped values).
	// +optional
	Value apiextensionsv1.JSON `json:"value,omitempty"`
}

// OverriderOperator is add, remove or replace.
type OverriderOperator string

const (
	// OverriderOpAdd adds a value.
	OverriderOpAdd OverriderOperator = "add"
	// OverriderOpRemove removes a value.
	OverriderOpRemove OverriderOperator = "remove"
	// OverriderOpReplace replaces a value.
	OverriderOpReplace OverriderOperator = "replace"
)

// OverridePolicyList is a list of OverridePolicy.
//
// +kubebuilder:object:root=true
type OverridePolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the policies.
	Items []OverridePolicy `json:"items"`
}
