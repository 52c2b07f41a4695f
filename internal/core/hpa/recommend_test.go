package hpa

// Several cases below take their numbers from Kubernetes' own HPA controller tests
// (k8s.io/kubernetes v1.37.2, pkg/controller/podautoscaler/horizontal_test.go, Copyright 2015
// The Kubernetes Authors, Apache License 2.0): TestUpscaleCap,
// TestUpscaleCapGreaterThanMaxReplicas, TestScaleDownStabilizeInitialSize,
// TestScaleWithOneInvalidMetric, TestNoScaleDownOneMetricInvalid, TestScaleUpOneMetricEmpty,
// TestNoScaleDownOneMetricEmpty, TestConditionFailedGetMetrics,
// TestConditionInvalidSelectorMissing, TestConditionInvalidSelectorUnparsable and
// TestConditionInvalidSourceType. The harness is Flotilla's: the Recommender is pure, so the
// cases check its Recommendation instead of a fake API server's writes.

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	clocktesting "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// cond is the part of a condition the tests compare.
type cond struct {
	Type   autoscalingv2.HorizontalPodAutoscalerConditionType
	Status corev1.ConditionStatus
	Reason string
}

// appliedConditions applies rec's conditions in order, as the controller does.
func appliedConditions(rec Recommendation) []cond {
	var list []autoscalingv2.HorizontalPodAutoscalerCondition
	for _, c := range rec.Conditions {
		list = SetCondition(list, c, metav1.NewTime(testNow))
	}
	out := make([]cond, len(list))
	for i, c := range list {
		out[i] = cond{c.Type, c.Status, c.Reason}
	}
	return out
}

func eventReasons(rec Recommendation) []string {
	var out []string
	for _, e := range rec.Events {
		out = append(out, e.Reason)
	}
	return out
}

// testFHPA returns a FederatedHPA with the given bounds and metrics.
func testFHPA(minReplicas, maxReplicas int32, metrics ...autoscalingv2.MetricSpec) *autoscalingv1alpha1.FederatedHPA {
	return &autoscalingv1alpha1.FederatedHPA{
		ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: testNamespace},
		Spec: autoscalingv1alpha1.FederatedHPASpec{
			ScaleTargetRef: autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: "web"},
			MinReplicas:    ptr.To(minReplicas),
			MaxReplicas:    maxReplicas,
			Metrics:        metrics,
		},
	}
}

func cpuUtilization(percent int32) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType, Resource: &autoscalingv2.ResourceMetricSource{
		Name: corev1.ResourceCPU, Target: autoscalingv2.MetricTarget{Type: autoscalingv2.UtilizationMetricType, AverageUtilization: ptr.To(percent)},
	}}
}

func externalValue(name string, milli int64) autoscalingv2.MetricSpec {
	return autoscalingv2.MetricSpec{Type: autoscalingv2.ExternalMetricSourceType, External: &autoscalingv2.ExternalMetricSource{
		Metric: autoscalingv2.MetricIdentifier{Name: name, Selector: &metav1.LabelSelector{}},
		Target: autoscalingv2.MetricTarget{Type: autoscalingv2.ValueMetricType, Value: resource.NewMilliQuantity(milli, resource.DecimalSI)},
	}}
}

// targetOf is what the controller would read of the scenario's workload.
func targetOf(f *calcScenario) Target {
	pods := make([]Pod, f.podsCount())
	for i := range pods {
		pods[i] = buildFakePod(f, i)
	}
	status := f.statusReplicas
	if status == 0 {
		status = f.currentReplicas
	}
	return Target{
		SpecReplicas: f.currentReplicas, StatusReplicas: status,
		Selector: labels.SelectorFromSet(labels.Set{"name": podNamePrefix}).String(),
		Pods:     pods, Calibration: f.calibration,
	}
}

// failingExternal fails every external metric and answers the rest from the scenario.
type failingExternal struct{ fakeMetricsClient }

func (failingExternal) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, errors.New("something went wrong")
}

// failingMetrics fails every metric.
type failingMetrics struct{}

func (failingMetrics) GetResourceMetric(context.Context, corev1.ResourceName, string, labels.Selector, string) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, errors.New("something went wrong")
}

func (failingMetrics) GetRawMetric(string, string, labels.Selector, labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	return nil, time.Time{}, errors.New("something went wrong")
}

