package hpa

import (
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/autoscaling"
	autoscalingv2conv "k8s.io/kubernetes/pkg/apis/autoscaling/v2"
	hpavalidation "k8s.io/kubernetes/pkg/apis/autoscaling/validation"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// Validate checks a FederatedHPA's spec with the Kubernetes HPA's own
// validation (k8s.io/kubernetes/pkg/apis/autoscaling/validation), as
// Karmada's webhook does with its copy of it: min and max replicas, the
// scale target reference, every metric (its type, its source, a target
// whose type fits the metric and has its value: a Resource metric takes
// Utilization or AverageValue, a Pods metric AverageValue) and the behavior
// (policies, periods up to 1800 s, select policies, stabilization windows).
// The errors carry the HPA's field paths and messages, such as
// spec.metrics[0].resource.target.type; an empty list means valid.
func Validate(f *autoscalingv1alpha1.FederatedHPA) field.ErrorList {
	v2 := &autoscalingv2.HorizontalPodAutoscaler{
		// The metadata is the API server's to check; the HPA's name rules
		// are not the FederatedHPA's.
		ObjectMeta: metav1.ObjectMeta{Name: "federatedhpa", Namespace: "default"},
		Spec: autoscalingv2.HorizontalPodAutoscalerSpec{
			ScaleTargetRef: f.Spec.ScaleTargetRef,
			MinReplicas:    f.Spec.MinReplicas,
			MaxReplicas:    f.Spec.MaxReplicas,
			Metrics:        f.Spec.Metrics,
			Behavior:       f.Spec.Behavior,
		},
	}
	internal := &autoscaling.HorizontalPodAutoscaler{}
	if err := autoscalingv2conv.Convert_v2_HorizontalPodAutoscaler_To_autoscaling_HorizontalPodAutoscaler(v2, internal, nil); err != nil {
		return field.ErrorList{field.Invalid(field.NewPath("spec"), nil, err.Error())}
	}
	// Core-group targets (apiVersion v1, as a ReplicationController's) are
	// allowed, as the HPA allows them.
	opts := hpavalidation.HorizontalPodAutoscalerSpecValidationOptions{
		MinReplicasLowerBound:           1,
		ScaleTargetRefValidationOptions: hpavalidation.CrossVersionObjectReferenceValidationOptions{AllowEmptyAPIGroup: true},
		ObjectMetricsValidationOptions:  hpavalidation.CrossVersionObjectReferenceValidationOptions{AllowEmptyAPIGroup: true},
	}
	errs := hpavalidation.ValidateHorizontalPodAutoscaler(internal, opts)
	var out field.ErrorList
	for _, e := range errs {
		if len(e.Field) >= 4 && e.Field[:4] == "spec" {
			out = append(out, e)
		}
	}
	return out
}
