package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Placement says which member clusters receive a resource and how its replicas are spread
// (Karmada's Placement). It is copied unchanged into ResourceBinding.spec.placement.
//
// +kubebuilder:validation:XValidation:rule="!has(self.clusterAffinity) || !has(self.clusterAffinities)",message="placement.clusterAffinities cannot be used together with placement.clusterAffinity"
type Placement struct {
	// ClusterAffinity restricts scheduling to the clusters it selects. Nil (and no
	// ClusterAffinities) means every cluster is a candidate.
	// +optional
	ClusterAffinity *ClusterAffinity `json:"clusterAffinity,omitempty"`

	// ClusterAffinities lists cluster groups in order of preference: the scheduler tries each
	// group in turn and uses the first one that satisfies the placement; if none does,
	// scheduling fails. A cluster may belong to several groups. Cannot be combined with
	// ClusterAffinity. Each group's affinityName must be unique.
	// +kubebuilder:validation:MaxItems=128
	// +kubebuilder:validation:XValidation:rule="self.all(a, self.exists_one(b, b.affinityName == a.affinityName))",message="placement.clusterAffinities[*].affinityName must be unique"
	// +optional
	ClusterAffinities []ClusterAffinityTerm `json:"clusterAffinities,omitempty"`

	// ClusterTolerations let the resource be scheduled onto clusters with matching taints.
	// +optional
	ClusterTolerations []corev1.Toleration `json:"clusterTolerations,omitempty"`

	// SpreadConstraints spread the resource over groups of clusters (by cluster, region, zone,
	// provider, or a cluster label). If any constraint spreads by field, one of them must
	// spread by the field "cluster"; a constraint that names neither field counts as one
	// spreading by cluster, as Karmada's defaulting makes it.
	// +kubebuilder:validation:MaxItems=64
	// +kubebuilder:validation:XValidation:rule="!self.exists(c, has(c.spreadByField)) || self.exists(c, (has(c.spreadByField) && c.spreadByField == 'cluster') || (!has(c.spreadByField) && (!has(c.spreadByLabel) || size(c.spreadByLabel) == 0)))",message="placement.spreadConstraints must include a constraint with spreadByField 'cluster' when any constraint uses spreadByField"
	// +kubebuilder:validation:XValidation:rule="self.all(c, !has(c.spreadByField) || self.exists_one(d, has(d.spreadByField) && d.spreadByField == c.spreadByField))",message="placement.spreadConstraints may use each spreadByField value only once"
	// +optional
	SpreadConstraints []SpreadConstraint `json:"spreadConstraints,omitempty"`

	// ReplicaScheduling says how replicas of a workload are assigned to the chosen clusters.
	// +optional
	ReplicaScheduling *ReplicaSchedulingStrategy `json:"replicaScheduling,omitempty"`

	// WorkloadAffinity co-locates or separates workloads by a label of their resource
	// templates.
	// +optional
	WorkloadAffinity *WorkloadAffinity `json:"workloadAffinity,omitempty"`
}

// ClusterAffinity selects member clusters by labels, by fields, and by name. A cluster must
// match every part that is set, and must not be excluded.
type ClusterAffinity struct {
	// LabelSelector selects clusters by their labels. Nil selects all.
	// +optional
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`

	// FieldSelector selects clusters by spec fields. Keys are "provider", "region" and "zone";
	// operators are In and NotIn.
	// +optional
	FieldSelector *FieldSelector `json:"fieldSelector,omitempty"`

	// ClusterNames lists the clusters that may be selected. Empty means no restriction.
	// +optional
	ClusterNames []string `json:"clusterNames,omitempty"`

	// ExcludeClusters lists clusters that are never selected.
	// +optional
	ExcludeClusters []string `json:"exclude,omitempty"`
}

// FieldSelector selects clusters by the provider, region and zone fields of their spec.
type FieldSelector struct {
	// MatchExpressions are ANDed requirements on cluster fields.
	// +optional
	MatchExpressions []corev1.NodeSelectorRequirement `json:"matchExpressions,omitempty"`
}

// Keys accepted in a FieldSelector requirement.
const (
	// ProviderField matches Cluster.spec.provider.
	ProviderField = "provider"
	// RegionField matches Cluster.spec.region.
	RegionField = "region"
	// ZoneField matches Cluster.spec.zones (and the deprecated spec.zone).
	ZoneField = "zone"
)

// ClusterAffinityTerm is one named group of ClusterAffinities.
type ClusterAffinityTerm struct {
	// AffinityName names the group; it is reported in the binding's
	// status.schedulerObservingAffinityName while the scheduler uses this group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`

	// OverflowAffinities are further groups that the scheduler adds, in order, when the
	// clusters of this term (the primary group) lack resources, and removes in reverse order
	// on scale-down. A cluster listed in several overflow groups belongs to the first one.
	// +optional
	OverflowAffinities []OverflowClusterAffinityTerm `json:"overflowAffinities,omitempty"`
}

