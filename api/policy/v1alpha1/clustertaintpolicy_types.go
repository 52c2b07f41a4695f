package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ClusterTaintPolicy is Karmada's rule for tainting member clusters automatically: when a
// target cluster's status conditions match AddOnConditions the taints are added, and when
// they match RemoveOnConditions the taints are removed.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clustertaintpolicies,scope=Cluster
type ClusterTaintPolicy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the tainting rule.
	// +required
	Spec ClusterTaintPolicySpec `json:"spec"`
}

// ClusterTaintPolicySpec is Karmada's ClusterTaintPolicy.spec.
type ClusterTaintPolicySpec struct {
	// TargetClusters selects the clusters the policy manages. Nil selects all.
	// +optional
	TargetClusters *ClusterAffinity `json:"targetClusters,omitempty"`

	// AddOnConditions are ANDed; when all match a cluster's conditions, Taints are added.
	// +optional
	AddOnConditions []MatchCondition `json:"addOnConditions,omitempty"`

	// RemoveOnConditions are ANDed; when all match a cluster's conditions, Taints are removed.
	// +optional
	RemoveOnConditions []MatchCondition `json:"removeOnConditions,omitempty"`

	// Taints are added to or removed from the target clusters.
	// +kubebuilder:validation:MinItems=1
	// +required
	Taints []Taint `json:"taints"`
}

// MatchCondition matches one condition of a cluster's status.
type MatchCondition struct {
	// ConditionType is the condition type, for example "Ready".
	// +required
	ConditionType string `json:"conditionType"`

	// Operator is In or NotIn.
	// +required
	Operator MatchConditionOperator `json:"operator"`

	// StatusValues are the condition statuses the operator compares against.
	// +required
	StatusValues []metav1.ConditionStatus `json:"statusValues"`
}

// MatchConditionOperator is In or NotIn.
//
// +kubebuilder:validation:XValidation:rule="self == 'In' || self == 'NotIn'",message="operator must be In or NotIn"
type MatchConditionOperator string

const (
	// MatchConditionOpIn matches when the condition status is one of the values.
	MatchConditionOpIn MatchConditionOperator = "In"
	// MatchConditionOpNotIn matches when the condition status is none of the values.
	MatchConditionOpNotIn MatchConditionOperator = "NotIn"
)

// Taint is a cluster taint managed by a ClusterTaintPolicy.
type Taint struct {
	// Key of the taint.
	// +required
	Key string `json:"key"`

	// Value of the taint.
	// +optional
	Value string `json:"value,omitempty"`

	// Effect of the taint: NoSchedule, PreferNoSchedule or NoExecute, as a cluster's
	// spec.taints allow.
	// +required
	Effect corev1.TaintEffect `json:"effect"`
}

// ClusterTaintPolicyList is a list of ClusterTaintPolicy.
//
// +kubebuilder:object:root=true
type ClusterTaintPolicyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the policies.
	Items []ClusterTaintPolicy `json:"items"`
}