func (failingMetrics) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return 0, time.Time{}, errors.New("something went wrong")
}

func (failingMetrics) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return nil, time.Time{}, errors.New("something went wrong")
}

var (
	// statusOk are the conditions of a sync that scaled, before the controller's write.
	statusOk = []cond{
		{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.ReadyForNewScaleReason},
		{autoscalingv2.ScalingActive, corev1.ConditionTrue, autoscalingv1alpha1.ValidMetricFoundReason},
		{autoscalingv2.ScalingLimited, corev1.ConditionFalse, autoscalingv1alpha1.DesiredWithinRangeReason},
	}
	threePodsAt = func(levels ...int64) *cpuResource {
		return &cpuResource{requests: cpuRequests(len(levels), "0.1"), levels: makePodMetricLevels(levels...)}
	}
)

// withLimited returns statusOk with ScalingLimited replaced.
func withLimited(reason string) []cond {
	out := append([]cond{}, statusOk...)
	out[2] = cond{autoscalingv2.ScalingLimited, corev1.ConditionTrue, reason}
	return out
}

func TestRecommend(t *testing.T) {
	tests := []struct {
		name     string
		fhpa     *autoscalingv1alpha1.FederatedHPA
		fixture  calcScenario
		selector *string
		client   func(*testing.T, *calcScenario) MetricsClient

		wantDesired    int32
		wantRescale    bool
		wantReason     string
		wantConditions []cond
		wantEvents     []string
		wantErr        string
	}{
		{
			name:        "no behavior: scale-up capped at max(2x, 4) (TestUpscaleCap without behavior)",
			fhpa:        testFHPA(1, 100, cpuUtilization(10)),
			fixture:     calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			wantDesired: 6, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: withLimited(autoscalingv1alpha1.ScaleUpLimitReason),
		},
		{
			name: "behavior: scale-up capped by a Percent 700 policy (TestUpscaleCap)",
			fhpa: func() *autoscalingv1alpha1.FederatedHPA {
				f := testFHPA(1, 100, cpuUtilization(10))
				f.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: generateScalingRules(0, 0, 700, 60, 0)}
				return f
			}(),
			fixture:     calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			wantDesired: 24, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: withLimited(autoscalingv1alpha1.ScaleUpLimitReason),
		},
		{
			name: "behavior: maxReplicas below the policy's cap (TestUpscaleCapGreaterThanMaxReplicas)",
			fhpa: func() *autoscalingv1alpha1.FederatedHPA {
				f := testFHPA(1, 20, cpuUtilization(10))
				f.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: generateScalingRules(0, 0, 700, 60, 0)}
				return f
			}(),
			fixture:     calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			wantDesired: 20, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: withLimited(autoscalingv1alpha1.TooManyReplicasReason),
		},
		{
			name: "a behavior without selectPolicy is Max, not a crash (Karmada issue 4085)",
			fhpa: func() *autoscalingv1alpha1.FederatedHPA {
				f := testFHPA(1, 100, cpuUtilization(10))
				f.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: &autoscalingv2.HPAScalingRules{
					Policies: []autoscalingv2.HPAScalingPolicy{{Type: autoscalingv2.PodsScalingPolicy, Value: 1, PeriodSeconds: 60}, {Type: autoscalingv2.PodsScalingPolicy, Value: 2, PeriodSeconds: 60}},
				}}
				return f
			}(),
			fixture:     calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			wantDesired: 5, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: withLimited(autoscalingv1alpha1.ScaleUpLimitReason),
		},
		{
			name: "an empty behavior takes Kubernetes' defaults: Pods 4 or Percent 100 per 15s, the larger",
			fhpa: func() *autoscalingv1alpha1.FederatedHPA {
				f := testFHPA(1, 100, cpuUtilization(10))
				f.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{}
				return f
			}(),
			fixture:     calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			wantDesired: 7, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: withLimited(autoscalingv1alpha1.ScaleUpLimitReason),
		},
		{
			name:        "a new autoscaler does not scale down within the stabilization window (TestScaleDownStabilizeInitialSize)",
			fhpa:        testFHPA(2, 6, cpuUtilization(50)),
			fixture:     calcScenario{currentReplicas: 5, resource: &cpuResource{requests: cpuRequests(5, "1.0"), levels: makePodMetricLevels(100, 300, 500, 250, 250)}},
			wantDesired: 5, wantReason: RescaleAllMetricsBelow,
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.ScaleDownStabilizedReason},
				{autoscalingv2.ScalingActive, corev1.ConditionTrue, autoscalingv1alpha1.ValidMetricFoundReason},
				{autoscalingv2.ScalingLimited, corev1.ConditionFalse, autoscalingv1alpha1.DesiredWithinRangeReason},
			},
		},
		{
			name:        "one invalid metric does not stop a scale-up (TestScaleWithOneInvalidMetric)",
			fhpa:        testFHPA(2, 6, cpuUtilization(30), autoscalingv2.MetricSpec{Type: "CheddarCheese"}),
			fixture:     calcScenario{currentReplicas: 3, resource: &cpuResource{requests: cpuRequests(3, "1.0"), levels: makePodMetricLevels(300, 400, 500)}},
			wantDesired: 4, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: statusOk,
			wantEvents:     []string{autoscalingv1alpha1.InvalidMetricSourceTypeReason},
			wantErr:        "invalid metrics (1 invalid out of 2)",
		},
		{
			name:        "one invalid metric stops a scale-down (TestNoScaleDownOneMetricInvalid)",
			fhpa:        testFHPA(2, 6, cpuUtilization(50), autoscalingv2.MetricSpec{Type: "CheddarCheese"}),
			fixture:     calcScenario{currentReplicas: 5, resource: &cpuResource{requests: cpuRequests(5, "1.0"), levels: makePodMetricLevels(100, 300, 500, 250, 250)}},
			wantDesired: 0, // the status' previous desiredReplicas
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.InvalidMetricSourceTypeReason},
			},
			wantEvents: []string{autoscalingv1alpha1.InvalidMetricSourceTypeReason, autoscalingv1alpha1.FailedComputeMetricsReplicasReason},
			wantErr:    "invalid metrics (1 invalid out of 2)",
		},
		{
			name:    "an External metric that cannot be had does not stop a scale-up (TestScaleUpOneMetricEmpty)",
			fhpa:    testFHPA(2, 6, cpuUtilization(30), externalValue("qps", 100)),
			fixture: calcScenario{currentReplicas: 3, resource: &cpuResource{requests: cpuRequests(3, "1.0"), levels: makePodMetricLevels(300, 400, 500)}},
			client: func(t *testing.T, f *calcScenario) MetricsClient {
				return failingExternal{fakeMetricsClient{t: t, f: f}}
			},
			wantDesired: 4, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: statusOk,
			wantEvents:     []string{autoscalingv1alpha1.FailedGetExternalMetricReason},
			wantErr:        "something went wrong",
		},
		{
			name:    "an External metric that cannot be had stops a scale-down (TestNoScaleDownOneMetricEmpty)",
			fhpa:    testFHPA(2, 6, cpuUtilization(50), externalValue("qps", 1000)),
			fixture: calcScenario{currentReplicas: 5, resource: &cpuResource{requests: cpuRequests(5, "1.0"), levels: makePodMetricLevels(100, 300, 500, 250, 250)}},
			client: func(t *testing.T, f *calcScenario) MetricsClient {
				return failingExternal{fakeMetricsClient{t: t, f: f}}
			},
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.FailedGetExternalMetricReason},
			},
			wantEvents: []string{autoscalingv1alpha1.FailedGetExternalMetricReason, autoscalingv1alpha1.FailedComputeMetricsReplicasReason},
			wantErr:    "something went wrong",
		},
		{
			name:    "no metric can be had: ScalingActive False with the metric's reason (TestConditionFailedGetMetrics)",
			fhpa:    testFHPA(1, 100, cpuUtilization(10)),
			fixture: calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			client:  func(*testing.T, *calcScenario) MetricsClient { return failingMetrics{} },
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.FailedGetResourceMetricReason},
			},
			wantEvents: []string{autoscalingv1alpha1.FailedGetResourceMetricReason, autoscalingv1alpha1.FailedComputeMetricsReplicasReason},
			wantErr:    "something went wrong",
		},
		{
			name:     "a scale without a selector (TestConditionInvalidSelectorMissing)",
			fhpa:     testFHPA(1, 100, cpuUtilization(10)),
			fixture:  calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			selector: ptr.To(""),
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.InvalidSelectorReason},
			},
			wantEvents: []string{autoscalingv1alpha1.SelectorRequiredReason, autoscalingv1alpha1.FailedComputeMetricsReplicasReason},
			wantErr:    "selector is required",
		},
		{
			name:     "a selector that does not parse (TestConditionInvalidSelectorUnparsable)",
			fhpa:     testFHPA(1, 100, cpuUtilization(10)),
			fixture:  calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			selector: ptr.To("cheddar cheese"),
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.InvalidSelectorReason},
			},
			wantEvents: []string{autoscalingv1alpha1.InvalidSelectorReason, autoscalingv1alpha1.FailedComputeMetricsReplicasReason},
			wantErr:    "couldn't convert selector",
		},
		{
			name:    "a metric whose type names an unset source field fails, without a panic",
			fhpa:    testFHPA(1, 100, autoscalingv2.MetricSpec{Type: autoscalingv2.ResourceMetricSourceType}),
			fixture: calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)},
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.FailedGetResourceMetricReason},
			},
			wantEvents: []string{autoscalingv1alpha1.FailedGetResourceMetricReason, autoscalingv1alpha1.FailedComputeMetricsReplicasReason},
			wantErr:    "source field that is not set",
		},
		{
			name:    "a target with zero replicas is left alone",
			fhpa:    testFHPA(1, 100, cpuUtilization(10)),
			fixture: calcScenario{currentReplicas: 0},
			wantConditions: []cond{
				{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason},
				{autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.ScalingDisabledReason},
			},
		},
		{
			name:        "a target above maxReplicas is brought down to it, without metrics",
			fhpa:        testFHPA(1, 4, cpuUtilization(10)),
			fixture:     calcScenario{currentReplicas: 7},
			client:      func(*testing.T, *calcScenario) MetricsClient { return failingMetrics{} },
			wantDesired: 4, wantRescale: true, wantReason: RescaleAboveMaxReplicas,
			wantConditions: []cond{{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason}},
		},
		{
			name:        "a target below minReplicas is brought up to it, without metrics",
			fhpa:        testFHPA(3, 10, cpuUtilization(10)),
			fixture:     calcScenario{currentReplicas: 1},
			client:      func(*testing.T, *calcScenario) MetricsClient { return failingMetrics{} },
			wantDesired: 3, wantRescale: true, wantReason: RescaleBelowMinReplicas,
			wantConditions: []cond{{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason}},
		},
		{
			name:    "a FederatedHPA without metrics targets 80% CPU",
			fhpa:    testFHPA(1, 10),
			fixture: calcScenario{currentReplicas: 2, resource: &cpuResource{requests: cpuRequests(2, "1.0"), levels: makePodMetricLevels(1000, 1000)}},
			// 100% against 80%: 2 * 1.25 = 2.5, rounded up.
			wantDesired: 3, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: statusOk,
		},
		{
			name: "Duplicated over 2 clusters: the calibration halves the pods' proposal",
			fhpa: testFHPA(1, 10, cpuUtilization(50)),
			fixture: calcScenario{
				currentReplicas: 2, podCount: 4, statusReplicas: 4, calibration: 2,
				podClusters: []string{"member1", "member1", "member2", "member2"},
				resource:    &cpuResource{requests: cpuRequests(4, "1.0"), levels: makePodMetricLevels(1000, 1000, 1000, 1000)},
			},
			wantDesired: 4, wantRescale: true, wantReason: "cpu resource utilization (percentage of request) above target",
			wantConditions: statusOk,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var client MetricsClient = fakeMetricsClient{t: t, f: &tc.fixture}
			if tc.client != nil {
				client = tc.client(t, &tc.fixture)
			}
			cfg := DefaultConfig()
			cfg.CPUInitializationPeriod, cfg.InitialReadinessDelay = defaultTestingCPUInitializationPeriod, defaultTestingDelayOfInitialReadinessStatus
			r := NewRecommender(client, cfg, clocktesting.NewFakePassiveClock(testNow))
			target := targetOf(&tc.fixture)
			if tc.selector != nil {
				target.Selector = *tc.selector
			}
			before := tc.fhpa.DeepCopy()
			rec := r.Recommend(context.Background(), tc.fhpa, target)

			if rec.DesiredReplicas != tc.wantDesired || rec.Rescale != tc.wantRescale || rec.RescaleReason != tc.wantReason {
				t.Errorf("desired %d, rescale %t, reason %q; want %d, %t, %q", rec.DesiredReplicas, rec.Rescale, rec.RescaleReason, tc.wantDesired, tc.wantRescale, tc.wantReason)
			}
			if diff := cmp.Diff(tc.wantConditions, appliedConditions(rec)); diff != "" {
				t.Errorf("conditions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.wantEvents, eventReasons(rec)); diff != "" {
				t.Errorf("event reasons (-want +got):\n%s", diff)
			}
			switch {
			case tc.wantErr == "" && rec.Err != nil:
				t.Errorf("unexpected error: %v", rec.Err)
			case tc.wantErr != "" && (rec.Err == nil || !strings.Contains(rec.Err.Error(), tc.wantErr)):
				t.Errorf("error %v, want one containing %q", rec.Err, tc.wantErr)
			}
			if diff := cmp.Diff(before, tc.fhpa); diff != "" {
				t.Errorf("Recommend modified the FederatedHPA (-before +after):\n%s", diff)
			}
		})
	}
}

