/*
Copyright 2016 The Kubernetes Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

// Ported from k8s.io/kubernetes v1.37.2, pkg/controller/podautoscaler/replica_calculator_test.go
// (the fixture types and helpers, with a fake metrics client of Flotilla's). Changes for Flotilla: the fake metrics
// client is a plain struct that answers as Kubernetes' REST metrics client does (pods by bare
// name unless the scenario keys them by cluster); the pods are passed to the calculator as a
// Workload from the cluster "member1"; the clock is fixed; assertions use the testing package;
// pod-level requests are always honoured (the PodLevelResources gate is on by default), so the
// gate-off case is left out; error messages name the pod's cluster.

package hpa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	clocktesting "k8s.io/utils/clock/testing"
)

const (
	testNamespace       = "test-namespace"
	podNamePrefix       = "test-pod"
	numContainersPerPod = 2
	testCluster         = "member1"

	defaultTestingTolerance                     = 0.1
	defaultTestingCPUInitializationPeriod       = 2 * time.Minute
	defaultTestingDelayOfInitialReadinessStatus = 10 * time.Second
)

// testNow is the fixed time of every calculator test.
var testNow = time.Date(2026, time.March, 1, 12, 0, 0, 0, time.UTC)

// hotCPUCreationTime is a pod start within the CPU initialization period.
func hotCPUCreationTime() metav1.Time { return metav1.Time{Time: testNow} }

// coolCPUCreationTime is a pod start past the CPU initialization period.
func coolCPUCreationTime() metav1.Time { return metav1.Time{Time: testNow.Add(-3 * time.Minute)} }

// testDeploymentRef is the default object reference
var testDeploymentRef = &autoscalingv2.CrossVersionObjectReference{
	Kind:       "Deployment",
	APIVersion: "apps/v1",
	Name:       "some-deployment",
}

var testExternalSelector = &metav1.LabelSelector{MatchLabels: map[string]string{"label": "value"}}

// cpuResource describes the per-container CPU requests and the pod-level metric
// levels that shape the fake pod/metrics clients for resource-based tests.
type cpuResource struct {
	// requests is the per-pod CPU request. len(requests) is the number of pods.
	requests []resource.Quantity
	// levels[i][j] is the usage of container j in pod i. Out-of-range values
	// simulate pods with missing metrics.
	levels [][]int64
	// podNames, if non-empty, overrides the pod name returned by the fake
	// metrics client for index i.
	podNames []string
}

// customMetric describes how the fake custom - or external-metrics client should
// respond in metric-based tests.
type customMetric struct {
	name string
	// levels are the values returned by the metrics client, one per pod
	// (or one per external-metric sample).
	levels []int64
	// singleObject is required for object and objectPerPod metric tests.
	singleObject *autoscalingv2.CrossVersionObjectReference
	// selector is required for external and externalPerPod metric tests.
	selector *metav1.LabelSelector
}

// calcScenario is a pure input bundle: it describes what pods exist, what
// metrics they report, and what readiness/phase they are in.
type calcScenario struct {
	currentReplicas int32

	// Exactly one of resource or metric is set.
	resource *cpuResource
	metric   *customMetric

	// container, if set, scopes GetResourceReplicas to a specific container.
	container string

	// timestamp used by the fake metrics clients for all returned samples.
	timestamp time.Time

	// Per-pod state. When non-nil, each slice must be at least currentReplicas
	// long (or longer if the fixture is also describing failed/deleted pods
	// that aren't counted in currentReplicas).
	podReadiness         []v1.ConditionStatus
	podStartTime         []metav1.Time
	podPhase             []v1.PodPhase
	podDeletionTimestamp []bool

	// Flotilla's additions. podClusters[i] is the member cluster of pod i (testCluster when
	// unset); podCount overrides the number of pods (for a Duplicated placement, more pods than
	// template replicas); statusReplicas overrides the template's status.replicas
	// (currentReplicas when 0); calibration is the Workload's; clusterKeyed makes the fake
	// metrics client key pod metrics by PodKey, as a cluster-aware client does.
	podClusters    []string
	podCount       int
	statusReplicas int32
	calibration    float64
	clusterKeyed   bool
}

func cpuRequests(n int, val string) []resource.Quantity {
	requests := make([]resource.Quantity, n)
	for i := range requests {
		requests[i] = resource.MustParse(val)
	}
	return requests
}

// makePodMetricLevels returns a [pod][container]int64 where every container in
// pod i reports the same usage containerMetric[i].
func makePodMetricLevels(containerMetric ...int64) [][]int64 {
	metrics := make([][]int64, len(containerMetric))
	for i := range containerMetric {
		metrics[i] = make([]int64, numContainersPerPod)
		for j := range numContainersPerPod {
			metrics[i][j] = containerMetric[i]
		}
	}
	return metrics
}

// podsCount is the number of pods of the scenario.
func (f *calcScenario) podsCount() int {
	n := int(f.currentReplicas)
	if f.podCount > 0 {
		n = f.podCount
	}
	// Failed pods aren't included in currentReplicas.
	if f.podPhase != nil && len(f.podPhase) > n {
		n = len(f.podPhase)
	}
	return n
}

func (f *calcScenario) podCluster(i int) string {
	if i < len(f.podClusters) {
		return f.podClusters[i]
	}
	return testCluster
}

// metricKey is the key under which the fake client reports pod i's metric, named name.
func (f *calcScenario) metricKey(i int, name string) string {
	if f.clusterKeyed {
		return PodKey(f.podCluster(i), name)
	}
	return name
}

// buildFakePod build a fake pod based on calcScenario's pod index.
func buildFakePod(f *calcScenario, i int) Pod {
	podReadiness := v1.ConditionTrue
	if f.podReadiness != nil && i < len(f.podReadiness) {
		podReadiness = f.podReadiness[i]
	}
	var podStartTime metav1.Time
	if f.podStartTime != nil {
		podStartTime = f.podStartTime[i]
	}
	podPhase := v1.PodRunning
	if f.podPhase != nil {
		podPhase = f.podPhase[i]
	}
	deleted := f.podDeletionTimestamp != nil && f.podDeletionTimestamp[i]

	pod := &v1.Pod{
		ObjectMeta: metav1.ObjectMeta{
			Name:      fmt.Sprintf("%s-%d", podNamePrefix, i),
			Namespace: testNamespace,
			Labels:    map[string]string{"name": podNamePrefix},
		},
		Status: v1.PodStatus{
			Phase:     podPhase,
			StartTime: &podStartTime,
			Conditions: []v1.PodCondition{
				{Type: v1.PodReady, Status: podReadiness},
			},
		},
		Spec: v1.PodSpec{
			Containers: []v1.Container{{Name: "container1"}, {Name: "container2"}},
		},
	}
	if deleted {
		pod.DeletionTimestamp = &metav1.Time{Time: testNow}
	}
	if f.resource != nil && i < len(f.resource.requests) {
		req := v1.ResourceRequirements{
			Requests: v1.ResourceList{v1.ResourceCPU: f.resource.requests[i]},
		}
		pod.Spec.Containers[0].Resources = req
		pod.Spec.Containers[1].Resources = req
	}
	return Pod{Cluster: f.podCluster(i), Pod: pod}
}

// fakeMetricsClient answers from a calcScenario as Kubernetes' REST metrics client answers
// from the fake metrics APIs of the upstream tests: a pod's resource metric is the sum of its
// containers' (missing when a container has none) or the named container's.
type fakeMetricsClient struct {
	t *testing.T
	f *calcScenario
}

var _ MetricsClient = fakeMetricsClient{}

func (c fakeMetricsClient) GetResourceMetric(_ context.Context, res v1.ResourceName, namespace string, _ labels.Selector, container string) (metricsclient.PodMetricsInfo, time.Time, error) {
	f := c.f
	if f.resource == nil {
		return nil, time.Time{}, errors.New("no pod resource metrics specified in test client")
	}
	if namespace != testNamespace || res != v1.ResourceCPU {
		c.t.Errorf("resource metrics of %s in %s requested, want cpu in %s", res, namespace, testNamespace)
	}
	if len(f.resource.levels) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from resource metrics API")
	}
	out := metricsclient.PodMetricsInfo{}
	for i, levels := range f.resource.levels {
		name := fmt.Sprintf("%s-%d", podNamePrefix, i)
		if len(f.resource.podNames) > i {
			name = f.resource.podNames[i]
		}
		var sum int64
		found := container == "" && len(levels) == numContainersPerPod
		for j, level := range levels {
			if container == "" {
				sum += level
			} else if container == fmt.Sprintf("container%d", j+1) {
				sum, found = level, true
			}
		}
		if found {
			out[f.metricKey(i, name)] = metricsclient.PodMetric{Timestamp: f.timestamp, Window: time.Minute, Value: sum}
		}
	}
	return out, f.timestamp, nil
}

func (c fakeMetricsClient) GetRawMetric(metricName, _ string, _ labels.Selector, _ labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	f := c.f
	if f.metric == nil {
		return nil, time.Time{}, errors.New("no custom metrics specified in test client")
	}
	if metricName != f.metric.name {
		c.t.Errorf("metric %q requested, want %q", metricName, f.metric.name)
	}
	if len(f.metric.levels) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from custom metrics API")
	}
	out := metricsclient.PodMetricsInfo{}
	for i, level := range f.metric.levels {
		out[f.metricKey(i, fmt.Sprintf("%s-%d", podNamePrefix, i))] = metricsclient.PodMetric{Timestamp: f.timestamp, Window: time.Minute, Value: level}
	}
	return out, f.timestamp, nil
}

func (c fakeMetricsClient) GetObjectMetric(metricName, _ string, objectRef *autoscalingv2.CrossVersionObjectReference, _ labels.Selector) (int64, time.Time, error) {
	f := c.f
	if f.metric == nil {
		return 0, time.Time{}, errors.New("no custom metrics specified in test client")
	}
	if metricName != f.metric.name || f.metric.singleObject == nil || *objectRef != *f.metric.singleObject {
		c.t.Errorf("metric %q of %+v requested, want %q of %+v", metricName, objectRef, f.metric.name, f.metric.singleObject)
	}
	return f.metric.levels[0], f.timestamp, nil
}

func (c fakeMetricsClient) GetExternalMetric(metricName, _ string, selector labels.Selector) ([]int64, time.Time, error) {
	f := c.f
	if f.metric == nil {
		return nil, time.Time{}, errors.New("no external metrics specified in test client")
	}
	want, err := metav1.LabelSelectorAsSelector(f.metric.selector)
	if err != nil || metricName != f.metric.name || selector.String() != want.String() {
		c.t.Errorf("external metric %q{%s} requested, want %q{%s}", metricName, selector, f.metric.name, want)
	}
	if len(f.metric.levels) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned from external metrics API")
	}
	return f.metric.levels, f.timestamp, nil
}

// replicaCalcSetup holds a ReplicaCalculator on a scenario and the Workload to pass it.
type replicaCalcSetup struct {
	calc       *ReplicaCalculator
	ctx        context.Context
	workload   Workload
	tolerances Tolerances
}

func newReplicaCalcSetup(t *testing.T, f *calcScenario) *replicaCalcSetup {
	t.Helper()
	pods := make([]Pod, f.podsCount())
	for i := range pods {
		pods[i] = buildFakePod(f, i)
	}
	statusReplicas := f.statusReplicas
	if statusReplicas == 0 {
		statusReplicas = f.currentReplicas
	}
	return &replicaCalcSetup{
		calc: NewReplicaCalculator(fakeMetricsClient{t: t, f: f},
			defaultTestingCPUInitializationPeriod, defaultTestingDelayOfInitialReadinessStatus, clocktesting.NewFakePassiveClock(testNow)),
		ctx: context.Background(),
		workload: Workload{
			Namespace:      testNamespace,
			Selector:       labels.SelectorFromSet(labels.Set{"name": podNamePrefix}),
			Pods:           pods,
			SpecReplicas:   f.currentReplicas,
			StatusReplicas: statusReplicas,
			Calibration:    f.calibration,
		},
		tolerances: Tolerances{defaultTestingTolerance, defaultTestingTolerance},
	}
}

// resourceCase bundles a single input fixture with expected outputs for the resource-based replica tests.
type resourceCase struct {
	name    string
	fixture calcScenario

	targetUtilization   int32
	expectedReplicas    int32
	expectedUtilization int32
	expectedRawValue    int64
	expectedError       error

	// tolerances, if non-nil, overrides the default setup tolerances.
	tolerances *Tolerances
}

// metricCase bundles a single input fixture with expected outputs for pod-metric-based, object-metric-based, and external-metric-based replica tests.
type metricCase struct {
	name    string
	fixture calcScenario

	targetUsage      int64
	expectedReplicas int32
	expectedUsage    int64
	expectedError    error

	// tolerances, if non-nil, overrides the default setup tolerances.
	tolerances *Tolerances
}

// perPodMetricCase bundles a single input fixture with expected outputs for object-per-pod-metric-based and external-per-pod-metric-based replica tests.
type perPodMetricCase struct {
	name    string
	fixture calcScenario

	perPodTargetUsage int64
	expectedReplicas  int32
	expectedUsage     int64
	expectedError     error

	// tolerances, if non-nil, overrides the default setup tolerances.
	tolerances *Tolerances
}

func assertErr(t *testing.T, wantErr, gotErr error) (done bool) {
	t.Helper()
	if wantErr != nil {
		if gotErr == nil {
			t.Fatalf("want an error containing %q, got none", wantErr)
		}
		if !strings.Contains(gotErr.Error(), wantErr.Error()) {
			t.Fatalf("error %q does not contain %q", gotErr, wantErr)
		}
		return true
	}
	if gotErr != nil {
		t.Fatalf("unexpected error: %v", gotErr)
	}
	return false
}

func assertMetricReplicas(t *testing.T, wantReplicas int32, wantUsage int64, wantTimestamp time.Time, wantErr error,
	gotReplicas int32, gotUsage int64, gotTimestamp time.Time, gotErr error) {
	t.Helper()
	if assertErr(t, wantErr, gotErr) {
		return
	}
	if gotReplicas != wantReplicas || gotUsage != wantUsage || !gotTimestamp.Equal(wantTimestamp) {
		t.Errorf("got replicas %d, usage %d, timestamp %v; want %d, %d, %v", gotReplicas, gotUsage, gotTimestamp, wantReplicas, wantUsage, wantTimestamp)
	}
}

// assertResourceReplicas checks the result of GetResourceReplicas against
// expected values (or expected error) and verifies the metric timestamp.
func assertResourceReplicas(t *testing.T, wantReplicas int32, wantUtilization int32, wantRawValue int64, wantTimestamp time.Time, wantErr error,
	gotReplicas int32, gotUtilization int32, gotRawValue int64, gotTimestamp time.Time, gotErr error) {
	t.Helper()
	if assertErr(t, wantErr, gotErr) {
		return
	}
	if gotReplicas != wantReplicas || gotUtilization != wantUtilization || gotRawValue != wantRawValue || !gotTimestamp.Equal(wantTimestamp) {
		t.Errorf("got replicas %d, utilization %d, raw %d, timestamp %v; want %d, %d, %d, %v",
			gotReplicas, gotUtilization, gotRawValue, gotTimestamp, wantReplicas, wantUtilization, wantRawValue, wantTimestamp)
	}
}
