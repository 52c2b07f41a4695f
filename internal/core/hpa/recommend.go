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

// Ported from k8s.io/kubernetes v1.37.2, pkg/controller/podautoscaler/horizontal.go: the part
// of reconcileAutoscaler between reading the target's scale and writing it,
// validateAndParseSelector (its first two checks), and setConditionInList. Changes for
// Flotilla: no API access (the controller passes what it read and acts on the Recommendation);
// conditions and events are returned instead of set and recorded; the FederatedHPA is
// defaulted on a copy first; minReplicas is at least 1, so there is no scale-to-zero; the
// selector's pods are not checked against other autoscalers (the HPA's AmbiguousSelector).

package hpa

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/clock"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// Recommender decides, at each sync, the replica count of a FederatedHPA's scale target. It
// keeps every FederatedHPA's History; use one Recommender for the controller's lifetime.
type Recommender struct {
	calculator *ReplicaCalculator
	config     Config
	histories  Histories
	clock      clock.PassiveClock
}

// NewRecommender returns a Recommender reading metrics from metrics, tuned by cfg, with clk as
// its time source (nil for the real clock).
func NewRecommender(metrics MetricsClient, cfg Config, clk clock.PassiveClock) *Recommender {
	if clk == nil {
		clk = clock.RealClock{}
	}
	return &Recommender{
		calculator: NewReplicaCalculator(metrics, cfg.CPUInitializationPeriod, cfg.InitialReadinessDelay, clk),
		config:     cfg,
		clock:      clk,
	}
}

// Target is what the controller read of the scale target at one sync.
type Target struct {
	// SpecReplicas and StatusReplicas are the template's /scale spec.replicas and
	// status.replicas (see Workload).
	SpecReplicas, StatusReplicas int32
	// Selector is the template's /scale status.selector, in label-selector string form.
	Selector string
	// Pods are the pods Selector matches in every member cluster the workload is scheduled to.
	Pods []Pod
	// Calibration is the sum of the members' spec.replicas divided by SpecReplicas (see
	// Workload).
	Calibration float64
}

// Event is an event the controller should record on the FederatedHPA.
type Event struct {
	// Type is corev1.EventTypeNormal or corev1.EventTypeWarning.
	Type string
	// Reason is one of the FederatedHPA reasons of package autoscalingv1alpha1
	// (federatedhpa_reasons.go).
	Reason string
	// Message is the event's message.
	Message string
}

// Recommendation is the decision of one sync.
type Recommendation struct {
	// CurrentReplicas is the target's replica count: status.currentReplicas.
	CurrentReplicas int32
	// DesiredReplicas is the count to scale to: status.desiredReplicas. When the metrics gave
	// nothing usable it is the status' previous desiredReplicas.
	DesiredReplicas int32
	// Rescale tells whether to write DesiredReplicas to the target's /scale; then record
	// SuccessfulRescale (or FailedRescale) with RescaleReason and call RecordRescale.
	Rescale bool
	// RescaleReason is the reason part of the rescale event's message.
	RescaleReason string
	// MetricStatuses are status.currentMetrics.
	MetricStatuses []autoscalingv2.MetricStatus
	// Conditions are to be applied with SetCondition, in order; a later one replaces an
	// earlier one of the same type.
	Conditions []autoscalingv2.HorizontalPodAutoscalerCondition
	// Events are the Warning events of this sync's failures, to record.
	Events []Event
	// Err is non-nil when a metric or the selector failed. With Rescale true, some metrics
	// still worked and the target is scaled on them; the controller should still retry
	// sooner, as the HPA does.
	Err error
}

// Recommend decides the replica count of fhpa's target, as the HPA controller does: a
// target with zero replicas is left alone (ScalingDisabled); one outside [minReplicas,
// maxReplicas] is brought within; otherwise the metrics' largest proposal, normalized by
// History.Normalize. fhpa is not modified; its defaults are applied to a copy.
func (r *Recommender) Recommend(ctx context.Context, fhpa *autoscalingv1alpha1.FederatedHPA, t Target) Recommendation {
	f := fhpa.DeepCopy()
	SetDefaults(f)
	h := r.histories.For(types.NamespacedName{Namespace: f.Namespace, Name: f.Name})
	now := r.clock.Now()

	rec := Recommendation{CurrentReplicas: t.SpecReplicas, DesiredReplicas: t.SpecReplicas}
	rec.Conditions = append(rec.Conditions, condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededGetScaleReason,
		"the HPA controller was able to get the target's current scale"))
	h.RecordInitialRecommendation(t.SpecReplicas, now)

	minReplicas := *f.Spec.MinReplicas
	switch {
	case t.SpecReplicas == 0:
		rec.Conditions = append(rec.Conditions, condition(autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.ScalingDisabledReason,
			"scaling is disabled since the replica count of the target is zero"))
		return rec
	case t.SpecReplicas > f.Spec.MaxReplicas:
		rec.DesiredReplicas, rec.RescaleReason = f.Spec.MaxReplicas, RescaleAboveMaxReplicas
	case t.SpecReplicas < minReplicas:
		rec.DesiredReplicas, rec.RescaleReason = minReplicas, RescaleBelowMinReplicas
	default:
		if !r.fromMetrics(ctx, f, t, h, now, &rec) {
			return rec
		}
	}
	rec.Rescale = rec.DesiredReplicas != t.SpecReplicas
	return rec
}

