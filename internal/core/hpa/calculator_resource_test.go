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
// (TestReplicaCalcResourceScale). Changes for Flotilla: the fake metrics
// client is a plain struct that answers as Kubernetes' REST metrics client does (pods by bare
// name unless the scenario keys them by cluster); the pods are passed to the calculator as a
// Workload from the cluster "member1"; the clock is fixed; assertions use the testing package;
// pod-level requests are always honoured (the PodLevelResources gate is on by default), so the
// gate-off case is left out; error messages name the pod's cluster.

package hpa

import (
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestReplicaCalcResourceScale(t *testing.T) {
	testCases := []resourceCase{
		{
			name: "scale up",
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(300, 500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    5,
			expectedUtilization: 50,
			expectedRawValue:    numContainersPerPod * 500,
		},
		{
			name: "scale up: container metric",
			fixture: calcScenario{
				currentReplicas: 3,
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   [][]int64{{1000, 300}, {1000, 500}, {1000, 700}},
				},
			},
			targetUtilization:   30,
			expectedReplicas:    5,
			expectedUtilization: 50,
			expectedRawValue:    500,
		},
		{
			name: "scale up: unready pod scales less",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionTrue},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(300, 500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    numContainersPerPod * 600,
		},
		{
			name: "scale up: hot-CPU container scales less",
			fixture: calcScenario{
				currentReplicas: 3,
				podStartTime:    []metav1.Time{hotCPUCreationTime(), coolCPUCreationTime(), coolCPUCreationTime()},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   [][]int64{{0, 300}, {0, 500}, {0, 700}},
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    600,
		},
		{
			name: "scale up: hot-CPU pod scales less",
			fixture: calcScenario{
				currentReplicas: 3,
				podStartTime:    []metav1.Time{hotCPUCreationTime(), coolCPUCreationTime(), coolCPUCreationTime()},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(300, 500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    numContainersPerPod * 600,
		},
		{
			name: "no scale: unready pods ignored",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(400, 500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    3,
			expectedUtilization: 40,
			expectedRawValue:    numContainersPerPod * 400,
		},
		{
			name: "no scale: hot-CPU pods ignored",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podStartTime:    []metav1.Time{coolCPUCreationTime(), hotCPUCreationTime(), hotCPUCreationTime()},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(400, 500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    3,
			expectedUtilization: 40,
			expectedRawValue:    numContainersPerPod * 400,
		},
		{
			name: "scale up: failed pods ignored",
			fixture: calcScenario{
				currentReplicas: 2,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodFailed, v1.PodFailed},
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   makePodMetricLevels(500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    numContainersPerPod * 600,
		},
		{
			name: "scale up: failed pods ignored with missing container metric",
			fixture: calcScenario{
				currentReplicas: 2,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodFailed, v1.PodFailed},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   [][]int64{{1000, 500}, {9000, 700}, {1000}, {9000}},
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    600,
		},
		{
			name: "scale up: container metrics with failed pods ignored",
			fixture: calcScenario{
				currentReplicas: 2,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodFailed, v1.PodFailed},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   [][]int64{{1000, 500}, {9000, 700}},
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    600,
		},
		{
			name: "scale up: pods being deleted are ignored",
			fixture: calcScenario{
				currentReplicas:      2,
				podReadiness:         []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:             []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning},
				podDeletionTimestamp: []bool{false, false, true, true},
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   makePodMetricLevels(500, 700),
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    numContainersPerPod * 600,
		},
		{
			name: "scale up: container metrics with pods being deleted ignored",
			fixture: calcScenario{
				currentReplicas:      2,
				podReadiness:         []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:             []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning},
				podDeletionTimestamp: []bool{false, false, true, true},
				container:            "container1",
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   makePodMetricLevels(500, 700), // TODO: This test is broken and works only because of missing metrics.
				},
			},
			targetUtilization:   30,
			expectedReplicas:    4,
			expectedUtilization: 60,
			expectedRawValue:    600,
		},
		{
			name: "scale down",
			fixture: calcScenario{
				currentReplicas: 5,
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   makePodMetricLevels(100, 300, 500, 250, 250),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 28,
			expectedRawValue:    numContainersPerPod * 280,
		},
		{
			name: "scale down: container metric",
			fixture: calcScenario{
				currentReplicas: 5,
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}},
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 28,
			expectedRawValue:    280,
		},
		{
			name: "scale down: exclude unready pods",
			fixture: calcScenario{
				currentReplicas: 5,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   makePodMetricLevels(100, 300, 500, 250, 250),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    2,
			expectedUtilization: 30,
			expectedRawValue:    numContainersPerPod * 300,
		},
		{
			name: "scale down: container metric excludes unready pods",
			fixture: calcScenario{
				currentReplicas: 5,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}},
				},
			},
			targetUtilization:   50,
			expectedReplicas:    2,
			expectedUtilization: 30,
			expectedRawValue:    300,
		},
		{
			name: "scale down: exclude unscheduled pods",
			fixture: calcScenario{
				currentReplicas: 5,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodPending, v1.PodPending, v1.PodPending},
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   makePodMetricLevels(100),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    1,
			expectedUtilization: 10,
			expectedRawValue:    numContainersPerPod * 100,
		},
		{
			name: "scale down: container metric excludes unscheduled pods",
			fixture: calcScenario{
				currentReplicas: 5,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodPending, v1.PodPending, v1.PodPending, v1.PodPending},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}},
				},
			},
			targetUtilization:   50,
			expectedReplicas:    1,
			expectedUtilization: 10,
			expectedRawValue:    100,
		},
		{
			name: "scale down: ignore hot-CPU pods",
			fixture: calcScenario{
				currentReplicas: 5,
				podStartTime:    []metav1.Time{coolCPUCreationTime(), coolCPUCreationTime(), coolCPUCreationTime(), hotCPUCreationTime(), hotCPUCreationTime()},
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   makePodMetricLevels(100, 300, 500, 250, 250),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    2,
			expectedUtilization: 30,
			expectedRawValue:    numContainersPerPod * 300,
		},
		{
			name: "scale down: container metric ignores hot-CPU pods",
			fixture: calcScenario{
				currentReplicas: 5,
				podStartTime:    []metav1.Time{coolCPUCreationTime(), coolCPUCreationTime(), coolCPUCreationTime(), hotCPUCreationTime(), hotCPUCreationTime()},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(5, "1.0"),
					levels:   [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 1000}, {1000, 1000}},
				},
			},
			targetUtilization:   50,
			expectedReplicas:    2,
			expectedUtilization: 30,
			expectedRawValue:    300,
		},
		{
			name: "scale down: failed pods ignored",
			fixture: calcScenario{
				currentReplicas: 5,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodFailed, v1.PodFailed},
				resource: &cpuResource{
					requests: cpuRequests(7, "1.0"),
					levels:   makePodMetricLevels(100, 300, 500, 250, 250),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 28,
			expectedRawValue:    numContainersPerPod * 280,
		},
		{
			name: "scale down: container metric with failed pods ignored",
			fixture: calcScenario{
				currentReplicas: 5,
				podReadiness:    []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodFailed, v1.PodFailed},
				container:       "container2",
				resource: &cpuResource{
					requests: cpuRequests(7, "1.0"),
					levels:   [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}}, // TODO: Test is broken.
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 28,
			expectedRawValue:    280,
		},
		{
			name: "scale down: pods being deleted are ignored",
			fixture: calcScenario{
				currentReplicas:      5,
				podReadiness:         []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:             []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning},
				podDeletionTimestamp: []bool{false, false, false, false, false, true, true},
				resource: &cpuResource{
					requests: cpuRequests(7, "1.0"),
					levels:   makePodMetricLevels(100, 300, 500, 250, 250),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 28,
			expectedRawValue:    numContainersPerPod * 280,
		},
		{
			// Regression test for https://github.com/kubernetes/kubernetes/issues/83561.
			name: "scale down: still-running pods being deleted are ignored",
			fixture: calcScenario{
				currentReplicas:      5,
				podReadiness:         []v1.ConditionStatus{v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionFalse, v1.ConditionFalse},
				podPhase:             []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning, v1.PodRunning},
				podDeletionTimestamp: []bool{false, false, false, false, false, true, true},
				container:            "container2",
				resource: &cpuResource{
					requests: cpuRequests(7, "1.0"),
					levels:   [][]int64{{1000, 100}, {1000, 300}, {1000, 500}, {1000, 250}, {1000, 250}},
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 28,
			expectedRawValue:    280,
		},
	}
	for _, tc := range testCases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplicaCalcSetup(t, &tc.fixture)
			if tc.tolerances != nil {
				h.tolerances = *tc.tolerances
			}
			replicas, util, raw, ts, err := h.calc.GetResourceReplicas(
				h.ctx, h.workload, h.tolerances, tc.targetUtilization,
				v1.ResourceCPU, tc.fixture.container,
			)
			assertResourceReplicas(t,
				tc.expectedReplicas, tc.expectedUtilization, tc.expectedRawValue, tc.fixture.timestamp, tc.expectedError,
				replicas, util, raw, ts, err,
			)
		})
	}
}
