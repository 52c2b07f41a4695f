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
// (TestReplicaCalcExternalPerPodMetric, TestReplicaCalcPodMetric, TestReplicaCalcObjectMetric,
// TestReplicaCalcObjectPerPodMetric, TestReplicaCalcExternalMetric). Changes for Flotilla: the fake metrics
// client is a plain struct that answers as Kubernetes' REST metrics client does (pods by bare
// name unless the scenario keys them by cluster); the pods are passed to the calculator as a
// Workload from the cluster "member1"; the clock is fixed; assertions use the testing package;
// pod-level requests are always honoured (the PodLevelResources gate is on by default), so the
// gate-off case is left out; error messages name the pod's cluster.

package hpa

import (
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReplicaCalcExternalPerPodMetric covers GetExternalPerPodMetricReplicas scale-up/down
func TestReplicaCalcExternalPerPodMetric(t *testing.T) {
	externalPerPodMetric := func(levels ...int64) *customMetric {
		return &customMetric{name: "qps", levels: levels, selector: testExternalSelector}
	}

	cases := []perPodMetricCase{
		{
			name: "replica count overflow saturates to MaxInt32",
			fixture: calcScenario{
				currentReplicas: 1,
				metric:          externalPerPodMetric(math.MaxInt64),
			},
			// Targeting a 1:1 ratio between metric value and number of pods.
			perPodTargetUsage: 1,
			expectedReplicas:  math.MaxInt32,
			expectedUsage:     math.MaxInt64,
		},
		{
			name: "usage overflow with huge target leaves replicas unchanged",
			fixture: calcScenario{
				currentReplicas: 1,
				metric:          externalPerPodMetric(math.MaxInt64),
			},
			// Targeting a high value:1 ratio between metric value and number of pods.
			perPodTargetUsage: math.MaxInt64,
			expectedReplicas:  1,
			expectedUsage:     math.MaxInt64,
		},
		{
			name: "scale up",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          externalPerPodMetric(8600),
			},
			perPodTargetUsage: 2150,
			expectedReplicas:  4,
			expectedUsage:     2867,
		},
		{
			name: "scale down",
			fixture: calcScenario{
				currentReplicas: 5,
				metric:          externalPerPodMetric(8600),
			},
			perPodTargetUsage: 2867,
			expectedReplicas:  3,
			expectedUsage:     1720,
		},
		{
			name: "within default tolerance",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          externalPerPodMetric(8600),
			},
			perPodTargetUsage: 2900,
			expectedReplicas:  3,
			expectedUsage:     2867,
		},
		{
			name:       "outside configurable 1% tolerance",
			tolerances: &Tolerances{defaultTestingTolerance, .01},
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          externalPerPodMetric(8600),
			},
			perPodTargetUsage: 2800,
			expectedReplicas:  4,
			expectedUsage:     2867,
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplicaCalcSetup(t, &tc.fixture)
			if tc.tolerances != nil {
				h.tolerances = *tc.tolerances
			}
			replicas, usage, ts, err := h.calc.GetExternalPerPodMetricReplicas(
				h.workload, h.tolerances, tc.perPodTargetUsage, tc.fixture.metric.name,
				tc.fixture.metric.selector,
			)
			assertMetricReplicas(t,
				tc.expectedReplicas, tc.expectedUsage, tc.fixture.timestamp, tc.expectedError,
				replicas, usage, ts, err,
			)
		})
	}
}

