package hpa

import (
	"strings"
	"testing"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

func TestValidateRefusesWhatTheHPARefuses(t *testing.T) {
	ref := autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"}
	cpu := func(target autoscalingv2.MetricTarget) []autoscalingv2.MetricSpec {
		return []autoscalingv2.MetricSpec{{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{Name: "cpu", Target: target}}}
	}
	q := resource.MustParse("1")
	bogus := autoscalingv2.ScalingPolicySelect("Bogus")
	for _, tc := range []struct {
		name string
		spec autoscalingv1alpha1.FederatedHPASpec
		want string // a field path and message fragment; "" means valid
	}{
		{"a valid spec", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MinReplicas: ptr.To[int32](1), MaxReplicas: 5,
			Metrics: cpu(autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To[int32](50)})}, ""},
		{"a core-group target", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ReplicationController", Name: "rc"}, MaxReplicas: 3}, ""},
		{"a Value target on a Resource metric", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MaxReplicas: 5,
			Metrics: cpu(autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: &q})}, "spec.metrics[0].resource.target"},
		{"Utilization without averageUtilization", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MaxReplicas: 5,
			Metrics: cpu(autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType})}, "spec.metrics[0].resource.target"},
		{"an unknown metric type", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MaxReplicas: 5,
			Metrics: []autoscalingv2.MetricSpec{{Type: "Foo"}}}, `spec.metrics[0].type: Unsupported value: "Foo"`},
		{"min above max", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MinReplicas: ptr.To[int32](5), MaxReplicas: 2}, "spec.maxReplicas"},
		{"a bad select policy and policy", autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: ref, MaxReplicas: 5,
			Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: &bogus,
				Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 0, PeriodSeconds: 4000}}}}}, "spec.behavior.scaleUp"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			errs := Validate(&autoscalingv1alpha1.FederatedHPA{Spec: tc.spec})
			got := errs.ToAggregate()
			switch {
			case tc.want == "" && got != nil:
				t.Errorf("refused a valid spec: %v", got)
			case tc.want != "" && (got == nil || !strings.Contains(got.Error(), tc.want)):
				t.Errorf("errors %v, want one at %s", got, tc.want)
			}
		})
	}
}
