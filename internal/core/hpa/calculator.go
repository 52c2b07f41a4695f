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

// Ported from k8s.io/kubernetes v1.37.2, pkg/controller/podautoscaler/replica_calculator.go
// (Tolerances, ReplicaCalculator and its Get*Replicas methods). Changes for Flotilla: the pods
// are passed in (Workload.Pods, gathered from every member cluster) instead of listed from an
// informer; every proposal computed from a count of pods or samples is divided by
// Workload.Calibration, as Karmada's FederatedHPA does for Duplicated placements; the clock is
// injected; the Tolerances fields are exported so the controller can build them.

package hpa

import (
	"context"
	"fmt"
	"math"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	"k8s.io/utils/clock"
)

// MetricsClient reads metric values for the calculator. It is the Kubernetes HPA's own
// interface, so metricsclient.NewRESTMetricsClient on the control plane's metrics.k8s.io,
// custom.metrics.k8s.io and external.metrics.k8s.io APIs fits as it is. Values are
// milli-units. The pod metrics (GetResourceMetric, GetRawMetric) are keyed by PodKey when the
// client knows each pod's cluster (the adapter's resource.karmada.io/query-from-cluster
// annotation), else by bare pod name; see keyByPod for how bare names are matched.
type MetricsClient = metricsclient.MetricsClient

// Tolerances are how far below (ScaleDown) and above (ScaleUp) 1.0 the ratio of a metric's
// current value to its target may be before a new replica count is proposed, as fractions
// (0.1 is 10%). Config.Tolerance applies to both unless the FederatedHPA's
// behavior.scaleDown.tolerance or behavior.scaleUp.tolerance overrides it (TolerancesFor).
type Tolerances struct {
	ScaleDown float64
	ScaleUp   float64
}

// String renders the tolerances as percentages, for logs.
func (t Tolerances) String() string {
	return fmt.Sprintf("[down:%.1f%%, up:%.1f%%]", t.ScaleDown*100., t.ScaleUp*100.)
}

func (t Tolerances) isWithin(usageRatio float64) bool {
	return (1.0-t.ScaleDown) <= usageRatio && usageRatio <= (1.0+t.ScaleUp)
}

// TolerancesFor returns the tolerances of a FederatedHPA with the given behavior (nil for
// none): tolerance for both directions, each replaced by the behavior's own tolerance for
// that direction when set (the HPA's configurable tolerance, GA in Kubernetes 1.37).
func TolerancesFor(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, tolerance float64) Tolerances {
	t := Tolerances{ScaleDown: tolerance, ScaleUp: tolerance}
	if behavior == nil {
		return t
	}
	if behavior.ScaleDown != nil && behavior.ScaleDown.Tolerance != nil {
		t.ScaleDown = behavior.ScaleDown.Tolerance.AsApproximateFloat64()
	}
	if behavior.ScaleUp != nil && behavior.ScaleUp.Tolerance != nil {
		t.ScaleUp = behavior.ScaleUp.Tolerance.AsApproximateFloat64()
	}
	return t
}

// Workload is what the controller observed of the scaled resource template and its pods at
// one sync.
type Workload struct {
	// Namespace is the FederatedHPA's (and the template's) namespace.
	Namespace string
	// Selector selects the workload's pods: the template's scale status.selector. Required;
	// the metrics client queries with it.
	Selector labels.Selector
	// Pods are the pods Selector matches in every member cluster the workload is scheduled to.
	Pods []Pod
	// SpecReplicas is the template's scale spec.replicas: the current replica count.
	SpecReplicas int32
	// StatusReplicas is the template's scale status.replicas, the replicas the members report,
	// summed (so, for a Duplicated placement, over every copy).
	StatusReplicas int32
	// Calibration is the sum of the members' spec.replicas divided by the template's
	// spec.replicas: 1 for a Divided placement, the number of clusters for a Duplicated one.
	// Proposals computed from counts of pods or samples, which cover every copy, are divided
	// by it so they count template replicas. Zero, negative, infinite or NaN counts as 1.
	Calibration float64
}

