package crds_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/hpa"
)

// --- CronFederatedHPA ---

// cronFHPA returns a valid CronFederatedHPA scaling a Deployment, changed by edits.
func cronFHPA(edits ...func(*autoscalingv1alpha1.CronFederatedHPASpec)) *autoscalingv1alpha1.CronFederatedHPA {
	c := &autoscalingv1alpha1.CronFederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
			Rules: []autoscalingv1alpha1.CronFederatedHPARule{
				{Name: "scale-up", Schedule: "0 9 * * *", TargetReplicas: ptr.To[int32](5)},
			},
		},
	}
	for _, edit := range edits {
		edit(&c.Spec)
	}
	return c
}

func targetFHPA(s *autoscalingv1alpha1.CronFederatedHPASpec) {
	s.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: "nginx"}
	s.Rules[0].TargetReplicas = nil
	s.Rules[0].TargetMinReplicas = ptr.To[int32](2)
}

func firstRule(edit func(*autoscalingv1alpha1.CronFederatedHPARule)) func(*autoscalingv1alpha1.CronFederatedHPASpec) {
	return func(s *autoscalingv1alpha1.CronFederatedHPASpec) { edit(&s.Rules[0]) }
}

func TestCronFederatedHPARules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "a workload target with targetReplicas is accepted", obj: cronFHPA()},
		{name: "scaling a workload to zero is accepted", obj: cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetReplicas = ptr.To[int32](0) }))},
		{
			name:      "a negative targetReplicas is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetReplicas = ptr.To[int32](-1) })),
			wantField: "spec.rules[0].targetReplicas",
			wantErr:   "spec.rules[*].targetReplicas must not be negative",
		},
		{
			name:      "a workload target without targetReplicas is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetReplicas = nil })),
			wantField: "spec.rules",
			wantErr:   "spec.rules[*].targetReplicas is required unless spec.scaleTargetRef is a FederatedHPA",
		},
		{name: "a FederatedHPA target with targetMinReplicas is accepted", obj: cronFHPA(targetFHPA)},
		{
			name:      "a FederatedHPA target without min or max is refused",
			obj:       cronFHPA(targetFHPA, firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetMinReplicas = nil })),
			wantField: "spec.rules",
			wantErr:   "spec.rules[*] must set targetMinReplicas or targetMaxReplicas when spec.scaleTargetRef is a FederatedHPA",
		},
		{
			name: "another kind of the autoscaling.karmada.io group is refused",
			obj: cronFHPA(func(s *autoscalingv1alpha1.CronFederatedHPASpec) {
				s.ScaleTargetRef = autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "CronFederatedHPA", Name: "x"}
			}),
			wantField: "spec.scaleTargetRef",
			wantErr:   "spec.scaleTargetRef.kind must be FederatedHPA when spec.scaleTargetRef.apiVersion is autoscaling.karmada.io/v1alpha1",
		},
		{
			name: "targetMinReplicas above targetMaxReplicas is refused",
			obj: cronFHPA(targetFHPA, firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) {
				r.TargetMinReplicas, r.TargetMaxReplicas = ptr.To[int32](5), ptr.To[int32](4)
			})),
			wantField: "spec.rules[0].targetMinReplicas",
			wantErr:   "spec.rules[*].targetMinReplicas must be less than or equal to targetMaxReplicas",
		},
		{
			name:      "a targetMinReplicas of zero is refused",
			obj:       cronFHPA(targetFHPA, firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetMinReplicas = ptr.To[int32](0) })),
			wantField: "spec.rules[0].targetMinReplicas",
			wantErr:   "spec.rules[*].targetMinReplicas must be greater than 0",
		},
		{
			name:      "a targetMaxReplicas of zero is refused",
			obj:       cronFHPA(targetFHPA, firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.TargetMaxReplicas = ptr.To[int32](0) })),
			wantField: "spec.rules[0].targetMaxReplicas",
			wantErr:   "spec.rules[*].targetMaxReplicas must be greater than 0",
		},
		{
			name: "two rules with the same name are refused",
			obj: cronFHPA(func(s *autoscalingv1alpha1.CronFederatedHPASpec) {
				s.Rules = append(s.Rules, autoscalingv1alpha1.CronFederatedHPARule{Name: "scale-up", Schedule: "0 18 * * *", TargetReplicas: ptr.To[int32](1)})
			}),
			wantField: "spec.rules",
			wantErr:   "spec.rules[*].name must be unique",
		},
		{
			name:      "a rule name of 33 characters is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.Name = strings.Repeat("r", 33) })),
			wantField: "spec.rules[0].name",
			wantErr:   "Too long",
		},
		{
			name:      "an empty rule name is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.Name = "" })),
			wantField: "spec.rules[0].name",
			wantErr:   "spec.rules[0].name in body should be at least 1 chars long",
		},
		{
			name:      "a successfulHistoryLimit of 0 is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.SuccessfulHistoryLimit = ptr.To[int32](0) })),
			wantField: "spec.rules[0].successfulHistoryLimit",
			wantErr:   "spec.rules[0].successfulHistoryLimit in body should be greater than or equal to 1",
		},
		{
			name:      "a successfulHistoryLimit of 33 is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.SuccessfulHistoryLimit = ptr.To[int32](33) })),
			wantField: "spec.rules[0].successfulHistoryLimit",
			wantErr:   "spec.rules[0].successfulHistoryLimit in body should be less than or equal to 32",
		},
		{
			name: "a failedHistoryLimit of 0 is accepted",
			obj:  cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.FailedHistoryLimit = ptr.To[int32](0) })),
		},
		{
			name:      "a negative failedHistoryLimit is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.FailedHistoryLimit = ptr.To[int32](-1) })),
			wantField: "spec.rules[0].failedHistoryLimit",
			wantErr:   "spec.rules[0].failedHistoryLimit in body should be greater than or equal to 0",
		},
		{
			name:      "a failedHistoryLimit of 33 is refused",
			obj:       cronFHPA(firstRule(func(r *autoscalingv1alpha1.CronFederatedHPARule) { r.FailedHistoryLimit = ptr.To[int32](33) })),
			wantField: "spec.rules[0].failedHistoryLimit",
			wantErr:   "spec.rules[0].failedHistoryLimit in body should be less than or equal to 32",
		},
	})
}