// fromMetrics fills rec from the metrics' proposal. It reports false when the metrics gave
// nothing to act on.
func (r *Recommender) fromMetrics(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, t Target, h *History, now time.Time, rec *Recommendation) bool {
	selector, err := parseSelector(t.Selector, rec)
	if err != nil {
		failed(f, rec, err)
		return false
	}
	w := Workload{
		Namespace: f.Namespace, Selector: selector, Pods: t.Pods,
		SpecReplicas: t.SpecReplicas, StatusReplicas: t.StatusReplicas, Calibration: t.Calibration,
	}
	proposal, err := r.calculator.ComputeReplicasForMetrics(ctx, w, TolerancesFor(f.Spec.Behavior, r.config.Tolerance), f.Spec.Metrics)
	rec.MetricStatuses = proposal.Statuses
	for _, failure := range proposal.Failures {
		rec.Events = append(rec.Events, Event{Type: corev1.EventTypeWarning, Reason: failure.Reason, Message: failure.Err.Error()})
	}
	rec.Conditions = append(rec.Conditions, proposal.ScalingActive)
	if !proposal.Usable {
		failed(f, rec, err)
		return false
	}
	rec.Err = err // some metrics failed, the others are acted on

	desired := proposal.Replicas
	switch {
	case desired > t.SpecReplicas:
		rec.RescaleReason = fmt.Sprintf(rescaleAboveTarget, proposal.Metric)
	case desired < t.SpecReplicas:
		rec.RescaleReason = RescaleAllMetricsBelow
	}
	normalized := h.Normalize(Normalization{
		Behavior:                     f.Spec.Behavior,
		MinReplicas:                  *f.Spec.MinReplicas,
		MaxReplicas:                  f.Spec.MaxReplicas,
		CurrentReplicas:              t.SpecReplicas,
		DesiredReplicas:              desired,
		DownscaleStabilizationWindow: r.config.DownscaleStabilizationWindow,
	}, now)
	rec.DesiredReplicas = normalized.Replicas
	rec.Conditions = append(rec.Conditions, normalized.AbleToScale, normalized.ScalingLimited)
	return true
}

// failed records a sync whose metrics gave nothing to act on: the status keeps its previous
// desiredReplicas.
func failed(f *autoscalingv1alpha1.FederatedHPA, rec *Recommendation, err error) {
	err = fmt.Errorf("failed to compute desired number of replicas based on listed metrics: %w", err)
	rec.Err = err
	rec.DesiredReplicas = f.Status.DesiredReplicas
	rec.Events = append(rec.Events, Event{Type: corev1.EventTypeWarning, Reason: autoscalingv1alpha1.FailedComputeMetricsReplicasReason, Message: err.Error()})
}

// parseSelector parses the target's selector; an empty or unparsable one is an
// InvalidSelector (ScalingActive False) with its event.
func parseSelector(selector string, rec *Recommendation) (labels.Selector, error) {
	if selector == "" {
		rec.Events = append(rec.Events, Event{Type: corev1.EventTypeWarning, Reason: autoscalingv1alpha1.SelectorRequiredReason, Message: "selector is required"})
		rec.Conditions = append(rec.Conditions, condition(autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.InvalidSelectorReason,
			"the HPA target's scale is missing a selector"))
		return nil, errors.New("selector is required")
	}
	parsed, err := labels.Parse(selector)
	if err != nil {
		msg := fmt.Sprintf("couldn't convert selector into a corresponding internal selector object: %v", err)
		rec.Events = append(rec.Events, Event{Type: corev1.EventTypeWarning, Reason: autoscalingv1alpha1.InvalidSelectorReason, Message: msg})
		rec.Conditions = append(rec.Conditions, condition(autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.InvalidSelectorReason, "%s", msg))
		return nil, errors.New(msg)
	}
	return parsed, nil
}

// RecordRescale records, after the controller wrote the new count to the target's /scale,
// that fhpa scaled it from prevReplicas to newReplicas, for its behavior's rate policies.
func (r *Recommender) RecordRescale(fhpa *autoscalingv1alpha1.FederatedHPA, prevReplicas, newReplicas int32) {
	r.histories.For(types.NamespacedName{Namespace: fhpa.Namespace, Name: fhpa.Name}).RecordScale(fhpa.Spec.Behavior, prevReplicas, newReplicas, r.clock.Now())
}

