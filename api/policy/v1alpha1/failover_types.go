package v1alpha1

// FailoverBehavior says how Karmada moves an application away from a failure
// (Karmada's FailoverBehavior).
type FailoverBehavior struct {
	// Application is failover when the application itself is unhealthy in a cluster. Nil
	// disables it. Requires spec.propagateDeps to be true, so that dependencies move along.
	// +optional
	Application *ApplicationFailoverBehavior `json:"application,omitempty"`

	// Cluster is failover when a whole cluster fails. Nil leaves the choice to the
	// controller's no-execute-taint eviction purge mode setting.
	// +optional
	Cluster *ClusterFailoverBehavior `json:"cluster,omitempty"`
}

// ApplicationFailoverBehavior is failover on application failure.
//
// +kubebuilder:validation:XValidation:rule="!has(self.gracePeriodSeconds) || self.gracePeriodSeconds > 0",message="failover.application.gracePeriodSeconds must be greater than 0",fieldPath=.gracePeriodSeconds
// +kubebuilder:validation:XValidation:rule="!has(self.gracePeriodSeconds) || !has(self.purgeMode) || self.purgeMode == 'Gracefully' || self.purgeMode == 'Graciously'",message="failover.application.gracePeriodSeconds only applies when failover.application.purgeMode is Gracefully",fieldPath=.gracePeriodSeconds
type ApplicationFailoverBehavior struct {
	// DecisionConditions must all hold before the application is failed over.
	// +required
	DecisionConditions DecisionConditions `json:"decisionConditions"`

	// PurgeMode says what happens to the application left in the cluster it is migrated
	// from: Directly deletes it at once, Gracefully deletes it once the application is healthy
	// elsewhere (or after GracePeriodSeconds), Never keeps it. The Karmada v1.7 names
	// Immediately (= Directly) and Graciously (= Gracefully) are accepted as aliases; see
	// NormalizePurgeMode. Defaults to Gracefully.
	// +kubebuilder:validation:Enum=Directly;Gracefully;Never;Immediately;Graciously
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// GracePeriodSeconds is the longest time, in seconds, to wait for the application to
	// become healthy in its new cluster before the old copy is deleted anyway. Only with
	// PurgeMode Gracefully; nil means 600 seconds. Must be positive.
	// +optional
	GracePeriodSeconds *int32 `json:"gracePeriodSeconds,omitempty"`

	// StatePreservation copies state out of the failed application's status into labels of
	// the migrated one (needs the StatefulFailoverInjection feature).
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DefaultApplicationFailoverGracePeriodSeconds is the grace period, in seconds, used when
// ApplicationFailoverBehavior.GracePeriodSeconds is nil and PurgeMode is Gracefully.
const DefaultApplicationFailoverGracePeriodSeconds int32 = 600

// ClusterFailoverBehavior is failover on cluster failure.
type ClusterFailoverBehavior struct {
	// PurgeMode says what happens to the application left in the failed cluster: Directly or
	// Gracefully. Defaults to Gracefully.
	// +kubebuilder:validation:Enum=Directly;Gracefully
	// +kubebuilder:default=Gracefully
	// +optional
	PurgeMode PurgeMode `json:"purgeMode,omitempty"`

	// StatePreservation copies state out of the application's status into labels of the
	// migrated one.
	// +optional
	StatePreservation *StatePreservation `json:"statePreservation,omitempty"`
}

// DecisionConditions are the conditions that must hold before failover starts.
type DecisionConditions struct {
	// TolerationSeconds is how long, in seconds, the application may stay unhealthy before it
	// is failed over. 0 fails over at once. Defaults to 300.
	// +kubebuilder:default=300
	// +kubebuilder:validation:XValidation:rule="self >= 0",message="failover.application.decisionConditions.tolerationSeconds must not be negative"
	// +optional
	TolerationSeconds *int32 `json:"tolerationSeconds,omitempty"`
}

// StatePreservation lists the pieces of state carried over during failover.
type StatePreservation struct {
	// Rules each take one value out of the old application's status.
	// +required
	Rules []StatePreservationRule `json:"rules"`
}

// StatePreservationRule takes one value out of the application's status and hands it to
// the new cluster as a label.
type StatePreservationRule struct {
	// AliasLabelName is the label key under which the value is passed to the new cluster.
	// +required
	AliasLabelName string `json:"aliasLabelName"`

	// JSONPath is a kubectl-style JSONPath evaluated against the resource's status, for
	// example "{.availableReplicas}".
	// +required
	JSONPath string `json:"jsonPath"`
}

// PurgeMode is how the copy of an application in the cluster it is migrated away from is
// removed.
type PurgeMode string

const (
	// PurgeModeDirectly deletes the old copy at once.
	PurgeModeDirectly PurgeMode = "Directly"
	// PurgeModeGracefully deletes the old copy once the new one is healthy, or after the
	// grace period.
	PurgeModeGracefully PurgeMode = "Gracefully"
	// PurgeModeNever keeps the old copy.
	PurgeModeNever PurgeMode = "Never"

	// PurgeModeImmediately is the Karmada v1.7 name of PurgeModeDirectly.
	PurgeModeImmediately PurgeMode = "Immediately"
	// PurgeModeGraciously is the Karmada v1.7 name of PurgeModeGracefully.
	PurgeModeGraciously PurgeMode = "Graciously"
)

// NormalizePurgeMode maps the Karmada v1.7 purge mode names onto the current ones
// (Immediately → Directly, Graciously → Gracefully) and returns any other value unchanged.
func NormalizePurgeMode(mode PurgeMode) PurgeMode {
	switch mode {
	case PurgeModeImmediately:
		return PurgeModeDirectly
	case PurgeModeGraciously:
		return PurgeModeGracefully
	default:
		return mode
	}
}
