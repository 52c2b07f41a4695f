package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// CronFederatedHPA is Karmada's scheduled scaler: each rule fires on a cron schedule and
// either sets the replica count of a workload that has a scale subresource, or moves the
// minReplicas/maxReplicas of a FederatedHPA.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=cronfederatedhpas,scope=Namespaced,shortName=cronfhpa,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="REFERENCE-KIND",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="REFERENCE-NAME",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type CronFederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the target and the schedule rules.
	// +required
	Spec CronFederatedHPASpec `json:"spec"`

	// Status is the execution history of each rule.
	// +optional
	Status CronFederatedHPAStatus `json:"status,omitempty"`
}

// CronFederatedHPASpec is Karmada's CronFederatedHPA.spec.
//
// The schedule and timeZone of each rule are checked by ValidateCronFederatedHPA, because CEL
// can parse neither cron expressions nor the IANA time zone database.
//
// +kubebuilder:validation:XValidation:rule="(has(self.scaleTargetRef.apiVersion) && self.scaleTargetRef.apiVersion == 'autoscaling.karmada.io/v1alpha1' && self.scaleTargetRef.kind == 'FederatedHPA') || self.rules.all(r, has(r.targetReplicas))",message="spec.rules[*].targetReplicas is required unless spec.scaleTargetRef is a FederatedHPA (apiVersion autoscaling.karmada.io/v1alpha1, kind FederatedHPA)",fieldPath=.rules
// +kubebuilder:validation:XValidation:rule="!(has(self.scaleTargetRef.apiVersion) && self.scaleTargetRef.apiVersion == 'autoscaling.karmada.io/v1alpha1' && self.scaleTargetRef.kind == 'FederatedHPA') || self.rules.all(r, has(r.targetMinReplicas) || has(r.targetMaxReplicas))",message="spec.rules[*] must set targetMinReplicas or targetMaxReplicas when spec.scaleTargetRef is a FederatedHPA",fieldPath=.rules
type CronFederatedHPASpec struct {
	// ScaleTargetRef is the object to scale: a workload with a scale subresource, or a
	// FederatedHPA (apiVersion autoscaling.karmada.io/v1alpha1, kind FederatedHPA). In the
	// autoscaling.karmada.io group only FederatedHPA may be targeted.
	// +kubebuilder:validation:XValidation:rule="!has(self.apiVersion) || self.apiVersion != 'autoscaling.karmada.io/v1alpha1' || self.kind == 'FederatedHPA'",message="spec.scaleTargetRef.kind must be FederatedHPA when spec.scaleTargetRef.apiVersion is autoscaling.karmada.io/v1alpha1"
	// +required
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// Rules are the scheduled scaling actions. Rule names must be unique.
	// +kubebuilder:validation:MaxItems=256
	// +kubebuilder:validation:XValidation:rule="self.all(r, self.exists_one(o, o.name == r.name))",message="spec.rules[*].name must be unique"
	// +required
	Rules []CronFederatedHPARule `json:"rules"`
}

