package v1alpha1

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// FederatedHPA is Karmada's horizontal autoscaler for a resource template in the control
// plane: it reads metrics from every member cluster that runs the workload's pods, computes a
// replica count like the upstream HPA does, and scales the template; the scheduler then
// spreads the new count over the clusters.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=federatedhpas,scope=Namespaced,shortName=fhpa,categories=karmada-io
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="REFERENCE-KIND",type=string,JSONPath=`.spec.scaleTargetRef.kind`
// +kubebuilder:printcolumn:name="REFERENCE-NAME",type=string,JSONPath=`.spec.scaleTargetRef.name`
// +kubebuilder:printcolumn:name="MINPODS",type=integer,JSONPath=`.spec.minReplicas`
// +kubebuilder:printcolumn:name="MAXPODS",type=integer,JSONPath=`.spec.maxReplicas`
// +kubebuilder:printcolumn:name="REPLICAS",type=integer,JSONPath=`.status.currentReplicas`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
type FederatedHPA struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the autoscaling rule.
	// +required
	Spec FederatedHPASpec `json:"spec"`

	// Status is the autoscaler's last observation, in the upstream HPA status format.
	// +optional
	Status autoscalingv2.HorizontalPodAutoscalerStatus `json:"status,omitempty"`
}

// FederatedHPASpec is Karmada's FederatedHPA.spec.
//
// +kubebuilder:validation:XValidation:rule="!has(self.minReplicas) || self.minReplicas <= self.maxReplicas",message="must be greater than or equal to `minReplicas`",fieldPath=.maxReplicas
type FederatedHPASpec struct {
	// ScaleTargetRef is the resource template to scale; it must have a scale subresource.
	// +required
	ScaleTargetRef autoscalingv2.CrossVersionObjectReference `json:"scaleTargetRef"`

	// MinReplicas is the lowest replica count the autoscaler may set; at least 1 (scaling to
	// zero is not supported). Defaults to 1.
	// +kubebuilder:default=1
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="must be greater than or equal to 1"
	// +optional
	MinReplicas *int32 `json:"minReplicas,omitempty"`

	// MaxReplicas is the highest replica count the autoscaler may set; at least 1 and at least
	// MinReplicas.
	// +kubebuilder:validation:XValidation:rule="self >= 1",message="must be greater than 0"
	// +required
	MaxReplicas int32 `json:"maxReplicas"`

	// Metrics are the signals the replica count follows, each of type Resource,
	// ContainerResource, Pods, Object or External with the matching source field set; the
	// highest proposal wins. Resource and Pods values are averaged over the workload's pods in
	// every member cluster; Object and External values are queried once, through the control
	// plane's metrics APIs.
	// Absent or empty means 80% average CPU utilization (DefaultFederatedHPACPUUtilization),
	// written at admission like the upstream HPA's default.
	// +kubebuilder:default={{type: "Resource", resource: {name: "cpu", target: {type: "Utilization", averageUtilization: 80}}}}
	// +kubebuilder:validation:XValidation:rule="self.all(m, m.type in ['ContainerResource', 'External', 'Object', 'Pods', 'Resource'])",message="every type must be one of: ContainerResource, External, Object, Pods, Resource"
	// +kubebuilder:validation:XValidation:rule="self.all(m, has(m.containerResource) == (m.type == 'ContainerResource') && has(m.external) == (m.type == 'External') && has(m.object) == (m.type == 'Object') && has(m.pods) == (m.type == 'Pods') && has(m.resource) == (m.type == 'Resource'))",message="every metric must set the source field its type names (resource, containerResource, pods, object or external) and no other"
	// +optional
	Metrics []autoscalingv2.MetricSpec `json:"metrics,omitempty"`

	// Behavior tunes scale-up and scale-down like the upstream HPA's behavior. Absent means
	// the HPA's classic rules: scale-down stabilized over the controller's
	// --horizontal-pod-autoscaler-downscale-stabilization window, scale-up limited to
	// max(2x, 4) replicas per sync. When present, the parts left out are written at
	// admission with the upstream defaults: scaleUp stabilizationWindowSeconds 0, policies
	// Pods 4 and Percent 100 per 15s, selectPolicy Max; scaleDown policies Percent 100 per
	// 15s, selectPolicy Max, and no stabilizationWindowSeconds (the controller's flag applies).
	// +optional
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior `json:"behavior,omitempty"`
}

// FederatedHPAKind is the kind name of FederatedHPA, as CronFederatedHPA targets name it.
const FederatedHPAKind = "FederatedHPA"

// DefaultFederatedHPACPUUtilization is the average CPU utilization, in percent, that a
// FederatedHPA without metrics targets.
const DefaultFederatedHPACPUUtilization int32 = 80

// FederatedHPAList is a list of FederatedHPA.
//
// +kubebuilder:object:root=true
type FederatedHPAList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the autoscalers.
	Items []FederatedHPA `json:"items"`
}