// calibrationOrOne returns Calibration, or 1 when it is not a positive number.
func (w Workload) calibrationOrOne() float64 {
	if !(w.Calibration > 0) || math.IsInf(w.Calibration, 1) {
		return 1
	}
	return w.Calibration
}

// calibrate returns ceil(x / Calibration), capped at math.MaxInt32.
func (w Workload) calibrate(x float64) int32 { return ceilInt32(x / w.calibrationOrOne()) }

// ceilInt32 returns ceil(x), capped at math.MaxInt32.
func ceilInt32(x float64) int32 {
	v := math.Ceil(x)
	if v > math.MaxInt32 {
		return math.MaxInt32
	}
	return int32(v)
}

// ReplicaCalculator computes the replica count one metric proposes, as the HPA's replica
// calculator does, over the pods of every member cluster.
type ReplicaCalculator struct {
	metrics                       MetricsClient
	cpuInitializationPeriod       time.Duration
	delayOfInitialReadinessStatus time.Duration
	clock                         clock.PassiveClock
}

// NewReplicaCalculator returns a calculator reading metrics from metrics, with the
// CPU initialization period and initial readiness delay of Config, and clk as the time
// source (nil for the real clock).
func NewReplicaCalculator(metrics MetricsClient, cpuInitializationPeriod, initialReadinessDelay time.Duration, clk clock.PassiveClock) *ReplicaCalculator {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &ReplicaCalculator{
		metrics:                       metrics,
		cpuInitializationPeriod:       cpuInitializationPeriod,
		delayOfInitialReadinessStatus: initialReadinessDelay,
		clock:                         clk,
	}
}

// GetResourceReplicas proposes a replica count for a target average utilization (percent of
// the request) of resource over the workload's pods, or of one container when container is
// set. It also returns the current utilization, the raw average value in milli-units and the
// metrics' timestamp. Missing and unready pods are handled as the HPA does: they damp a
// scale-up and a scale-down, and can cancel one. Errors: the metrics cannot be had, no pod or
// no ready pod's metric, a pod without the request.
func (c *ReplicaCalculator) GetResourceReplicas(ctx context.Context, w Workload, tolerances Tolerances, targetUtilization int32, resource corev1.ResourceName, container string) (replicaCount int32, utilization int32, rawUtilization int64, timestamp time.Time, err error) {
	metrics, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, w.Namespace, w.Selector, container)
	if err != nil {
		return 0, 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %w", resource, err)
	}
	if len(w.Pods) == 0 {
		return 0, 0, 0, time.Time{}, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	metrics = keyByPod(metrics, w.Pods)

	readyPodCount, unreadyPods, missingPods, ignoredPods := groupPods(w.Pods, metrics, resource, c.cpuInitializationPeriod, c.delayOfInitialReadinessStatus, c.clock.Now())
	removeMetricsForPods(metrics, ignoredPods)
	removeMetricsForPods(metrics, unreadyPods)
	if len(metrics) == 0 {
		return 0, 0, 0, time.Time{}, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}

	requests, err := calculateRequests(w.Pods, container, resource)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}

	usageRatio, utilization, rawUtilization, err := metricsclient.GetResourceUtilizationRatio(metrics, requests, targetUtilization)
	if err != nil {
		return 0, 0, 0, time.Time{}, err
	}

	scaleUpWithUnready := len(unreadyPods) > 0 && usageRatio > 1.0
	if !scaleUpWithUnready && len(missingPods) == 0 {
		if tolerances.isWithin(usageRatio) {
			// return the current replicas if the change would be too small
			return w.SpecReplicas, utilization, rawUtilization, timestamp, nil
		}

		// if we don't have any unready or missing pods, we can calculate the new replica count now
		return w.calibrate(usageRatio * float64(readyPodCount)), utilization, rawUtilization, timestamp, nil
	}

	if len(missingPods) > 0 {
		if usageRatio < 1.0 {
			// on a scale-down, treat missing pods as using 100% (all) of the resource request
			// or the utilization target for targets higher than 100%
			fallbackUtilization := int64(max(100, targetUtilization))
			for podName := range missingPods {
				metrics[podName] = metricsclient.PodMetric{Value: requests[podName] * fallbackUtilization / 100}
			}
		} else if usageRatio > 1.0 {
			// on a scale-up, treat missing pods as using 0% of the resource request
			for podName := range missingPods {
				metrics[podName] = metricsclient.PodMetric{Value: 0}
			}
		}
	}

	if scaleUpWithUnready {
		// on a scale-up, treat unready pods as using 0% of the resource request
		for podName := range unreadyPods {
			metrics[podName] = metricsclient.PodMetric{Value: 0}
		}
	}

	// re-run the utilization calculation with our new numbers
	newUsageRatio, _, _, err := metricsclient.GetResourceUtilizationRatio(metrics, requests, targetUtilization)
	if err != nil {
		return 0, utilization, rawUtilization, time.Time{}, err
	}

	if tolerances.isWithin(newUsageRatio) || (usageRatio < 1.0 && newUsageRatio > 1.0) || (usageRatio > 1.0 && newUsageRatio < 1.0) {
		// return the current replicas if the change would be too small,
		// or if the new usage ratio would cause a change in scale direction
		return w.SpecReplicas, utilization, rawUtilization, timestamp, nil
	}

	newReplicas := w.calibrate(newUsageRatio * float64(len(metrics)))
	if (newUsageRatio < 1.0 && newReplicas > w.SpecReplicas) || (newUsageRatio > 1.0 && newReplicas < w.SpecReplicas) {
		// return the current replicas if the change of metrics length would cause a change in scale direction
		return w.SpecReplicas, utilization, rawUtilization, timestamp, nil
	}

	// return the result, where the number of replicas considered is
	// however many replicas factored into our calculation
	return newReplicas, utilization, rawUtilization, timestamp, nil
}

