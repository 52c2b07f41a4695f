package hpa

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

var (
	defaultCPUMetric = []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{
				Type:               autoscalingv2.UtilizationMetricType,
				AverageUtilization: ptr.To(autoscalingv1alpha1.DefaultFederatedHPACPUUtilization),
			},
		},
	}}
	defaultScaleUp = &autoscalingv2.HPAScalingRules{
		StabilizationWindowSeconds: ptr.To[int32](0),
		SelectPolicy:               ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies: []autoscalingv2.HPAScalingPolicy{
			{Type: autoscalingv2.PodsScalingPolicy, Value: 4, PeriodSeconds: 15},
			{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15},
		},
	}
	defaultScaleDown = &autoscalingv2.HPAScalingRules{
		SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
		Policies:     []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PercentScalingPolicy, Value: 100, PeriodSeconds: 15}},
	}
)

func TestSetDefaults(t *testing.T) {
	podsPolicy := []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}}
	tests := []struct {
		name        string
		spec        autoscalingv1alpha1.FederatedHPASpec
		want        autoscalingv1alpha1.FederatedHPASpec
		wantChanged bool
	}{
		{
			name:        "an empty spec gets minReplicas 1 and 80% CPU, and no behavior",
			spec:        autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5},
			want:        autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](1), Metrics: defaultCPUMetric},
			wantChanged: true,
		},
		{
			name:        "an empty metrics list is defaulted like an absent one",
			spec:        autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](2), Metrics: []autoscalingv2.MetricSpec{}},
			want:        autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](2), Metrics: defaultCPUMetric},
			wantChanged: true,
		},
		{
			name: "a complete spec without behavior is left alone",
			spec: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](2), Metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
			want: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](2), Metrics: []autoscalingv2.MetricSpec{cpuUtilization(50)}},
		},
		{
			name: "an empty behavior gets both rules",
			spec: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{}},
			want: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](1), Metrics: defaultCPUMetric,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: defaultScaleUp, ScaleDown: defaultScaleDown}},
			wantChanged: true,
		},
		{
			name: "a rule without selectPolicy gets Max and keeps its own policies and window (Karmada issue 4085)",
			spec: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
				ScaleDown: &autoscalingv2.HPAScalingRules{Policies: podsPolicy, StabilizationWindowSeconds: ptr.To[int32](60)},
			}},
			want: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](1), Metrics: defaultCPUMetric,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: defaultScaleUp,
					ScaleDown: &autoscalingv2.HPAScalingRules{
						Policies: podsPolicy, StabilizationWindowSeconds: ptr.To[int32](60), SelectPolicy: ptr.To(autoscalingv2.MaxChangePolicySelect),
					},
				}},
			wantChanged: true,
		},
		{
			name: "set fields are kept: selectPolicy Disabled, a tolerance, a scale-up window",
			spec: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](1), Metrics: defaultCPUMetric,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect), StabilizationWindowSeconds: ptr.To[int32](30),
						Tolerance: ptr.To(resourceQuantity("50m"))},
				}},
			want: autoscalingv1alpha1.FederatedHPASpec{MaxReplicas: 5, MinReplicas: ptr.To[int32](1), Metrics: defaultCPUMetric,
				Behavior: &autoscalingv2.HorizontalPodAutoscalerBehavior{
					ScaleUp: &autoscalingv2.HPAScalingRules{SelectPolicy: ptr.To(autoscalingv2.DisabledPolicySelect), StabilizationWindowSeconds: ptr.To[int32](30),
						Tolerance: ptr.To(resourceQuantity("50m")), Policies: defaultScaleUp.Policies},
					ScaleDown: defaultScaleDown,
				}},
			wantChanged: true,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := &autoscalingv1alpha1.FederatedHPA{Spec: *tc.spec.DeepCopy()}
			if changed := SetDefaults(f); changed != tc.wantChanged {
				t.Errorf("SetDefaults reported changed=%t, want %t", changed, tc.wantChanged)
			}
			if diff := cmp.Diff(tc.want, f.Spec); diff != "" {
				t.Errorf("spec (-want +got):\n%s", diff)
			}
			if SetDefaults(f) {
				t.Errorf("a second SetDefaults changed the spec again")
			}
		})
	}
}

// TestSetDefaultsReadBack checks what `kubectl get -o yaml` shows of a FederatedHPA applied
// with a behavior but no selectPolicy (the "Bad input and failure"): minReplicas 1;
// scaleUp policies Pods 4 per 15s then Percent 100 per 15s, selectPolicy Max; scaleDown
// policies Percent 100 per 15s, selectPolicy Max.
func TestSetDefaultsReadBack(t *testing.T) {
	var f autoscalingv1alpha1.FederatedHPA
	applied := `
scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
maxReplicas: 10
behavior:
  scaleDown:
    stabilizationWindowSeconds: 60
`
	if err := yaml.UnmarshalStrict([]byte(applied), &f.Spec); err != nil {
		t.Fatal(err)
	}
	SetDefaults(&f)
	got, err := yaml.Marshal(f.Spec)
	if err != nil {
		t.Fatal(err)
	}
	want := `behavior:
  scaleDown:
    policies:
    - periodSeconds: 15
      type: Percent
      value: 100
    selectPolicy: Max
    stabilizationWindowSeconds: 60
  scaleUp:
    policies:
    - periodSeconds: 15
      type: Pods
      value: 4
    - periodSeconds: 15
      type: Percent
      value: 100
    selectPolicy: Max
    stabilizationWindowSeconds: 0
maxReplicas: 10
metrics:
- resource:
    name: cpu
    target:
      averageUtilization: 80
      type: Utilization
  type: Resource
minReplicas: 1
scaleTargetRef:
  apiVersion: apps/v1
  kind: Deployment
  name: web
`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Errorf("read back (-want +got):\n%s", diff)
	}
}

// behaviorWithTolerances returns a behavior whose rules set the given tolerances ("" for
// none).
func behaviorWithTolerances(down, up string) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	b := &autoscalingv2.HorizontalPodAutoscalerBehavior{}
	if down != "" {
		b.ScaleDown = &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resourceQuantity(down))}
	}
	if up != "" {
		b.ScaleUp = &autoscalingv2.HPAScalingRules{Tolerance: ptr.To(resourceQuantity(up))}
	}
	return b
}
