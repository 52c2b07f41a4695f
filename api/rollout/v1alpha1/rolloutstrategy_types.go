package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
)

// StrategyAnnotation is the annotation, on a PropagationPolicy or ClusterPropagationPolicy, that
// names the strategy that stages changes to the templates the policy
// claims: "<name>" is a RolloutStrategy in the policy's namespace (a
// ClusterRolloutStrategy for a ClusterPropagationPolicy), and
// "ClusterRolloutStrategy/<name>" a cluster-scoped one from either. The
// detector copies it onto each binding, in the same write as the template
// change it stages.
const StrategyAnnotation = "rollout.flotilla.io/strategy"

// Requests of `flotilla rollout` on a ResourceBinding or
// ClusterResourceBinding; the rollout controller acts on each once.
const (
	// PausedAnnotation "true" means admit no more clusters.
	PausedAnnotation = "rollout.flotilla.io/paused"
	// ResumeAnnotation is a timestamp: give the failed clusters a new
	// progressDeadline (set with the removal of PausedAnnotation).
	ResumeAnnotation = "rollout.flotilla.io/resume"
	// RestartAnnotation is a timestamp: start the rollout again from the
	// first wave, forgiving failures.
	RestartAnnotation = "rollout.flotilla.io/restart"
	// AbortAnnotation names the revision (status.rollout.revision) to
	// abort, as "<revision>@<timestamp>", so that each request is acted on
	// once: the clusters already given it go back to the rendering they
	// ran before, and no more are admitted until the template changes or
	// the rollout is restarted.
	AbortAnnotation = "rollout.flotilla.io/abort"
)

// RolloutType is how a rollout moves through its waves: OCM's
// RolloutStrategy types.
// +kubebuilder:validation:Enum=All;Progressive;ProgressivePerGroup
type RolloutType string

const (
	// All gives every cluster the change at once; deadline and failures
	// are only reported.
	All RolloutType = "All"
	// Progressive admits clusters in wave order, then by name, with at
	// most maxConcurrency in flight; maxFailures counts over all clusters.
	Progressive RolloutType = "Progressive"
	// ProgressivePerGroup admits one wave at a time and moves on when every
	// cluster of the wave is done or failed within maxFailures of the wave.
	ProgressivePerGroup RolloutType = "ProgressivePerGroup"
)

// RolloutStrategy stages a change to the templates of the policies that
// name it (annotation rollout.flotilla.io/strategy) across their clusters:
// wave by wave, each cluster Healthy for minSuccessTime before the next
// goes, stopping when more than maxFailures clusters fail.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=rolloutstrategies,scope=Namespaced,shortName=ros,categories=flotilla-io
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="GROUP-BY",type=string,JSONPath=`.spec.groupBy.clusterLabel`
// +kubebuilder:printcolumn:name="CONCURRENCY",type=string,JSONPath=`.spec.maxConcurrency`
// +kubebuilder:printcolumn:name="MIN-SUCCESS",type=string,JSONPath=`.spec.minSuccessTime`
// +kubebuilder:printcolumn:name="DEADLINE",type=string,JSONPath=`.spec.progressDeadline`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type RolloutStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the strategy.
	// +required
	Spec RolloutStrategySpec `json:"spec"`
}

// RolloutStrategyList is a list of RolloutStrategy.
//
// +kubebuilder:object:root=true
type RolloutStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []RolloutStrategy `json:"items"`
}

// ClusterRolloutStrategy is the cluster-scoped twin of RolloutStrategy,
// for ClusterPropagationPolicies and shared by every namespace.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusterrolloutstrategies,scope=Cluster,shortName=cros,categories=flotilla-io
// +kubebuilder:printcolumn:name="TYPE",type=string,JSONPath=`.spec.type`
// +kubebuilder:printcolumn:name="GROUP-BY",type=string,JSONPath=`.spec.groupBy.clusterLabel`
// +kubebuilder:printcolumn:name="CONCURRENCY",type=string,JSONPath=`.spec.maxConcurrency`
// +kubebuilder:printcolumn:name="MIN-SUCCESS",type=string,JSONPath=`.spec.minSuccessTime`
// +kubebuilder:printcolumn:name="DEADLINE",type=string,JSONPath=`.spec.progressDeadline`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type ClusterRolloutStrategy struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the strategy.
	// +required
	Spec RolloutStrategySpec `json:"spec"`
}