// TestReplicaCalcPodMetric covers GetMetricReplicas scale-up/down.
func TestReplicaCalcPodMetric(t *testing.T) {
	podMetric := func(levels ...int64) *customMetric {
		return &customMetric{name: "qps", levels: levels}
	}
	testCases := []metricCase{
		{
			name: "scale up",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          podMetric(20000, 10000, 30000),
			},
			targetUsage:      15000,
			expectedReplicas: 4,
			expectedUsage:    20000,
		},
		{
			name: "scale up: unready hot-CPU pod scales less",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse},
				podStartTime:    []metav1.Time{coolCPUCreationTime(), coolCPUCreationTime(), hotCPUCreationTime()},
				metric:          podMetric(50000, 10000, 30000),
			},
			targetUsage:      15000,
			expectedReplicas: 6,
			expectedUsage:    30000,
		},
		{
			name: "scale up: unready hot-CPU pods avoid scale-down",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionFalse},
				podStartTime:    []metav1.Time{hotCPUCreationTime(), coolCPUCreationTime(), hotCPUCreationTime()},
				metric:          podMetric(50000, 15000, 30000),
			},
			targetUsage:      15000,
			expectedReplicas: 7,
			expectedUsage:    31666,
		},
		{
			name: "scale down",
			fixture: calcScenario{
				currentReplicas: 5,
				metric:          podMetric(12000, 12000, 12000, 12000, 12000),
			},
			targetUsage:      20000,
			expectedReplicas: 3,
			expectedUsage:    12000,
		},
		{
			name: "within default tolerance",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          podMetric(20000, 21000, 21000),
			},
			targetUsage:      20000,
			expectedReplicas: 3,
			expectedUsage:    20666,
		},
		{
			name:       "outside configurable 1% tolerance",
			tolerances: &Tolerances{defaultTestingTolerance, .01},
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          podMetric(20000, 21000, 21000),
			},
			targetUsage:      20000,
			expectedReplicas: 4,
			expectedUsage:    20666,
		},
		{
			name: "no change: missing metrics",
			fixture: calcScenario{
				currentReplicas: 5,
				metric:          podMetric(20000, 19000, 21000),
			},
			targetUsage:      20000,
			expectedReplicas: 5,
			expectedUsage:    20000,
		},
		{
			name: "rolling update with maxSurge: extra pod missing metric",
			fixture: calcScenario{
				currentReplicas: 2,
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning},
				metric:          podMetric(10000, 10000),
			},
			targetUsage:      17000,
			expectedReplicas: 2,
			expectedUsage:    10000,
		},
	}

	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplicaCalcSetup(t, &tc.fixture)
			if tc.tolerances != nil {
				h.tolerances = *tc.tolerances
			}
			replicas, usage, ts, err := h.calc.GetMetricReplicas(
				h.workload, h.tolerances, tc.targetUsage, tc.fixture.metric.name, nil,
			)
			assertMetricReplicas(t,
				tc.expectedReplicas, tc.expectedUsage, tc.fixture.timestamp, tc.expectedError,
				replicas, usage, ts, err,
			)
		})
	}
}

// TestReplicaCalcObjectMetric covers GetObjectMetricReplicas scale-up/down.
func TestReplicaCalcObjectMetric(t *testing.T) {
	objectMetric := func(level int64) *customMetric {
		return &customMetric{name: "qps", levels: []int64{level}, singleObject: testDeploymentRef}
	}

	cases := []metricCase{
		{
			name: "scale up",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          objectMetric(20000),
			},
			targetUsage:      15000,
			expectedReplicas: 4,
			expectedUsage:    20000,
		},
		{
			name: "scale up: very large metric saturates replicas to MaxInt32",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          objectMetric(math.MaxInt64), // MaxInt64 to force a very large value.
			},
			targetUsage:      1, // Very low target forces high scaling.
			expectedReplicas: math.MaxInt32,
			expectedUsage:    math.MaxInt64,
		},
		{
			name: "scale up: ignores unready pods",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionFalse},
				metric:          objectMetric(50000),
			},
			targetUsage:      10000,
			expectedReplicas: 5,
			expectedUsage:    50000,
		},
		{
			name: "scale down",
			fixture: calcScenario{
				currentReplicas: 5,
				metric:          objectMetric(12000),
			},
			targetUsage:      20000,
			expectedReplicas: 3,
			expectedUsage:    12000,
		},
		{
			name: "within default tolerance",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          objectMetric(20666),
			},
			targetUsage:      20000,
			expectedReplicas: 3,
			expectedUsage:    20666,
		},
		{
			name:       "outside configurable 1% tolerance",
			tolerances: &Tolerances{defaultTestingTolerance, .01},
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          objectMetric(20666),
			},
			targetUsage:      20000,
			expectedReplicas: 4,
			expectedUsage:    20666,
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplicaCalcSetup(t, &tc.fixture)
			if tc.tolerances != nil {
				h.tolerances = *tc.tolerances
			}
			replicas, usage, ts, err := h.calc.GetObjectMetricReplicas(
				h.workload, h.tolerances, tc.targetUsage, tc.fixture.metric.name,
				tc.fixture.metric.singleObject, nil,
			)
			assertMetricReplicas(t,
				tc.expectedReplicas, tc.expectedUsage, tc.fixture.timestamp, tc.expectedError,
				replicas, usage, ts, err,
			)
		})
	}
}