// TestCronFederatedHPADefaults checks the history limits and suspend defaults.
func TestCronFederatedHPADefaults(t *testing.T) {
	got := admitTyped(t, newAdmitters(t), cronFHPA())
	if len(got.Errors) > 0 {
		t.Fatalf("unexpected errors:\n%s", errorLines(got))
	}
	var c autoscalingv1alpha1.CronFederatedHPA
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &c); err != nil {
		t.Fatal(err)
	}
	r := c.Spec.Rules[0]
	if ptr.Deref(r.SuccessfulHistoryLimit, -1) != 3 || ptr.Deref(r.FailedHistoryLimit, -1) != 3 || ptr.Deref(r.Suspend, true) {
		t.Errorf("rule defaults: successfulHistoryLimit %v, failedHistoryLimit %v, suspend %v; want 3, 3, false",
			ptr.Deref(r.SuccessfulHistoryLimit, -1), ptr.Deref(r.FailedHistoryLimit, -1), ptr.Deref(r.Suspend, true))
	}
}

// --- FederatedHPA ---

// fhpa returns a valid FederatedHPA for a Deployment, changed by edits.
func fhpa(edits ...func(*autoscalingv1alpha1.FederatedHPASpec)) *autoscalingv1alpha1.FederatedHPA {
	f := &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Name: "nginx", Namespace: "default"},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "nginx"},
			MaxReplicas:    10,
		},
	}
	for _, edit := range edits {
		edit(&f.Spec)
	}
	return f
}

