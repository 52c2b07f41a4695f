package v1alpha1

// The reasons of a FederatedHPA's status conditions and events, all in this one place: the
// Kubernetes HPA controller's strings, which Karmada's FederatedHPA controller uses too, so
// that dashboards and alerts written for an HPA read a FederatedHPA the same way. The
// condition types are autoscalingv2.AbleToScale, ScalingActive and ScalingLimited. An event
// reports a failure with the reason of the condition it sets, where there is one.

// Reasons of the AbleToScale condition.
const (
	// SucceededGetScaleReason (True): the target's /scale subresource was read.
	SucceededGetScaleReason = "SucceededGetScale"
	// FailedGetScaleReason (False, and a Warning event): the target's /scale could not be read,
	// for example because its kind has no scale subresource.
	FailedGetScaleReason = "FailedGetScale"
	// FailedGetScaleTargetRefReason (False, and a Warning event): the object
	// spec.scaleTargetRef names does not exist on the control plane.
	FailedGetScaleTargetRefReason = "FailedGetScaleTargetRef"
	// FailedGetBindingReason (False; the Warning event's reason is FailedGetBindingsReason):
	// the target has no ResourceBinding: no policy propagates it.
	FailedGetBindingReason  = "FailedGetBinding"
	FailedGetBindingsReason = "FailedGetBindings"
	// FailedGetTargetClustersReason (False, and a Warning event): the target's binding
	// places it in no cluster.
	FailedGetTargetClustersReason = "FailedGetTargetClusters"
	// SucceededRescaleReason (True): the new replica count was written to the target's /scale.
	SucceededRescaleReason = "SucceededRescale"
	// FailedUpdateScaleReason (False): writing the target's /scale failed.
	FailedUpdateScaleReason = "FailedUpdateScale"
	// ReadyForNewScaleReason (True): no stabilization window held the recommendation back.
	ReadyForNewScaleReason = "ReadyForNewScale"
	// ScaleUpStabilizedReason (True): a lower recommendation within the scale-up window held
	// a scale-up back.
	ScaleUpStabilizedReason = "ScaleUpStabilized"
	// ScaleDownStabilizedReason (True): a higher recommendation within the scale-down window
	// held a scale-down back.
	ScaleDownStabilizedReason = "ScaleDownStabilized"
)

// Reasons of the ScalingActive condition. The FailedGet*Metric reasons are also the reasons
// of the Warning events that report the failure.
const (
	// ValidMetricFoundReason (True): a replica count was computed from the metrics.
	ValidMetricFoundReason = "ValidMetricFound"
	// ScalingDisabledReason (False): the target has zero replicas; the autoscaler leaves it.
	ScalingDisabledReason = "ScalingDisabled"
	// AmbiguousSelectorReason (False, and a Warning event): another FederatedHPA scales the
	// same target; as with HPAs that select the same pods, none of them scales it.
	AmbiguousSelectorReason = "AmbiguousSelector"
	// InvalidSelectorReason (False): the target's scale has no selector, or one that does not
	// parse.
	InvalidSelectorReason = "InvalidSelector"
	// FailedGetResourceMetricReason (False): a Resource metric could not be had.
	FailedGetResourceMetricReason = "FailedGetResourceMetric"
	// FailedGetContainerResourceMetricReason (False): a ContainerResource metric could not be
	// had.
	FailedGetContainerResourceMetricReason = "FailedGetContainerResourceMetric"
	// FailedGetPodsMetricReason (False): a Pods metric could not be had.
	FailedGetPodsMetricReason = "FailedGetPodsMetric"
	// FailedGetObjectMetricReason (False): an Object metric could not be had.
	FailedGetObjectMetricReason = "FailedGetObjectMetric"
	// FailedGetExternalMetricReason (False): an External metric could not be had.
	FailedGetExternalMetricReason = "FailedGetExternalMetric"
	// InvalidMetricSourceTypeReason (False): a metric has a type the autoscaler does not know
	// (the CRD refuses those at apply; this covers objects stored before the rule).
	InvalidMetricSourceTypeReason = "InvalidMetricSourceType"
)

// Reasons of the ScalingLimited condition: True when the bound it names changed the
// recommendation, False (DesiredWithinRange) when none did.
const (
	// TooFewReplicasReason: minReplicas raised the recommendation.
	TooFewReplicasReason = "TooFewReplicas"
	// TooManyReplicasReason: maxReplicas lowered the recommendation.
	TooManyReplicasReason = "TooManyReplicas"
	// DesiredWithinRangeReason: the recommendation was within every bound.
	DesiredWithinRangeReason = "DesiredWithinRange"
	// ScaleUpLimitReason: the scale-up rate (max(2x, 4) without behavior, or the scaleUp
	// policies) lowered the recommendation.
	ScaleUpLimitReason = "ScaleUpLimit"
	// ScaleDownLimitReason: the scaleDown policies raised the recommendation.
	ScaleDownLimitReason = "ScaleDownLimit"
)

// Reasons of events that have no condition of their own.
const (
	// SuccessfulRescaleReason (Normal): the target was scaled; the message gives the new size
	// and the rescale reason.
	SuccessfulRescaleReason = "SuccessfulRescale"
	// FailedRescaleReason (Warning): writing the target's /scale failed.
	FailedRescaleReason = "FailedRescale"
	// FailedComputeMetricsReplicasReason (Warning): no replica count could be computed from the
	// metrics.
	FailedComputeMetricsReplicasReason = "FailedComputeMetricsReplicas"
	// SelectorRequiredReason (Warning): the target's scale has no selector.
	SelectorRequiredReason = "SelectorRequired"
	// FailedUpdateStatusReason (Warning): writing the FederatedHPA's status failed.
	FailedUpdateStatusReason = "FailedUpdateStatus"
)