// GetRawResourceReplicas proposes a replica count for a target average value of resource per
// pod (or per named container), in milli-units, and returns the current average. Errors as
// GetResourceReplicas.
func (c *ReplicaCalculator) GetRawResourceReplicas(ctx context.Context, w Workload, tolerances Tolerances, targetUsage int64, resource corev1.ResourceName, container string) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	metrics, timestamp, err := c.metrics.GetResourceMetric(ctx, resource, w.Namespace, w.Selector, container)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metrics for resource %s: %w", resource, err)
	}

	replicaCount, usage, err = c.calcPlainMetricReplicas(metrics, w, tolerances, targetUsage, resource)
	return replicaCount, usage, timestamp, err
}

// GetMetricReplicas proposes a replica count for a target average value per pod of the
// custom metric metricName (a Pods metric), in milli-units, and returns the current average.
// metricSelector narrows the metric's series (nil for all). Pods that share a name across
// clusters are asked for cluster by cluster (rawMetric). Errors: the metric cannot be had,
// no pod or no ready pod's sample.
func (c *ReplicaCalculator) GetMetricReplicas(w Workload, tolerances Tolerances, targetUsage int64, metricName string, metricSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	metrics, timestamp, err := c.rawMetric(metricName, w, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s: %w", metricName, err)
	}

	replicaCount, usage, err = c.calcPlainMetricReplicas(metrics, w, tolerances, targetUsage, "")
	return replicaCount, usage, timestamp, err
}