// TestRecommendOverTime follows one FederatedHPA over several syncs, with the clock moving:
// the classic scale-down stabilization, and a behavior's rate policy over the scale events
// RecordRescale keeps.
func TestRecommendOverTime(t *testing.T) {
	t.Run("without behavior a scale-down waits for the downscale stabilization window", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(testNow)
		f := &calcScenario{currentReplicas: 4, resource: &cpuResource{requests: cpuRequests(4, "1.0"), levels: makePodMetricLevels(500, 500, 500, 500)}}
		cfg := DefaultConfig()
		cfg.DownscaleStabilizationWindow = time.Minute
		r := NewRecommender(fakeMetricsClient{t: t, f: f}, cfg, clk)
		fhpa := testFHPA(1, 10, cpuUtilization(50))

		if rec := r.Recommend(context.Background(), fhpa, targetOf(f)); rec.Rescale {
			t.Fatalf("on target: rescale to %d", rec.DesiredReplicas)
		}
		f.resource.levels = makePodMetricLevels(100, 100, 100, 100) // 10%: one replica would do
		clk.Step(30 * time.Second)
		if rec := r.Recommend(context.Background(), fhpa, targetOf(f)); rec.Rescale {
			t.Fatalf("30s after the last recommendation of 4: rescale to %d", rec.DesiredReplicas)
		}
		clk.Step(31 * time.Second)
		if rec := r.Recommend(context.Background(), fhpa, targetOf(f)); !rec.Rescale || rec.DesiredReplicas != 1 {
			t.Fatalf("61s later: rescale %t to %d, want to 1", rec.Rescale, rec.DesiredReplicas)
		}
	})

	t.Run("a Pods 1 per 60s policy counts the scale-ups of its period", func(t *testing.T) {
		clk := clocktesting.NewFakeClock(testNow)
		f := &calcScenario{currentReplicas: 3, resource: threePodsAt(100, 200, 300)}
		r := NewRecommender(fakeMetricsClient{t: t, f: f}, DefaultConfig(), clk)
		fhpa := testFHPA(1, 100, cpuUtilization(10))
		fhpa.Spec.Behavior = &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleUp: generateScalingRules(1, 60, 0, 0, 0)}

		rec := r.Recommend(context.Background(), fhpa, targetOf(f))
		if !rec.Rescale || rec.DesiredReplicas != 4 {
			t.Fatalf("first sync: rescale %t to %d, want to 4", rec.Rescale, rec.DesiredReplicas)
		}
		r.RecordRescale(fhpa, 3, 4)
		f.currentReplicas = 4
		f.resource = threePodsAt(100, 200, 300, 300)
		clk.Step(15 * time.Second)
		if rec := r.Recommend(context.Background(), fhpa, targetOf(f)); rec.Rescale {
			t.Fatalf("15s after a scale-up of 1: rescale to %d", rec.DesiredReplicas)
		}
		clk.Step(46 * time.Second)
		if rec := r.Recommend(context.Background(), fhpa, targetOf(f)); !rec.Rescale || rec.DesiredReplicas != 5 {
			t.Fatalf("61s after: rescale %t to %d, want to 5", rec.Rescale, rec.DesiredReplicas)
		}
	})
}