// CronFederatedHPARule is one scheduled scaling action.
//
// +kubebuilder:validation:XValidation:rule="!has(self.targetReplicas) || self.targetReplicas >= 0",message="spec.rules[*].targetReplicas must not be negative",fieldPath=.targetReplicas
// +kubebuilder:validation:XValidation:rule="!has(self.targetMinReplicas) || self.targetMinReplicas > 0",message="spec.rules[*].targetMinReplicas must be greater than 0",fieldPath=.targetMinReplicas
// +kubebuilder:validation:XValidation:rule="!has(self.targetMaxReplicas) || self.targetMaxReplicas > 0",message="spec.rules[*].targetMaxReplicas must be greater than 0",fieldPath=.targetMaxReplicas
// +kubebuilder:validation:XValidation:rule="!has(self.targetMinReplicas) || !has(self.targetMaxReplicas) || self.targetMinReplicas <= self.targetMaxReplicas",message="spec.rules[*].targetMinReplicas must be less than or equal to targetMaxReplicas",fieldPath=.targetMinReplicas
type CronFederatedHPARule struct {
	// Name identifies the rule; its execution history is kept under this name, so renaming a
	// rule drops its history. 1 to 32 characters.
	// +kubebuilder:validation:MinLength=1
	// +kubebuilder:validation:MaxLength=32
	// +required
	Name string `json:"name"`

	// Schedule is a cron expression in Kubernetes CronJob syntax ("0 9 * * *", "@hourly").
	// +required
	Schedule string `json:"schedule"`

	// TargetReplicas is the replica count to set on a workload target. Required unless the
	// target is a FederatedHPA; 0 is allowed.
	// +optional
	TargetReplicas *int32 `json:"targetReplicas,omitempty"`

	// TargetMinReplicas is the minReplicas to set on a FederatedHPA target; nil leaves it
	// unchanged.
	// +optional
	TargetMinReplicas *int32 `json:"targetMinReplicas,omitempty"`

	// TargetMaxReplicas is the maxReplicas to set on a FederatedHPA target; nil leaves it
	// unchanged.
	// +optional
	TargetMaxReplicas *int32 `json:"targetMaxReplicas,omitempty"`

	// Suspend stops future runs of the rule. Defaults to false.
	// +kubebuilder:default=false
	// +optional
	Suspend *bool `json:"suspend,omitempty"`

	// TimeZone is the IANA time zone name the schedule is read in, for example
	// "Asia/Shanghai". Nil means the controller's local time zone.
	// +optional
	TimeZone *string `json:"timeZone,omitempty"`

	// SuccessfulHistoryLimit is how many successful runs are kept in the status, 1 to 32.
	// Defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=32
	// +optional
	SuccessfulHistoryLimit *int32 `json:"successfulHistoryLimit,omitempty"`

	// FailedHistoryLimit is how many failed runs are kept in the status, 0 to 32.
	// Defaults to 3.
	// +kubebuilder:default=3
	// +kubebuilder:validation:Minimum=0
	// +kubebuilder:validation:Maximum=32
	// +optional
	FailedHistoryLimit *int32 `json:"failedHistoryLimit,omitempty"`
}

// CronFederatedHPAStatus is Karmada's CronFederatedHPA.status.
type CronFederatedHPAStatus struct {
	// ExecutionHistories holds the recent runs of each rule.
	// +optional
	ExecutionHistories []ExecutionHistory `json:"executionHistories,omitempty"`
}

// ExecutionHistory is the run history of one rule.
type ExecutionHistory struct {
	// RuleName is the rule's name.
	// +required
	RuleName string `json:"ruleName"`

	// NextExecutionTime is when the rule runs next; nil while it is suspended.
	// +optional
	NextExecutionTime *metav1.Time `json:"nextExecutionTime,omitempty"`

	// SuccessfulExecutions are the most recent successful runs.
	// +optional
	SuccessfulExecutions []SuccessfulExecution `json:"successfulExecutions,omitempty"`

	// FailedExecutions are the most recent failed runs.
	// +optional
	FailedExecutions []FailedExecution `json:"failedExecutions,omitempty"`
}

// SuccessfulExecution is one successful run of a rule.
type SuccessfulExecution struct {
	// ScheduleTime is when the run was due.
	// +required
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// ExecutionTime is when the run happened.
	// +required
	ExecutionTime *metav1.Time `json:"executionTime"`

	// AppliedReplicas is the replica count set on a workload target.
	// +optional
	AppliedReplicas *int32 `json:"appliedReplicas,omitempty"`

	// AppliedMaxReplicas is the maxReplicas set on a FederatedHPA target.
	// +optional
	AppliedMaxReplicas *int32 `json:"appliedMaxReplicas,omitempty"`

	// AppliedMinReplicas is the minReplicas set on a FederatedHPA target.
	// +optional
	AppliedMinReplicas *int32 `json:"appliedMinReplicas,omitempty"`
}

// FailedExecution is one failed run of a rule.
type FailedExecution struct {
	// ScheduleTime is when the run was due.
	// +required
	ScheduleTime *metav1.Time `json:"scheduleTime"`

	// ExecutionTime is when the run happened.
	// +required
	ExecutionTime *metav1.Time `json:"executionTime"`

	// Message says why the run failed.
	// +required
	Message string `json:"message"`
}

// CronFederatedHPAList is a list of CronFederatedHPA.
//
// +kubebuilder:object:root=true
type CronFederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the scalers.
	Items []CronFederatedHPA `json:"items"`
}