// calcPlainMetricReplicas calculates the desired replicas for plain (i.e. non-utilization percentage) metrics.
func (c *ReplicaCalculator) calcPlainMetricReplicas(metrics metricsclient.PodMetricsInfo, w Workload, tolerances Tolerances, targetUsage int64, resource corev1.ResourceName) (replicaCount int32, usage int64, err error) {
	if len(w.Pods) == 0 {
		return 0, 0, fmt.Errorf("no pods returned by selector while calculating replica count")
	}
	metrics = keyByPod(metrics, w.Pods)

	readyPodCount, unreadyPods, missingPods, ignoredPods := groupPods(w.Pods, metrics, resource, c.cpuInitializationPeriod, c.delayOfInitialReadinessStatus, c.clock.Now())
	removeMetricsForPods(metrics, ignoredPods)
	removeMetricsForPods(metrics, unreadyPods)

	if len(metrics) == 0 {
		return 0, 0, fmt.Errorf("did not receive metrics for targeted pods (pods might be unready)")
	}

	usageRatio, usage := metricsclient.GetMetricUsageRatio(metrics, targetUsage)

	scaleUpWithUnready := len(unreadyPods) > 0 && usageRatio > 1.0

	if !scaleUpWithUnready && len(missingPods) == 0 {
		if tolerances.isWithin(usageRatio) {
			// return the current replicas if the change would be too small
			return w.SpecReplicas, usage, nil
		}

		// if we don't have any unready or missing pods, we can calculate the new replica count now
		return w.calibrate(usageRatio * float64(readyPodCount)), usage, nil
	}

	if len(missingPods) > 0 {
		if usageRatio < 1.0 {
			// on a scale-down, treat missing pods as using exactly the target amount
			for podName := range missingPods {
				metrics[podName] = metricsclient.PodMetric{Value: targetUsage}
			}
		} else if usageRatio > 1.0 {
			// on a scale-up, treat missing pods as using 0% of the resource request
			for podName := range missingPods {
				metrics[podName] = metricsclient.PodMetric{Value: 0}
			}
		}
	}

	if scaleUpWithUnready {
		// on a scale-up, treat unready pods as using 0% of the resource request
		for podName := range unreadyPods {
			metrics[podName] = metricsclient.PodMetric{Value: 0}
		}
	}

	// re-run the usage calculation with our new numbers
	newUsageRatio, _ := metricsclient.GetMetricUsageRatio(metrics, targetUsage)

	if tolerances.isWithin(newUsageRatio) || (usageRatio < 1.0 && newUsageRatio > 1.0) || (usageRatio > 1.0 && newUsageRatio < 1.0) {
		// return the current replicas if the change would be too small,
		// or if the new usage ratio would cause a change in scale direction
		return w.SpecReplicas, usage, nil
	}

	newReplicas := w.calibrate(newUsageRatio * float64(len(metrics)))
	if (newUsageRatio < 1.0 && newReplicas > w.SpecReplicas) || (newUsageRatio > 1.0 && newReplicas < w.SpecReplicas) {
		// return the current replicas if the change of metrics length would cause a change in scale direction
		return w.SpecReplicas, usage, nil
	}

	// return the result, where the number of replicas considered is
	// however many replicas factored into our calculation
	return newReplicas, usage, nil
}

// GetObjectMetricReplicas proposes a replica count for a target value of the metric
// metricName of one object (an Object metric with a Value target), in milli-units, and
// returns the current value. The proposal scales the running, Ready pods by the ratio of
// value to target. Errors: the metric cannot be had, no pods.
func (c *ReplicaCalculator) GetObjectMetricReplicas(w Workload, tolerances Tolerances, targetUsage int64, metricName string, objectRef *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	usage, timestamp, err = c.metrics.GetObjectMetric(metricName, w.Namespace, objectRef, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", metricName, objectRef.Kind, w.Namespace, objectRef.Name, err)
	}

	usageRatio := float64(usage) / float64(targetUsage)
	replicaCount, err = getUsageRatioReplicaCount(w, tolerances, usageRatio)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	return replicaCount, usage, timestamp, nil
}

// getUsageRatioReplicaCount calculates the desired replica count based on usageRatio and ready pods count.
// For currentReplicas=0 doesn't take into account ready pods count and tolerance to support scaling to zero pods.
func getUsageRatioReplicaCount(w Workload, tolerances Tolerances, usageRatio float64) (int32, error) {
	if w.SpecReplicas == 0 {
		// Scale to zero or n pods depending on usageRatio
		return ceilInt32(usageRatio), nil
	}
	if tolerances.isWithin(usageRatio) {
		// return the current replicas if the change would be too small
		return w.SpecReplicas, nil
	}
	ready, err := countReadyPods(w.Pods)
	if err != nil {
		return 0, fmt.Errorf("unable to calculate ready pods: %w", err)
	}
	return w.calibrate(usageRatio * float64(ready)), nil
}