// TestReplicaCalcObjectPerPodMetric covers GetObjectPerPodMetricReplicas scale-up/down and tolerance behavior.
func TestReplicaCalcObjectPerPodMetric(t *testing.T) {
	perPodMetric := func(level int64) *customMetric {
		return &customMetric{name: "qps", levels: []int64{level}, singleObject: testDeploymentRef}
	}

	cases := []perPodMetricCase{
		{
			name: "scale up",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          perPodMetric(20000),
			},
			perPodTargetUsage: 5000,
			expectedReplicas:  4,
			expectedUsage:     6667,
		},
		{
			name: "scale down",
			fixture: calcScenario{
				currentReplicas: 5,
				metric:          perPodMetric(6000),
			},
			perPodTargetUsage: 2000,
			expectedReplicas:  3,
			expectedUsage:     1200,
		},
		{
			name: "within default tolerance",
			fixture: calcScenario{
				currentReplicas: 4,
				metric:          perPodMetric(20166),
			},
			perPodTargetUsage: 5000,
			expectedReplicas:  4,
			expectedUsage:     5042,
		},
		{
			name:       "outside configurable 1% tolerance",
			tolerances: &Tolerances{defaultTestingTolerance, .01},
			fixture: calcScenario{
				currentReplicas: 4,
				metric:          perPodMetric(20208),
			},
			perPodTargetUsage: 5000,
			expectedReplicas:  5,
			expectedUsage:     5052,
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplicaCalcSetup(t, &tc.fixture)
			if tc.tolerances != nil {
				h.tolerances = *tc.tolerances
			}
			replicas, usage, ts, err := h.calc.GetObjectPerPodMetricReplicas(
				h.workload, h.tolerances, tc.perPodTargetUsage, tc.fixture.metric.name,
				tc.fixture.metric.singleObject, nil,
			)
			assertMetricReplicas(t,
				tc.expectedReplicas, tc.expectedUsage, tc.fixture.timestamp, tc.expectedError,
				replicas, usage, ts, err,
			)
		})
	}
}

// TestReplicaCalcExternalMetric covers GetExternalMetricReplicas scale-up/down.
func TestReplicaCalcExternalMetric(t *testing.T) {
	externalMetric := func(levels ...int64) *customMetric {
		return &customMetric{name: "qps", levels: levels, selector: testExternalSelector}
	}

	cases := []metricCase{
		{
			name: "scale down: ignores unready pods (would otherwise scale up)",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionFalse},
				metric:          externalMetric(8600),
			},
			targetUsage:      4400,
			expectedReplicas: 2, // Would be 6 if we didn't ignore unready pods.
			expectedUsage:    8600,
		},
		{
			name: "scale down",
			fixture: calcScenario{
				currentReplicas: 5,
				metric:          externalMetric(8600),
			},
			targetUsage:      14334,
			expectedReplicas: 3,
			expectedUsage:    8600,
		},
		{
			name: "within default tolerance",
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          externalMetric(8600),
			},
			targetUsage:      8888,
			expectedReplicas: 3,
			expectedUsage:    8600,
		},
		{
			name:       "outside configurable 1% tolerance",
			tolerances: &Tolerances{defaultTestingTolerance, .01},
			fixture: calcScenario{
				currentReplicas: 3,
				metric:          externalMetric(8900),
			},
			targetUsage:      8800,
			expectedReplicas: 4,
			expectedUsage:    8900,
		},
		{
			name: "usage overflow caps at MaxInt64",
			fixture: calcScenario{
				currentReplicas: 3,
				// Two values that when added together would overflow int64.
				metric: externalMetric(math.MaxInt64/2+1, math.MaxInt64/2+1),
			},
			targetUsage:      math.MaxInt64, // High target.
			expectedReplicas: 3,
			expectedUsage:    math.MaxInt64, // Capped.
		},
	}

	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplicaCalcSetup(t, &tc.fixture)
			if tc.tolerances != nil {
				h.tolerances = *tc.tolerances
			}
			replicas, usage, ts, err := h.calc.GetExternalMetricReplicas(
				h.workload, h.tolerances, tc.targetUsage, tc.fixture.metric.name,
				tc.fixture.metric.selector,
			)
			assertMetricReplicas(t,
				tc.expectedReplicas, tc.expectedUsage, tc.fixture.timestamp, tc.expectedError,
				replicas, usage, ts, err,
			)
		})
	}
}