// TestSetCondition checks that a condition's transition time moves only with its status.
func TestSetCondition(t *testing.T) {
	t0, t1 := metav1.NewTime(testNow), metav1.NewTime(testNow.Add(time.Minute))
	list := SetCondition(nil, condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason, "read"), t0)
	list = SetCondition(list, condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.ReadyForNewScaleReason, "ready"), t1)
	if len(list) != 1 || list[0].Reason != autoscalingv1alpha1.ReadyForNewScaleReason || !list[0].LastTransitionTime.Equal(&t0) {
		t.Fatalf("same status: %+v, want one condition with reason %s and time %v", list, autoscalingv1alpha1.ReadyForNewScaleReason, t0)
	}
	list = SetCondition(list, condition(autoscalingv2.AbleToScale, corev1.ConditionFalse, autoscalingv1alpha1.FailedUpdateScaleReason, "failed"), t1)
	if !list[0].LastTransitionTime.Equal(&t1) || list[0].Message != "failed" {
		t.Fatalf("new status: %+v, want time %v", list[0], t1)
	}
	list = SetCondition(list, condition(autoscalingv2.ScalingActive, corev1.ConditionTrue, autoscalingv1alpha1.ValidMetricFoundReason, "ok"), t1)
	if len(list) != 2 || list[1].Type != autoscalingv2.ScalingActive {
		t.Fatalf("another type: %+v, want it appended", list)
	}
}