// GetObjectPerPodMetricReplicas proposes a replica count for a target average value per pod
// of the metric metricName of one object (an Object metric with an AverageValue target), in
// milli-units, and returns the current value divided by the replicas the template's status
// reports. The proposal is the object's value over the target, in template replicas; within
// the tolerance it is the replicas the status reports, in template replicas. Errors: the
// metric cannot be had.
func (c *ReplicaCalculator) GetObjectPerPodMetricReplicas(w Workload, tolerances Tolerances, targetAverageUsage int64, metricName string, objectRef *autoscalingv2.CrossVersionObjectReference, metricSelector labels.Selector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	usage, timestamp, err = c.metrics.GetObjectMetric(metricName, w.Namespace, objectRef, metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get metric %s on %s %s/%s: %w", metricName, objectRef.Kind, w.Namespace, objectRef.Name, err)
	}

	replicaCount = w.calibrate(float64(w.StatusReplicas))
	usageRatio := float64(usage) / (float64(targetAverageUsage) * float64(w.StatusReplicas))
	if !tolerances.isWithin(usageRatio) {
		// update number of replicas if change is large enough
		replicaCount = w.calibrate(float64(usage) / float64(targetAverageUsage))
	}
	usage = int64(math.Ceil(float64(usage) / float64(max(w.StatusReplicas, 1))))
	return replicaCount, usage, timestamp, nil
}

// GetExternalMetricReplicas proposes a replica count for a target total value of the
// external metric metricName (an External metric with a Value target), in milli-units, and
// returns the current total: the sum of the series metricSelector selects. The proposal
// scales the running, Ready pods by the ratio of total to target. Errors: the selector does
// not convert, the metric cannot be had, no pods.
func (c *ReplicaCalculator) GetExternalMetricReplicas(w Workload, tolerances Tolerances, targetUsage int64, metricName string, metricSelector *metav1.LabelSelector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	metricLabelSelector, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	metrics, timestamp, err := c.metrics.GetExternalMetric(metricName, w.Namespace, metricLabelSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %w", w.Namespace, metricName, metricSelector, err)
	}

	usage = sumSaturating(metrics)
	usageRatio := float64(usage) / float64(targetUsage)
	replicaCount, err = getUsageRatioReplicaCount(w, tolerances, usageRatio)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	return replicaCount, usage, timestamp, nil
}

// GetExternalPerPodMetricReplicas proposes a replica count for a target average value per
// pod of the external metric metricName (an External metric with an AverageValue target), in
// milli-units, and returns the total divided by the replicas the template's status reports.
// The proposal is the total over the target, in template replicas; within the tolerance it is
// the replicas the status reports, in template replicas. Errors as GetExternalMetricReplicas.
func (c *ReplicaCalculator) GetExternalPerPodMetricReplicas(w Workload, tolerances Tolerances, targetUsagePerPod int64, metricName string, metricSelector *metav1.LabelSelector) (replicaCount int32, usage int64, timestamp time.Time, err error) {
	metricLabelSelector, err := metav1.LabelSelectorAsSelector(metricSelector)
	if err != nil {
		return 0, 0, time.Time{}, err
	}
	metrics, timestamp, err := c.metrics.GetExternalMetric(metricName, w.Namespace, metricLabelSelector)
	if err != nil {
		return 0, 0, time.Time{}, fmt.Errorf("unable to get external metric %s/%s/%+v: %w", w.Namespace, metricName, metricSelector, err)
	}
	usage = sumSaturating(metrics)

	replicaCount = w.calibrate(float64(w.StatusReplicas))
	usageRatio := float64(usage) / (float64(targetUsagePerPod) * float64(w.StatusReplicas))
	if !tolerances.isWithin(usageRatio) {
		// update number of replicas if the change is large enough
		replicaCount = w.calibrate(float64(usage) / float64(targetUsagePerPod))
	}
	// Handle usage overflow cases
	if float64(usage) >= float64(math.MaxInt64) {
		usage = math.MaxInt64
	} else {
		usage = int64(math.Ceil(float64(usage) / float64(max(w.StatusReplicas, 1))))
	}
	return replicaCount, usage, timestamp, nil
}

// sumSaturating adds the values, saturating at math.MaxInt64 on overflow.
func sumSaturating(values []int64) int64 {
	var sum int64
	for _, v := range values {
		if v > 0 && sum > math.MaxInt64-v {
			return math.MaxInt64
		}
		sum += v
	}
	return sum
}