// ClusterRolloutStrategyList is a list of ClusterRolloutStrategy.
//
// +kubebuilder:object:root=true
type ClusterRolloutStrategyList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ClusterRolloutStrategy `json:"items"`
}

// RolloutStrategySpec is how a change moves through the clusters. Waves
// come from groupBy (with groups giving their order) or from steps; without
// either, every cluster is one wave. Clusters in no wave form a last one.
//
// +kubebuilder:validation:XValidation:rule="!(has(self.groupBy) && has(self.steps))",message="groupBy and steps are exclusive: waves come from one of them"
// +kubebuilder:validation:XValidation:rule="self.type != 'ProgressivePerGroup' || has(self.groupBy) || has(self.steps)",message="type ProgressivePerGroup needs waves: set groupBy or steps"
// +kubebuilder:validation:XValidation:rule="!has(self.groups) || (has(self.groupBy) && has(self.groupBy.clusterLabel))",message="groups orders the values of groupBy.clusterLabel: set groupBy.clusterLabel"
// +kubebuilder:validation:XValidation:rule="!has(self.minSuccessTime) || !has(self.progressDeadline) || !self.minSuccessTime.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || !self.progressDeadline.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') || duration(self.progressDeadline) > duration(self.minSuccessTime)",message="progressDeadline must be longer than minSuccessTime: a cluster could never be done in time",fieldPath=".progressDeadline"
type RolloutStrategySpec struct {
	// Type is All, Progressive or ProgressivePerGroup (OCM's types).
	// +required
	Type RolloutType `json:"type"`

	// GroupBy forms the waves: from the value of a cluster label (ordered
	// by groups) or from the claiming policy's clusterAffinities terms.
	// +optional
	GroupBy *GroupBy `json:"groupBy,omitempty"`

	// Groups are the values of groupBy.clusterLabel, in wave order.
	// +listType=set
	// +kubebuilder:validation:MaxItems=64
	// +optional
	Groups []string `json:"groups,omitempty"`

	// Steps are explicit waves, in order: a cluster joins the first step
	// whose matchExpressions (on its labels, ANDed) it meets (Argo CD's
	// RollingSync steps).
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="self.all(s, !has(s.name) || self.exists_one(t, has(t.name) && t.name == s.name))",message="step names must be unique"
	// +optional
	Steps []RolloutStep `json:"steps,omitempty"`

	// MaxConcurrency bounds the clusters in flight (given the change, not
	// yet done or failed): a number, or a percentage of the clusters (of
	// all for Progressive, of the wave for ProgressivePerGroup), rounded
	// up. Unset: 1 for Progressive, the whole wave for ProgressivePerGroup.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]?|100)%$')",message="maxConcurrency must be a number of at least 1 or a percentage from 1% to 100%"
	// +optional
	MaxConcurrency *intstr.IntOrString `json:"maxConcurrency,omitempty"`

	// MinSuccessTime is how long a cluster must stay Healthy on the change
	// to be done (a Go duration, "15s"; default 0).
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$')",message="minSuccessTime must be a duration of 0 or more, such as 15s or 2m"
	// +optional
	MinSuccessTime *metav1.Duration `json:"minSuccessTime,omitempty"`

	// ProgressDeadline is how long a cluster may take, once given the
	// change, to become Healthy before it counts as failed. Unset: no
	// deadline (OCM's "None").
	// +kubebuilder:validation:XValidation:rule="self.matches('^([0-9]+([.][0-9]+)?(ns|us|µs|ms|s|m|h))+$') && duration(self) > duration('0s')",message="progressDeadline must be a positive duration, such as 5m"
	// +optional
	ProgressDeadline *metav1.Duration `json:"progressDeadline,omitempty"`

	// MaxFailures is how many failed clusters (not Healthy within
	// progressDeadline) are tolerated before the rollout stops admitting
	// clusters (the binding's Progressing condition False, reason
	// RolloutPaused): a number or a percentage, over all clusters for
	// Progressive, per wave for ProgressivePerGroup. Default 0.
	// +kubebuilder:validation:XIntOrString
	// +kubebuilder:validation:XValidation:rule="type(self) == int ? self >= 0 : self.matches('^([0-9]|[1-9][0-9]|100)%$')",message="maxFailures must be a number of at least 0 or a percentage from 0% to 100%"
	// +optional
	MaxFailures *intstr.IntOrString `json:"maxFailures,omitempty"`

	// MandatoryDecisionGroups are waves that go first and tolerate no
	// failure (OCM's mandatoryDecisionGroups), named or by index.
	// +kubebuilder:validation:MaxItems=64
	// +optional
	MandatoryDecisionGroups []MandatoryDecisionGroup `json:"mandatoryDecisionGroups,omitempty"`
}