// OverflowClusterAffinityTerm is one named overflow group of a ClusterAffinityTerm.
type OverflowClusterAffinityTerm struct {
	// AffinityName names the overflow group.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	AffinityName string `json:"affinityName"`

	ClusterAffinity `json:",inline"`
}

// SpreadConstraint spreads a resource over groups of clusters (Karmada's SpreadConstraint).
// Exactly one of SpreadByField and SpreadByLabel names the grouping; a constraint that names
// neither spreads by cluster.
//
// +kubebuilder:validation:XValidation:rule="!has(self.spreadByField) || !has(self.spreadByLabel) || size(self.spreadByLabel) == 0",message="spreadConstraints[*]: spreadByField and spreadByLabel are mutually exclusive"
// +kubebuilder:validation:XValidation:rule="(!has(self.minGroups) || self.minGroups >= 0) && (!has(self.maxGroups) || self.maxGroups >= 0)",message="spreadConstraints[*]: minGroups and maxGroups must not be negative"
// +kubebuilder:validation:XValidation:rule="!has(self.maxGroups) || self.maxGroups == 0 || self.maxGroups >= (has(self.minGroups) ? self.minGroups : 1)",message="spreadConstraints[*].maxGroups must be greater than or equal to minGroups"
type SpreadConstraint struct {
	// SpreadByField groups clusters by a Cluster field: cluster, region, zone or provider.
	// +kubebuilder:validation:Enum=cluster;region;zone;provider
	// +optional
	SpreadByField SpreadFieldValue `json:"spreadByField,omitempty"`

	// SpreadByLabel groups clusters by the value of this cluster label.
	// +optional
	SpreadByLabel string `json:"spreadByLabel,omitempty"`

	// MaxGroups is the largest number of groups to select; 0 means no limit.
	// +optional
	MaxGroups int `json:"maxGroups,omitempty"`

	// MinGroups is the smallest number of groups to select. Defaults to 1.
	// +kubebuilder:default=1
	// +optional
	MinGroups int `json:"minGroups,omitempty"`
}

// EffectiveSpreadByField returns the field the constraint groups clusters by, treating a
// constraint that names neither a field nor a label as spreading by cluster (Karmada's
// defaulting). It returns "" for a constraint that spreads by label.
func (c SpreadConstraint) EffectiveSpreadByField() SpreadFieldValue {
	if c.SpreadByField == "" && c.SpreadByLabel == "" {
		return SpreadByFieldCluster
	}
	return c.SpreadByField
}

// SpreadFieldValue is a Cluster field that clusters can be grouped by.
type SpreadFieldValue string

const (
	// SpreadByFieldCluster makes each cluster its own group.
	SpreadByFieldCluster SpreadFieldValue = "cluster"
	// SpreadByFieldRegion groups clusters by spec.region.
	SpreadByFieldRegion SpreadFieldValue = "region"
	// SpreadByFieldZone groups clusters by zone.
	SpreadByFieldZone SpreadFieldValue = "zone"
	// SpreadByFieldProvider groups clusters by spec.provider.
	SpreadByFieldProvider SpreadFieldValue = "provider"
)

