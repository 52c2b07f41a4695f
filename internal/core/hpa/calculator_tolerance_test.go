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
// (TestReplicaCalcResourceTolerance, TestReplicaCalcResourceMissingMetrics,
// TestReplicaCalcComputedToleranceAlgImplementation). Changes for Flotilla: the fake metrics
// client is a plain struct that answers as Kubernetes' REST metrics client does (pods by bare
// name unless the scenario keys them by cluster); the pods are passed to the calculator as a
// Workload from the cluster "member1"; the clock is fixed; assertions use the testing package;
// pod-level requests are always honoured (the PodLevelResources gate is on by default), so the
// gate-off case is left out; error messages name the pod's cluster.

package hpa

import (
	"fmt"
	"math"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestReplicaCalcResourceTolerance covers default and configurable tolerance behavior of GetResourceReplicas.
func TestReplicaCalcResourceTolerance(t *testing.T) {
	mixedRequests := []resource.Quantity{resource.MustParse("0.9"), resource.MustParse("1.0"), resource.MustParse("1.1")}
	testCases := []resourceCase{
		{
			name: "within default tolerance",
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: mixedRequests,
					levels:   makePodMetricLevels(1010, 1030, 1020),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    3,
			expectedUtilization: 102,
			expectedRawValue:    numContainersPerPod * 1020,
		},
		{
			name:       "outside 0% tolerance",
			tolerances: &Tolerances{0., 0.},
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: mixedRequests,
					levels:   makePodMetricLevels(909, 1010, 1111),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    4,
			expectedUtilization: 101,
			expectedRawValue:    numContainersPerPod * 1010,
		},
		{
			name:       "within 200% scale-up tolerance",
			tolerances: &Tolerances{defaultTestingTolerance, 2.},
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: mixedRequests,
					levels:   makePodMetricLevels(1890, 1910, 1900),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    3,
			expectedUtilization: 190,
			expectedRawValue:    numContainersPerPod * 1900,
		},
		{
			name:       "outside 8% scale-up tolerance (superfluous scale-down tolerance)",
			tolerances: &Tolerances{2., .08},
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: mixedRequests,
					levels:   makePodMetricLevels(1100, 1080, 1090),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    4,
			expectedUtilization: 109,
			expectedRawValue:    numContainersPerPod * 1090,
		},
		{
			name:       "within 36% scale-down tolerance",
			tolerances: &Tolerances{.36, defaultTestingTolerance},
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: mixedRequests,
					levels:   makePodMetricLevels(660, 640, 650),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    3,
			expectedUtilization: 65,
			expectedRawValue:    numContainersPerPod * 650,
		},
		{
			name:       "outside 34% scale-down tolerance",
			tolerances: &Tolerances{.34, defaultTestingTolerance},
			fixture: calcScenario{
				currentReplicas: 3,
				resource: &cpuResource{
					requests: mixedRequests,
					levels:   makePodMetricLevels(660, 640, 650),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    2,
			expectedUtilization: 65,
			expectedRawValue:    numContainersPerPod * 650,
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

// TestReplicaCalcResourceMissingMetrics covers GetResourceReplicas behavior when metric data is incomplete, superfluous, or otherwise partial and error paths.
func TestReplicaCalcResourceMissingMetrics(t *testing.T) {
	testCases := []resourceCase{
		{
			name: "superfluous metrics counted",
			fixture: calcScenario{
				currentReplicas: 4,
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   makePodMetricLevels(4000, 9500, 3000, 7000, 3200, 2000),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    24,
			expectedUtilization: 587,
			expectedRawValue:    numContainersPerPod * 5875,
		},
		{
			name: "some pods missing metrics scales down",
			fixture: calcScenario{
				currentReplicas: 4,
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   makePodMetricLevels(400, 95),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    3,
			expectedUtilization: 24,
			expectedRawValue:    495, // numContainersPerPod * 247, for sufficiently large values of 247.
		},
		{
			name: "no change: metric equal to target",
			fixture: calcScenario{
				currentReplicas: 2,
				resource: &cpuResource{
					requests: cpuRequests(2, "1.0"),
					levels:   makePodMetricLevels(1000),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    2,
			expectedUtilization: 100,
			expectedRawValue:    numContainersPerPod * 1000,
		},
		{
			name: "no change: metric above target",
			fixture: calcScenario{
				currentReplicas: 2,
				resource: &cpuResource{
					requests: cpuRequests(2, "1.0"),
					levels:   makePodMetricLevels(1900),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    2,
			expectedUtilization: 190,
			expectedRawValue:    numContainersPerPod * 1900,
		},
		{
			name: "no change: metric below target",
			fixture: calcScenario{
				currentReplicas: 2,
				resource: &cpuResource{
					requests: cpuRequests(2, "1.0"),
					levels:   makePodMetricLevels(600),
				},
			},
			targetUtilization:   100,
			expectedReplicas:    2,
			expectedUtilization: 60,
			expectedRawValue:    numContainersPerPod * 600,
		},
		{
			name: "no change: unready pod metric missing",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionTrue},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(100, 450),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 45,
			expectedRawValue:    numContainersPerPod * 450,
		},
		{
			name: "no change: hot-CPU pod metric missing",
			fixture: calcScenario{
				currentReplicas: 3,
				podStartTime:    []metav1.Time{hotCPUCreationTime(), coolCPUCreationTime(), coolCPUCreationTime()},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(100, 450),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 45,
			expectedRawValue:    numContainersPerPod * 450,
		},
		{
			name: "scale up: unready pod metric missing",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionTrue},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(100, 2000),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    4,
			expectedUtilization: 200,
			expectedRawValue:    numContainersPerPod * 2000,
		},
		{
			name: "scale up: hot-CPU pod metric missing",
			fixture: calcScenario{
				currentReplicas: 3,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionTrue},
				podStartTime:    []metav1.Time{hotCPUCreationTime(), coolCPUCreationTime(), coolCPUCreationTime()},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(100, 2000),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    4,
			expectedUtilization: 200,
			expectedRawValue:    numContainersPerPod * 2000,
		},
		{
			name: "scale down: unready pod metric missing",
			fixture: calcScenario{
				currentReplicas: 4,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue},
				resource: &cpuResource{
					requests: cpuRequests(4, "1.0"),
					levels:   makePodMetricLevels(100, 100, 100),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    3,
			expectedUtilization: 10,
			expectedRawValue:    numContainersPerPod * 100,
		},
		{
			name: "scale down: target over 100",
			fixture: calcScenario{
				currentReplicas: 4,
				podReadiness:    []v1.ConditionStatus{v1.ConditionFalse, v1.ConditionTrue, v1.ConditionTrue, v1.ConditionTrue},
				resource: &cpuResource{
					requests: []resource.Quantity{resource.MustParse("1.0"), resource.MustParse("1.0"), resource.MustParse("2.0"), resource.MustParse("2.0")},
					levels:   makePodMetricLevels(200, 100, 100),
				},
			},
			targetUtilization:   300,
			expectedReplicas:    2,
			expectedUtilization: 6,
			expectedRawValue:    numContainersPerPod * 100,
		},
		{
			name: "rolling update with maxSurge: extra pod missing metric",
			fixture: calcScenario{
				currentReplicas: 2,
				podPhase:        []v1.PodPhase{v1.PodRunning, v1.PodRunning, v1.PodRunning},
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(100, 100),
				},
			},
			targetUtilization:   50,
			expectedReplicas:    2,
			expectedUtilization: 10,
			expectedRawValue:    numContainersPerPod * 100,
		},
		{
			name: "disjoint pod and metric names",
			fixture: calcScenario{
				currentReplicas: 1,
				resource: &cpuResource{
					requests: cpuRequests(1, "1.0"),
					levels:   makePodMetricLevels(100),
					podNames: []string{"an-older-pod-name"},
				},
			},
			targetUtilization: 100,
			expectedError:     fmt.Errorf("no metrics returned matched known pods"),
		},
		{
			name: "no metrics returned from metrics API",
			fixture: calcScenario{
				currentReplicas: 4,
				resource: &cpuResource{
					requests: cpuRequests(3, "1.0"),
					levels:   makePodMetricLevels(),
				},
			},
			targetUtilization: 100,
			expectedError:     fmt.Errorf("unable to get metrics for resource cpu: no metrics returned from resource metrics API"),
		},
		{
			name: "missing CPU request on container",
			fixture: calcScenario{
				currentReplicas: 1,
				resource: &cpuResource{
					requests: []resource.Quantity{},
					levels:   makePodMetricLevels(200),
				},
			},
			targetUtilization: 100,
			expectedError:     fmt.Errorf("missing request for"),
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

// TestComputedToleranceAlgImplementation is a regression test which
// back-calculates a minimal percentage for downscaling based on a small percentage
// increase in pod utilization which is calibrated against the tolerance value.
func TestReplicaCalcComputedToleranceAlgImplementation(t *testing.T) {

	startPods := int32(10)
	// 150 mCPU per pod.
	totalUsedCPUOfAllPods := int64(startPods * 150)
	// Each pod starts out asking for 2X what is really needed.
	// This means we will have a 50% ratio of used/requested
	totalRequestedCPUOfAllPods := int32(2 * totalUsedCPUOfAllPods)
	requestedToUsed := float64(totalRequestedCPUOfAllPods / int32(totalUsedCPUOfAllPods))
	// Spread the amount we ask over 10 pods.  We can add some jitter later in reportedLevels.
	perPodRequested := totalRequestedCPUOfAllPods / startPods

	// Force a minimal scaling event by satisfying  (tolerance < 1 - resourcesUsedRatio).
	target := math.Abs(1/(requestedToUsed*(1-defaultTestingTolerance))) + .01
	finalCPUPercentTarget := int32(target * 100)
	resourcesUsedRatio := float64(totalUsedCPUOfAllPods) / float64(float64(totalRequestedCPUOfAllPods)*target)

	// i.e. .60 * 20 -> scaled down expectation.
	finalPods := int32(math.Ceil(resourcesUsedRatio * float64(startPods)))

	// To breach tolerance we will create a utilization ratio difference of tolerance to usageRatioToleranceValue)
	buildFixture := func() calcScenario {
		return calcScenario{
			currentReplicas: startPods,
			resource: &cpuResource{
				levels: makePodMetricLevels(
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
					totalUsedCPUOfAllPods/10,
				),
				requests: []resource.Quantity{
					resource.MustParse(fmt.Sprint(perPodRequested+100) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested-100) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested+10) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested-10) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested+2) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested-2) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested+1) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested-1) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested) + "m"),
					resource.MustParse(fmt.Sprint(perPodRequested) + "m"),
				},
			},
		}
	}

	expectedUtilization := int32(totalUsedCPUOfAllPods*100) / totalRequestedCPUOfAllPods
	expectedRawValue := numContainersPerPod * totalUsedCPUOfAllPods / 10
	f1 := buildFixture()
	h1 := newReplicaCalcSetup(t, &f1)
	replicas, util, raw, ts, err := h1.calc.GetResourceReplicas(
		h1.ctx, h1.workload, h1.tolerances, finalCPUPercentTarget,
		v1.ResourceCPU, f1.container,
	)
	assertResourceReplicas(t,
		finalPods, expectedUtilization, expectedRawValue, f1.timestamp, nil,
		replicas, util, raw, ts, err,
	)

	// Reuse the data structure above, now testing "unscaling".
	// Now, we test that no scaling happens if we are in a very close margin to the tolerance
	target = math.Abs(1/(requestedToUsed*(1-defaultTestingTolerance))) + .004
	finalCPUPercentTarget = int32(target * 100)

	f2 := buildFixture()
	h2 := newReplicaCalcSetup(t, &f2)
	replicas, util, raw, ts, err = h2.calc.GetResourceReplicas(
		h2.ctx, h2.workload, h2.tolerances, finalCPUPercentTarget,
		v1.ResourceCPU, f2.container,
	)
	assertResourceReplicas(t,
		startPods, expectedUtilization, expectedRawValue, f2.timestamp, nil,
		replicas, util, raw, ts, err,
	)
}