// TestRecordScaleKeepsEventsOfDefaultedRules checks that a behavior that leaves scaleUp out
// keeps its scale-ups for the default policies' 15s period: two scale-ups 5s apart both count.
func TestRecordScaleKeepsEventsOfDefaultedRules(t *testing.T) {
	behavior := &autoscalingv2.HorizontalPodAutoscalerBehavior{ScaleDown: generateScalingRules(1, 60, 0, 0, 300)}
	var h History
	h.RecordScale(behavior, 3, 7, testNow)
	h.RecordScale(behavior, 7, 8, testNow.Add(5*time.Second))
	if got := getReplicasChangePerPeriod(15, h.scaleUpEvents, testNow.Add(6*time.Second)); got != 5 {
		t.Errorf("replicas added in the last 15s: %d, want 5", got)
	}
}

// TestWriteOutcomes checks the conditions and event messages of the controller's own steps,
// in the HPA's words.
func TestWriteOutcomes(t *testing.T) {
	boom := errors.New("boom")
	for _, tc := range []struct {
		got  autoscalingv2.HorizontalPodAutoscalerCondition
		want cond
		msg  string
	}{
		{FailedGetScaleCondition(boom), cond{autoscalingv2.AbleToScale, corev1.ConditionFalse, autoscalingv1alpha1.FailedGetScaleReason}, "the HPA controller was unable to get the target's current scale: boom"},
		{RescaledCondition(4), cond{autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededRescaleReason}, "the HPA controller was able to update the target scale to 4"},
		{FailedUpdateScaleCondition(boom), cond{autoscalingv2.AbleToScale, corev1.ConditionFalse, autoscalingv1alpha1.FailedUpdateScaleReason}, "the HPA controller was unable to update the target scale: boom"},
	} {
		if got := (cond{tc.got.Type, tc.got.Status, tc.got.Reason}); got != tc.want || tc.got.Message != tc.msg {
			t.Errorf("%+v, want %+v with message %q", tc.got, tc.want, tc.msg)
		}
	}
	if got := RescaleEventMessage(4, RescaleAllMetricsBelow, nil); got != "New size: 4; reason: All metrics below target" {
		t.Errorf("SuccessfulRescale message %q", got)
	}
	if got := RescaleEventMessage(4, RescaleAllMetricsBelow, boom); got != "New size: 4; reason: All metrics below target; error: boom" {
		t.Errorf("FailedRescale message %q", got)
	}
}

// TestComputeWithoutMetrics checks that an empty metric list proposes nothing, with a reason.
func TestComputeWithoutMetrics(t *testing.T) {
	f := &calcScenario{currentReplicas: 3}
	h := newReplicaCalcSetup(t, f)
	p, err := h.calc.ComputeReplicasForMetrics(context.Background(), h.workload, h.tolerances, nil)
	if err == nil || p.Usable || p.ScalingActive.Status != corev1.ConditionFalse || p.ScalingActive.Reason == "" {
		t.Errorf("proposal %+v, error %v; want an unusable one with ScalingActive False and an error", p, err)
	}
}