// ReplicaSchedulingStrategy says how a workload's replicas are assigned to clusters
// (Karmada's ReplicaSchedulingStrategy).
type ReplicaSchedulingStrategy struct {
	// ReplicaSchedulingType is Duplicated (every cluster runs the full replica count) or
	// Divided (the replica count is split among clusters). Defaults to Divided.
	// +kubebuilder:validation:Enum=Duplicated;Divided
	// +kubebuilder:default=Divided
	// +optional
	ReplicaSchedulingType ReplicaSchedulingType `json:"replicaSchedulingType,omitempty"`

	// ReplicaDivisionPreference says how Divided replicas are split: Aggregated (onto as few
	// clusters as their free resources allow) or Weighted (by WeightPreference).
	// +kubebuilder:validation:Enum=Aggregated;Weighted
	// +optional
	ReplicaDivisionPreference ReplicaDivisionPreference `json:"replicaDivisionPreference,omitempty"`

	// WeightPreference gives the weights for Weighted division. Nil means equal static weights
	// for every chosen cluster.
	// +optional
	WeightPreference *ClusterPreferences `json:"weightPreference,omitempty"`
}

// ReplicaSchedulingType is Duplicated or Divided.
type ReplicaSchedulingType string

const (
	// ReplicaSchedulingTypeDuplicated runs the full replica count in every chosen cluster.
	ReplicaSchedulingTypeDuplicated ReplicaSchedulingType = "Duplicated"
	// ReplicaSchedulingTypeDivided splits the replica count among the chosen clusters.
	ReplicaSchedulingTypeDivided ReplicaSchedulingType = "Divided"
)

// ReplicaDivisionPreference is Aggregated or Weighted.
type ReplicaDivisionPreference string

const (
	// ReplicaDivisionPreferenceAggregated packs replicas onto as few clusters as possible.
	ReplicaDivisionPreferenceAggregated ReplicaDivisionPreference = "Aggregated"
	// ReplicaDivisionPreferenceWeighted splits replicas by weight.
	ReplicaDivisionPreferenceWeighted ReplicaDivisionPreference = "Weighted"
)

// ClusterPreferences gives the weights of Weighted replica division: a static list, or a
// dynamic factor.
type ClusterPreferences struct {
	// StaticWeightList assigns fixed weights to the clusters each entry selects.
	// +optional
	StaticWeightList []StaticClusterWeight `json:"staticWeightList,omitempty"`

	// DynamicWeight derives weights from cluster state; AvailableReplicas weights each cluster
	// by how many replicas it can still hold. It takes precedence over StaticWeightList.
	// +kubebuilder:validation:Enum=AvailableReplicas
	// +optional
	DynamicWeight DynamicWeightFactor `json:"dynamicWeight,omitempty"`
}

// StaticClusterWeight is the static weight of the clusters that TargetCluster selects.
type StaticClusterWeight struct {
	// TargetCluster selects the clusters that get this weight.
	// +required
	TargetCluster ClusterAffinity `json:"targetCluster"`

	// Weight is the relative share of replicas, at least 1.
	// +kubebuilder:validation:Minimum=1
	// +required
	Weight int64 `json:"weight"`
}

// DynamicWeightFactor is how dynamic weights are derived; only AvailableReplicas is defined.
type DynamicWeightFactor string

const (
	// DynamicWeightByAvailableReplicas weights each cluster by the replicas it can still hold.
	DynamicWeightByAvailableReplicas DynamicWeightFactor = "AvailableReplicas"
)

// WorkloadAffinity groups workloads by a label of their resource templates, to keep a group
// in the same clusters (Affinity) or apart (AntiAffinity). Groups are per namespace.
type WorkloadAffinity struct {
	// Affinity keeps workloads with the same value of a label key on the same clusters.
	// +optional
	Affinity *WorkloadAffinityTerm `json:"affinity,omitempty"`

	// AntiAffinity keeps workloads with the same value of a label key on different clusters.
	// +optional
	AntiAffinity *WorkloadAntiAffinityTerm `json:"antiAffinity,omitempty"`
}

// WorkloadAffinityTerm names the label key whose value forms an affinity group.
type WorkloadAffinityTerm struct {
	// GroupByLabelKey is a label key on the resource templates; templates with the same value
	// are one affinity group.
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}

// WorkloadAntiAffinityTerm names the label key whose value forms an anti-affinity group.
type WorkloadAntiAffinityTerm struct {
	// GroupByLabelKey is a label key on the resource templates; templates with the same value
	// are one anti-affinity group and are kept apart.
	// +required
	GroupByLabelKey string `json:"groupByLabelKey"`
}
