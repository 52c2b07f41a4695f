package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Remedy is Karmada's rule that attaches remedy actions to clusters whose status conditions
// match: while every decision match holds for a cluster, the actions appear in that
// Cluster's status.remedyActions (for example TrafficControl, which takes the cluster out of
// multi-cluster ingress traffic).
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=remedies,scope=Cluster,categories=karmada-io
type Remedy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the rule.
	// +required
	Spec RemedySpec `json:"spec"`
}

// RemedySpec is Karmada's Remedy.spec.
type RemedySpec struct {
	// ClusterAffinity selects the clusters the remedy watches; nil means all.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// DecisionMatches are ANDed; when all hold for a cluster, the actions apply. Empty means
	// the actions always apply.
	// +optional
	DecisionMatches []DecisionMatch `json:"decisionMatches,omitempty"`

	// Actions are the remedy actions; TrafficControl, the only action Karmada defines, is
	// the only one allowed.
	// +optional
	Actions []RemedyAction `json:"actions,omitempty"`
}

// ClusterAffinity selects clusters by name.
type ClusterAffinity struct {
	// ClusterNames are the clusters selected.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`
}

// DecisionMatch is one condition a cluster must meet.
type DecisionMatch struct {
	// ClusterConditionMatch compares one of the cluster's status conditions.
	// +optional
	ClusterConditionMatch *ClusterConditionRequirement `json:"clusterConditionMatch,omitempty"`
}

// ClusterConditionRequirement compares the status of one cluster condition.
type ClusterConditionRequirement struct {
	// ConditionType is the cluster condition type, for example "ServiceDomainNameResolutionReady".
	// +required
	ConditionType ConditionType `json:"conditionType"`

	// Operator is Equal or NotEqual.
	// +kubebuilder:validation:Enum=Equal;NotEqual
	// +required
	Operator ClusterConditionOperator `json:"operator"`

	// ConditionStatus is the status compared against, for example "False".
	// +required
	ConditionStatus string `json:"conditionStatus"`
}

// ConditionType is a Cluster condition type a Remedy matches on: Karmada's
// ServiceDomainNameResolutionReady (written by the service name resolution
// detector), or one of the conditions every Cluster carries (Ready,
// CompleteAPIEnablements). Any other type is refused at admission: no
// component writes it, so a Remedy naming it (a misspelling, most often)
// would never match. The FlotillaValidation admission plugin checks it (a
// CEL rule on a field of an unbounded list exceeds the API server's cost
// budget).
type ConditionType string

// ConditionTypes are the condition types a Remedy may name.
var ConditionTypes = []ConditionType{ServiceDomainNameResolutionReady, "Ready", "CompleteAPIEnablements"}

const (
	// ServiceDomainNameResolutionReady is the condition the service name
	// resolution detector writes: whether the member resolves its service
	// domain names.
	ServiceDomainNameResolutionReady ConditionType = "ServiceDomainNameResolutionReady"
)

// ClusterConditionOperator is Equal or NotEqual.
type ClusterConditionOperator string

const (
	// ClusterConditionEqual matches when the condition has the given status.
	ClusterConditionEqual ClusterConditionOperator = "Equal"
	// ClusterConditionNotEqual matches when the condition does not have the given status.
	ClusterConditionNotEqual ClusterConditionOperator = "NotEqual"
)

// RemedyAction is an action a Remedy asks for.
//
// +kubebuilder:validation:XValidation:rule="self == 'TrafficControl'",message="spec.actions[*] must be TrafficControl, the one remedy action"
type RemedyAction string

const (
	// TrafficControl takes the cluster out of multi-cluster traffic.
	TrafficControl RemedyAction = "TrafficControl"
)

// RemedyList is a list of Remedy.
//
// +kubebuilder:object:root=true
type RemedyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the remedies.
	Items []Remedy `json:"items"`
}