// GroupBy says where waves come from; exactly one field is set.
//
// +kubebuilder:validation:XValidation:rule="has(self.clusterLabel) != has(self.clusterAffinities)",message="set exactly one of clusterLabel and clusterAffinities"
type GroupBy struct {
	// ClusterLabel is a Cluster label key; clusters with the same value
	// form a wave, ordered by groups.
	// +kubebuilder:validation:MaxLength=317
	// +kubebuilder:validation:Pattern=`^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$`
	// +optional
	ClusterLabel string `json:"clusterLabel,omitempty"`

	// ClusterAffinities, when present ({}), makes one wave of each term of
	// the claiming policy's placement.clusterAffinities, in order, named by
	// its affinityName; a cluster joins the first term it matches.
	// +optional
	ClusterAffinities *AffinityGrouping `json:"clusterAffinities,omitempty"`
}

// AffinityGrouping selects grouping by the policy's clusterAffinities; it
// has no fields.
type AffinityGrouping struct{}

// RolloutStep is one explicit wave.
//
// +kubebuilder:validation:XValidation:rule="self.matchExpressions.all(e, e.operator in ['In', 'NotIn', 'Exists', 'DoesNotExist'])",message="matchExpressions operators are In, NotIn, Exists or DoesNotExist"
// +kubebuilder:validation:XValidation:rule="self.matchExpressions.all(e, (e.operator in ['In', 'NotIn']) == (has(e.values) && size(e.values) > 0))",message="matchExpressions: In and NotIn need values, Exists and DoesNotExist take none"
type RolloutStep struct {
	// Name names the wave in status and events; default "step-<index>".
	// +kubebuilder:validation:MaxLength=63
	// +optional
	Name string `json:"name,omitempty"`

	// MatchExpressions select clusters by label, ANDed.
	// +kubebuilder:validation:MinItems=1
	// +kubebuilder:validation:MaxItems=16
	// +required
	MatchExpressions []metav1.LabelSelectorRequirement `json:"matchExpressions"`
}

// MandatoryDecisionGroup names a wave by groupName (a value of groups, an
// affinityName or a step name) or by groupIndex (0 is the first wave).
//
// +kubebuilder:validation:XValidation:rule="has(self.groupName) != has(self.groupIndex)",message="set exactly one of groupName and groupIndex"
type MandatoryDecisionGroup struct {
	// GroupName is the wave's name.
	// +optional
	GroupName string `json:"groupName,omitempty"`

	// GroupIndex is the wave's index, from 0.
	// +kubebuilder:validation:Minimum=0
	// +optional
	GroupIndex *int32 `json:"groupIndex,omitempty"`
}
