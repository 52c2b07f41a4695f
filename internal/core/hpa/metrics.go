/*
Copyright 2015 The Kubernetes Authors.

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

// Ported from k8s.io/kubernetes v1.37.2, pkg/controller/podautoscaler/horizontal.go
// (computeReplicasForMetrics, computeReplicasForMetric, the computeStatusFor*Metric methods,
// buildQuantity). Changes for Flotilla: the functions are methods of the calculator instead of
// the controller and return the failures (reason and error) instead of recording events and
// setting conditions on the object; a metric whose type names a source field that is not set
// is a failure, not a panic; an Object metric with an AverageValue target is described as
// "<Kind> metric <name>" (Kubernetes calls it an external metric).

package hpa

import (
	"context"
	"errors"
	"fmt"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// MetricFailure is one metric of spec.metrics whose proposal could not be computed.
type MetricFailure struct {
	// Index is the metric's position in spec.metrics.
	Index int
	// Reason is the HPA's reason for a failure of the metric's type, such as
	// FailedGetResourceMetric: the reason of the Warning event that reports it, and of the
	// ScalingActive condition when no proposal can be used.
	Reason string
	// Err says what failed.
	Err error
}

// MetricsProposal is what the metrics of one FederatedHPA propose at one sync.
type MetricsProposal struct {
	// Replicas is the largest proposal among the metrics that could be computed, in template
	// replicas.
	Replicas int32
	// Metric describes the metric that made the largest proposal, as the HPA words it (for
	// example "cpu resource utilization (percentage of request)"), for the rescale event.
	Metric string
	// Timestamp is the time of that metric's sample.
	Timestamp time.Time
	// Statuses are status.currentMetrics: one per metric, in spec order; a metric that failed
	// has an empty entry, as with the HPA.
	Statuses []autoscalingv2.MetricStatus
	// Failures are the metrics that could not be computed, in spec order; each one deserves a
	// Warning event with its reason.
	Failures []MetricFailure
	// Usable tells whether Replicas may be acted on. It is false when every metric failed,
	// and when some failed and the others would scale down: like the HPA, the autoscaler does
	// not scale down on part of its metrics.
	Usable bool
	// ScalingActive is the ScalingActive condition to set when Usable (True,
	// ValidMetricFound), or the first failure's (False) when not.
	ScalingActive autoscalingv2.HorizontalPodAutoscalerCondition
}

// ComputeReplicasForMetrics computes every metric's proposal for workload w and keeps the
// largest, as the HPA does. The error is non-nil when any metric failed; even then the
// proposal may be Usable (some metrics failed, the others scale up or hold).
func (c *ReplicaCalculator) ComputeReplicasForMetrics(ctx context.Context, w Workload, tolerances Tolerances, metricSpecs []autoscalingv2.MetricSpec) (MetricsProposal, error) {
	p := MetricsProposal{Statuses: make([]autoscalingv2.MetricStatus, len(metricSpecs))}
	if len(metricSpecs) == 0 {
		// SetDefaults gives every FederatedHPA a metric; a caller that skipped it gets no proposal.
		err := errors.New("no metrics to compute a replica count from")
		p.ScalingActive = condition(autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.InvalidMetricSourceTypeReason,
			"the HPA was unable to compute the replica count: %v", err)
		return p, err
	}
	for i, spec := range metricSpecs {
		replicas, metric, timestamp, status, reason, err := c.computeReplicasForMetric(ctx, w, tolerances, spec)
		if err != nil {
			p.Failures = append(p.Failures, MetricFailure{Index: i, Reason: reason, Err: err})
			continue
		}
		p.Statuses[i] = status
		if p.Replicas == 0 || replicas > p.Replicas {
			p.Replicas, p.Metric, p.Timestamp = replicas, metric, timestamp
		}
	}

	var err error
	if len(p.Failures) > 0 {
		first := p.Failures[0]
		err = fmt.Errorf("invalid metrics (%v invalid out of %v), first error is: %w", len(p.Failures), len(metricSpecs), first.Err)
		p.ScalingActive = condition(autoscalingv2.ScalingActive, corev1.ConditionFalse, first.Reason,
			"the HPA was unable to compute the replica count: %v", first.Err)
	}
	// If all metrics are invalid or some are invalid and we would scale down, the proposal
	// cannot be used; otherwise we are going to scale.
	if len(p.Failures) >= len(metricSpecs) || (len(p.Failures) > 0 && p.Replicas < w.SpecReplicas) {
		return p, err
	}
	p.Usable = true
	p.ScalingActive = condition(autoscalingv2.ScalingActive, corev1.ConditionTrue, autoscalingv1alpha1.ValidMetricFoundReason,
		"the HPA was able to successfully calculate a replica count from %s", p.Metric)
	return p, err
}

// errMissingSource is the failure of a metric whose type names a source field that is unset.
var errMissingSource = errors.New("the metric's type names a source field that is not set")

// computeReplicasForMetric computes one metric's proposal and status, or the reason and
// error of its failure.
func (c *ReplicaCalculator) computeReplicasForMetric(ctx context.Context, w Workload, tolerances Tolerances, spec autoscalingv2.MetricSpec) (replicas int32, metric string, timestamp time.Time, status autoscalingv2.MetricStatus, reason string, err error) {
	switch spec.Type {
	case autoscalingv2.ObjectMetricSourceType:
		if spec.Object == nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetObjectMetricReason, fmt.Errorf("failed to get object metric value: %w", errMissingSource)
		}
		replicas, timestamp, metric, status, err = c.computeStatusForObjectMetric(w, tolerances, spec.Object)
		if err != nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetObjectMetricReason, fmt.Errorf("failed to get object metric value: %w", err)
		}
	case autoscalingv2.PodsMetricSourceType:
		if spec.Pods == nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetPodsMetricReason, fmt.Errorf("failed to get pods metric value: %w", errMissingSource)
		}
		replicas, timestamp, metric, status, err = c.computeStatusForPodsMetric(w, tolerances, spec.Pods)
		if err != nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetPodsMetricReason, fmt.Errorf("failed to get pods metric value: %w", err)
		}
	case autoscalingv2.ResourceMetricSourceType:
		if spec.Resource == nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetResourceMetricReason, fmt.Errorf("failed to get resource metric value: %w", errMissingSource)
		}
		var current *autoscalingv2.MetricValueStatus
		replicas, current, timestamp, metric, err = c.computeStatusForResourceMetricGeneric(ctx, w, tolerances, spec.Resource.Target, spec.Resource.Name, "", spec.Type)
		if err != nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetResourceMetricReason, fmt.Errorf("failed to get %s resource metric value: %w", spec.Resource.Name, err)
		}
		status = autoscalingv2.MetricStatus{Type: spec.Type, Resource: &autoscalingv2.ResourceMetricStatus{Name: spec.Resource.Name, Current: *current}}
	case autoscalingv2.ContainerResourceMetricSourceType:
		if spec.ContainerResource == nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetContainerResourceMetricReason, fmt.Errorf("failed to get container resource metric value: %w", errMissingSource)
		}
		cr := spec.ContainerResource
		var current *autoscalingv2.MetricValueStatus
		replicas, current, timestamp, metric, err = c.computeStatusForResourceMetricGeneric(ctx, w, tolerances, cr.Target, cr.Name, cr.Container, spec.Type)
		if err != nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetContainerResourceMetricReason, fmt.Errorf("failed to get %s container metric value: %w", cr.Container, err)
		}
		status = autoscalingv2.MetricStatus{Type: spec.Type, ContainerResource: &autoscalingv2.ContainerResourceMetricStatus{Name: cr.Name, Container: cr.Container, Current: *current}}
	case autoscalingv2.ExternalMetricSourceType:
		if spec.External == nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetExternalMetricReason, fmt.Errorf("failed to get external metric value: %w", errMissingSource)
		}
		replicas, timestamp, metric, status, err = c.computeStatusForExternalMetric(w, tolerances, spec.External)
		if err != nil {
			return 0, "", time.Time{}, status, autoscalingv1alpha1.FailedGetExternalMetricReason, fmt.Errorf("failed to get %s external metric value: %w", spec.External.Metric.Name, err)
		}
	default:
		// The CRD refuses unknown types at apply; an object stored before that rule lands here.
		return 0, "", time.Time{}, status, autoscalingv1alpha1.InvalidMetricSourceTypeReason, fmt.Errorf("unknown metric source type %q", string(spec.Type))
	}
	return replicas, metric, timestamp, status, "", nil
}

// computeStatusForObjectMetric computes the proposal of an Object metric.
func (c *ReplicaCalculator) computeStatusForObjectMetric(w Workload, tolerances Tolerances, source *autoscalingv2.ObjectMetricSource) (replicas int32, timestamp time.Time, metric string, status autoscalingv2.MetricStatus, err error) {
	metricSelector, err := metav1.LabelSelectorAsSelector(source.Metric.Selector)
	if err != nil {
		return 0, time.Time{}, "", status, err
	}
	objStatus := &autoscalingv2.ObjectMetricStatus{
		DescribedObject: source.DescribedObject,
		Metric:          autoscalingv2.MetricIdentifier{Name: source.Metric.Name, Selector: source.Metric.Selector},
	}
	metric = fmt.Sprintf("%s metric %s", source.DescribedObject.Kind, source.Metric.Name)
	var usage int64
	switch target := source.Target; {
	case target.Type == autoscalingv2.ValueMetricType && target.Value != nil:
		replicas, usage, timestamp, err = c.GetObjectMetricReplicas(w, tolerances, target.Value.MilliValue(), source.Metric.Name, &source.DescribedObject, metricSelector)
		if err != nil {
			return 0, time.Time{}, "", status, err
		}
		objStatus.Current.Value = resource.NewMilliQuantity(usage, resource.DecimalSI)
	case target.Type == autoscalingv2.AverageValueMetricType && target.AverageValue != nil:
		replicas, usage, timestamp, err = c.GetObjectPerPodMetricReplicas(w, tolerances, target.AverageValue.MilliValue(), source.Metric.Name, &source.DescribedObject, metricSelector)
		if err != nil {
			return 0, time.Time{}, "", status, fmt.Errorf("failed to get %s object metric: %w", source.Metric.Name, err)
		}
		objStatus.Current.AverageValue = resource.NewMilliQuantity(usage, resource.DecimalSI)
	default:
		return 0, time.Time{}, "", status, errors.New("invalid object metric source: neither a value target nor an average value target was set")
	}
	return replicas, timestamp, metric, autoscalingv2.MetricStatus{Type: autoscalingv2.ObjectMetricSourceType, Object: objStatus}, nil
}

// computeStatusForPodsMetric computes the proposal of a Pods metric.
func (c *ReplicaCalculator) computeStatusForPodsMetric(w Workload, tolerances Tolerances, source *autoscalingv2.PodsMetricSource) (replicas int32, timestamp time.Time, metric string, status autoscalingv2.MetricStatus, err error) {
	metricSelector, err := metav1.LabelSelectorAsSelector(source.Metric.Selector)
	if err != nil {
		return 0, time.Time{}, "", status, err
	}
	if source.Target.AverageValue == nil {
		return 0, time.Time{}, "", status, errors.New("invalid pods metric source: no average value target was set")
	}
	replicas, usage, timestamp, err := c.GetMetricReplicas(w, tolerances, source.Target.AverageValue.MilliValue(), source.Metric.Name, metricSelector)
	if err != nil {
		return 0, timestamp, "", status, err
	}
	status = autoscalingv2.MetricStatus{
		Type: autoscalingv2.PodsMetricSourceType,
		Pods: &autoscalingv2.PodsMetricStatus{
			Metric:  autoscalingv2.MetricIdentifier{Name: source.Metric.Name, Selector: source.Metric.Selector},
			Current: autoscalingv2.MetricValueStatus{AverageValue: resource.NewMilliQuantity(usage, resource.DecimalSI)},
		},
	}
	return replicas, timestamp, fmt.Sprintf("pods metric %s", source.Metric.Name), status, nil
}

// computeStatusForResourceMetricGeneric computes the proposal of a Resource or
// ContainerResource metric (container set).
func (c *ReplicaCalculator) computeStatusForResourceMetricGeneric(ctx context.Context, w Workload, tolerances Tolerances, target autoscalingv2.MetricTarget,
	resourceName corev1.ResourceName, container string, sourceType autoscalingv2.MetricSourceType) (replicas int32, current *autoscalingv2.MetricValueStatus, timestamp time.Time, metric string, err error) {
	if target.AverageValue != nil {
		var rawProposal int64
		replicas, rawProposal, timestamp, err = c.GetRawResourceReplicas(ctx, w, tolerances, target.AverageValue.MilliValue(), resourceName, container)
		if err != nil {
			return 0, nil, time.Time{}, "", fmt.Errorf("failed to get %s usage: %w", resourceName, err)
		}
		quantity := buildQuantity(resourceName, rawProposal)
		return replicas, &autoscalingv2.MetricValueStatus{AverageValue: &quantity}, timestamp, fmt.Sprintf("%s resource", resourceName.String()), nil
	}

	if target.AverageUtilization == nil {
		return 0, nil, time.Time{}, "", errors.New("invalid resource metric source: neither an average utilization target nor an average value (usage) target was set")
	}

	replicas, percentage, rawProposal, timestamp, err := c.GetResourceReplicas(ctx, w, tolerances, *target.AverageUtilization, resourceName, container)
	if err != nil {
		return 0, nil, time.Time{}, "", fmt.Errorf("failed to get %s utilization: %w", resourceName, err)
	}

	metric = fmt.Sprintf("%s resource utilization (percentage of request)", resourceName)
	if sourceType == autoscalingv2.ContainerResourceMetricSourceType {
		metric = fmt.Sprintf("%s container resource utilization (percentage of request)", resourceName)
	}
	quantity := buildQuantity(resourceName, rawProposal)
	return replicas, &autoscalingv2.MetricValueStatus{AverageUtilization: &percentage, AverageValue: &quantity}, timestamp, metric, nil
}

// buildQuantity creates a resource.Quantity for HPA metrics based on the resource type: for
// memory, rawProposal is in milli-bytes formatted as BinarySI (as metrics-server does); for
// CPU and other resources, in milli-units formatted as DecimalSI.
func buildQuantity(resourceName corev1.ResourceName, rawProposal int64) resource.Quantity {
	format := resource.DecimalSI
	if resourceName == corev1.ResourceMemory {
		format = resource.BinarySI
	}
	return *resource.NewMilliQuantity(rawProposal, format)
}

// computeStatusForExternalMetric computes the proposal of an External metric.
func (c *ReplicaCalculator) computeStatusForExternalMetric(w Workload, tolerances Tolerances, source *autoscalingv2.ExternalMetricSource) (replicas int32, timestamp time.Time, metric string, status autoscalingv2.MetricStatus, err error) {
	extStatus := &autoscalingv2.ExternalMetricStatus{
		Metric: autoscalingv2.MetricIdentifier{Name: source.Metric.Name, Selector: source.Metric.Selector},
	}
	var usage int64
	switch {
	case source.Target.AverageValue != nil:
		replicas, usage, timestamp, err = c.GetExternalPerPodMetricReplicas(w, tolerances, source.Target.AverageValue.MilliValue(), source.Metric.Name, source.Metric.Selector)
		if err != nil {
			return 0, time.Time{}, "", status, fmt.Errorf("failed to get %s external metric: %w", source.Metric.Name, err)
		}
		extStatus.Current.AverageValue = resource.NewMilliQuantity(usage, resource.DecimalSI)
	case source.Target.Value != nil:
		replicas, usage, timestamp, err = c.GetExternalMetricReplicas(w, tolerances, source.Target.Value.MilliValue(), source.Metric.Name, source.Metric.Selector)
		if err != nil {
			return 0, time.Time{}, "", status, fmt.Errorf("failed to get external metric %s: %w", source.Metric.Name, err)
		}
		extStatus.Current.Value = resource.NewMilliQuantity(usage, resource.DecimalSI)
	default:
		return 0, time.Time{}, "", status, errors.New("invalid external metric source: neither a value target nor an average value target was set")
	}
	metric = fmt.Sprintf("external metric %s(%+v)", source.Metric.Name, source.Metric.Selector)
	return replicas, timestamp, metric, autoscalingv2.MetricStatus{Type: autoscalingv2.ExternalMetricSourceType, External: extStatus}, nil
}