func metric(typ autoscalingv2.MetricSourceType) autoscalingv2.MetricSpec {
	target := autoscalingv2.MetricTarget{Type: autoscalingv2.AverageValueMetricType, AverageValue: ptr.To(resourceQuantity("1"))}
	m := autoscalingv2.MetricSpec{Type: typ}
	switch typ {
	case autoscalingv2.ResourceMetricSourceType:
		m.Resource = &autoscalingv2.ResourceMetricSource{Name: corev1.ResourceCPU, Target: target}
	case autoscalingv2.ContainerResourceMetricSourceType:
		m.ContainerResource = &autoscalingv2.ContainerResourceMetricSource{Name: corev1.ResourceCPU, Container: "app", Target: target}
	case autoscalingv2.ObjectMetricSourceType:
		m.Object = &autoscalingv2.ObjectMetricSource{
			DescribedObject: autoscalingv2.CrossVersionObjectReference{APIVersion: "networking.k8s.io/v1", Kind: "Ingress", Name: "main"},
			Metric:          autoscalingv2.MetricIdentifier{Name: "requests"},
			Target:          autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: ptr.To(resourceQuantity("10"))},
		}
	case autoscalingv2.PodsMetricSourceType:
		m.Pods = &autoscalingv2.PodsMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "qps"}, Target: target}
	case autoscalingv2.ExternalMetricSourceType:
		m.External = &autoscalingv2.ExternalMetricSource{Metric: autoscalingv2.MetricIdentifier{Name: "queue"}, Target: target}
	}
	return m
}

func resourceQuantity(s string) resource.Quantity { return resource.MustParse(s) }

func TestFederatedHPARules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "a FederatedHPA without minReplicas is accepted", obj: fhpa()},
		{name: "minReplicas equal to maxReplicas is accepted", obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MinReplicas = ptr.To[int32](10) })},
		{
			name:      "minReplicas above maxReplicas is refused",
			obj:       fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MinReplicas = ptr.To[int32](11) }),
			wantField: "spec.maxReplicas",
			wantErr:   "must be greater than or equal to `minReplicas`",
		},
		{
			name:      "minReplicas 0 is refused",
			obj:       fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MinReplicas = ptr.To[int32](0) }),
			wantField: "spec.minReplicas",
			wantErr:   "must be greater than or equal to 1",
		},
		{
			name:      "maxReplicas 0 is refused",
			obj:       fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) { s.MaxReplicas = 0; s.MinReplicas = ptr.To[int32](1) }),
			wantField: "spec.maxReplicas",
			wantErr:   "must be greater than 0",
		},
		{
			name: "a Pods metric is accepted",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				s.Metrics = []autoscalingv2.MetricSpec{metric(autoscalingv2.PodsMetricSourceType)}
			}),
		},
		{
			name: "an External metric is accepted",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				s.Metrics = []autoscalingv2.MetricSpec{metric(autoscalingv2.PodsMetricSourceType), metric(autoscalingv2.ExternalMetricSourceType)}
			}),
		},
		{
			name: "every metric type with its source is accepted",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				for _, typ := range []autoscalingv2.MetricSourceType{
					autoscalingv2.ResourceMetricSourceType, autoscalingv2.ContainerResourceMetricSourceType,
					autoscalingv2.PodsMetricSourceType, autoscalingv2.ObjectMetricSourceType, autoscalingv2.ExternalMetricSourceType,
				} {
					s.Metrics = append(s.Metrics, metric(typ))
				}
			}),
		},
		{
			name: "an unknown metric type is refused",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				s.Metrics = []autoscalingv2.MetricSpec{metric(autoscalingv2.PodsMetricSourceType), {Type: "Prometheus"}}
			}),
			wantField: "spec.metrics",
			wantErr:   "every type must be one of: ContainerResource, External, Object, Pods, Resource",
		},
		{
			name: "a metric without the source its type names is refused",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				m := metric(autoscalingv2.PodsMetricSourceType)
				m.Type = autoscalingv2.ExternalMetricSourceType
				s.Metrics = []autoscalingv2.MetricSpec{m}
			}),
			wantField: "spec.metrics",
			wantErr:   "every metric must set the source field its type names",
		},
		{
			name: "a metric with a second source is refused",
			obj: fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
				m := metric(autoscalingv2.PodsMetricSourceType)
				m.External = metric(autoscalingv2.ExternalMetricSourceType).External
				s.Metrics = []autoscalingv2.MetricSpec{m}
			}),
			wantField: "spec.metrics",
			wantErr:   "every metric must set the source field its type names",
		},
	})
}