// Forget drops what the Recommender remembers of a deleted FederatedHPA.
func (r *Recommender) Forget(key types.NamespacedName) { r.histories.Forget(key) }

// SetCondition returns conditions with c set in place of the condition of the same type, or
// added. LastTransitionTime becomes now when the status changes (or the condition is new),
// and is kept otherwise.
func SetCondition(conditions []autoscalingv2.HorizontalPodAutoscalerCondition, c autoscalingv2.HorizontalPodAutoscalerCondition, now metav1.Time) []autoscalingv2.HorizontalPodAutoscalerCondition {
	var existing *autoscalingv2.HorizontalPodAutoscalerCondition
	for i := range conditions {
		if conditions[i].Type == c.Type {
			existing = &conditions[i]
			break
		}
	}
	if existing == nil {
		conditions = append(conditions, autoscalingv2.HorizontalPodAutoscalerCondition{Type: c.Type})
		existing = &conditions[len(conditions)-1]
	}
	if existing.Status != c.Status {
		existing.LastTransitionTime = now
	}
	existing.Status, existing.Reason, existing.Message = c.Status, c.Reason, c.Message
	return conditions
}

// The rescale reasons, the "reason:" part of a SuccessfulRescale or FailedRescale event's
// message, as the HPA words them.
const (
	RescaleAboveMaxReplicas = "Current number of replicas above Spec.MaxReplicas"
	RescaleBelowMinReplicas = "Current number of replicas below Spec.MinReplicas"
	RescaleAllMetricsBelow  = "All metrics below target"
	// rescaleAboveTarget is formatted with the metric's description.
	rescaleAboveTarget = "%s above target"
)

// FailedGetScaleCondition is the AbleToScale condition of a sync that could not read the
// target's /scale (a target that does not exist or has no scale subresource); record a
// FailedGetScale Warning event with err too.
func FailedGetScaleCondition(err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	return condition(autoscalingv2.AbleToScale, corev1.ConditionFalse, autoscalingv1alpha1.FailedGetScaleReason,
		"the HPA controller was unable to get the target's current scale: %v", err)
}

// TargetUnavailableCondition is the AbleToScale condition of a sync that
// stopped before reading /scale, with reason one of the FailedGetScaleTargetRef,
// FailedGetBinding and FailedGetTargetClusters reasons; err says what is missing.
func TargetUnavailableCondition(reason string, err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	return condition(autoscalingv2.AbleToScale, corev1.ConditionFalse, reason, "the HPA controller cannot scale the target: %v", err)
}

// AmbiguousCondition is the ScalingActive condition of a FederatedHPA whose
// target others also scale (named in others).
func AmbiguousCondition(target string, others []string) autoscalingv2.HorizontalPodAutoscalerCondition {
	return condition(autoscalingv2.ScalingActive, corev1.ConditionFalse, autoscalingv1alpha1.AmbiguousSelectorReason,
		"%s is also scaled by FederatedHPA %s: only one FederatedHPA may manage a target, so none scales it", target, strings.Join(others, ", "))
}

// RescaledCondition is the AbleToScale condition of a sync that wrote replicas to the
// target's /scale.
func RescaledCondition(replicas int32) autoscalingv2.HorizontalPodAutoscalerCondition {
	return condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.SucceededRescaleReason,
		"the HPA controller was able to update the target scale to %d", replicas)
}

// FailedUpdateScaleCondition is the AbleToScale condition of a sync whose write of the
// target's /scale failed; record a FailedRescale Warning event too.
func FailedUpdateScaleCondition(err error) autoscalingv2.HorizontalPodAutoscalerCondition {
	return condition(autoscalingv2.AbleToScale, corev1.ConditionFalse, autoscalingv1alpha1.FailedUpdateScaleReason,
		"the HPA controller was unable to update the target scale: %v", err)
}

// RescaleEventMessage is the message of a SuccessfulRescale event, or of a FailedRescale one
// when err is not nil, as the HPA words them.
func RescaleEventMessage(replicas int32, reason string, err error) string {
	if err != nil {
		return fmt.Sprintf("New size: %d; reason: %s; error: %v", replicas, reason, err)
	}
	return fmt.Sprintf("New size: %d; reason: %s", replicas, reason)
}

// condition returns a status condition without a transition time; SetCondition sets it.
func condition(typ autoscalingv2.HorizontalPodAutoscalerConditionType, status corev1.ConditionStatus, reason, format string, args ...any) autoscalingv2.HorizontalPodAutoscalerCondition {
	return autoscalingv2.HorizontalPodAutoscalerCondition{Type: typ, Status: status, Reason: reason, Message: fmt.Sprintf(format, args...)}
}