// TestFederatedHPADefaultsCPUMetric checks the structural default of spec.metrics: a
// FederatedHPA without metrics targets 80% average CPU utilization, as an HPA does.
func TestFederatedHPADefaultsCPUMetric(t *testing.T) {
	got := admitTyped(t, newAdmitters(t), fhpa())
	if len(got.Errors) > 0 {
		t.Fatalf("unexpected errors:\n%s", errorLines(got))
	}
	var f autoscalingv1alpha1.FederatedHPA
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &f); err != nil {
		t.Fatal(err)
	}
	want := []autoscalingv2.MetricSpec{{
		Type: autoscalingv2.ResourceMetricSourceType,
		Resource: &autoscalingv2.ResourceMetricSource{
			Name: corev1.ResourceCPU,
			Target: autoscalingv2.MetricTarget{
				Type:               autoscalingv2.UtilizationMetricType,
				AverageUtilization: ptr.To(autoscalingv1alpha1.DefaultFederatedHPACPUUtilization),
			},
		},
	}}
	if diff := cmp.Diff(want, f.Spec.Metrics); diff != "" {
		t.Errorf("spec.metrics after admission (-want +got):\n%s", diff)
	}
	if f.Spec.Behavior != nil {
		t.Errorf("spec.behavior = %+v, want it left absent (the controller's classic rules apply)", f.Spec.Behavior)
	}
}

// TestFederatedHPADefaultsMinReplicas checks that minReplicas defaults to 1, as Karmada's
// mutating webhook does.
func TestFederatedHPADefaultsMinReplicas(t *testing.T) {
	got := admitTyped(t, newAdmitters(t), fhpa())
	if len(got.Errors) > 0 {
		t.Fatalf("unexpected errors:\n%s", errorLines(got))
	}
	var f autoscalingv1alpha1.FederatedHPA
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &f); err != nil {
		t.Fatal(err)
	}
	if ptr.Deref(f.Spec.MinReplicas, -1) != 1 {
		t.Errorf("spec.minReplicas defaulted to %v, want 1", ptr.Deref(f.Spec.MinReplicas, -1))
	}
}

// TestFederatedHPAAdmissionDefaultsAreValid checks that what the FlotillaDefaulting admission
// plugin writes (federatedhpa.SetDefaults) passes the CRD's schema and CEL rules, which the
// API server applies after the mutating plugins, and that the CRD's own defaulting leaves it
// as it is.
func TestFederatedHPAAdmissionDefaultsAreValid(t *testing.T) {
	f := fhpa(func(s *autoscalingv1alpha1.FederatedHPASpec) {
		s.Metrics = []autoscalingv2.MetricSpec{}
		s.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: &autoscalingv2.HPAScalingRules{StabilizationWindowSeconds: ptr.To[int32](60)}}
	})
	hpa.SetDefaults(f)
	got := admitTyped(t, newAdmitters(t), f)
	if len(got.Errors) > 0 || len(got.Pruned) > 0 {
		t.Fatalf("defaulted FederatedHPA refused or pruned (%v):\n%s", got.Pruned, errorLines(got))
	}
	var after autoscalingv1alpha1.FederatedHPA
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(got.Object, &after); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(f.Spec, after.Spec); diff != "" {
		t.Errorf("spec changed by the CRD's admission (-defaulted +admitted):\n%s", diff)
	}
}
