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
// (recordInitialRecommendation, stabilizeRecommendation, normalizeDesiredReplicas,
// normalizeDesiredReplicasWithBehaviors, maybeInitScaleDownStabilizationWindow,
// getReplicasChangePerPeriod, storeScaleEvent, stabilizeRecommendationWithBehaviors,
// convertDesiredReplicasWithBehaviorRate, convertDesiredReplicasWithRules,
// calculateScaleUpLimit, markScaleEventsOutdated, getLongestPolicyPeriod,
// calculateScaleUpLimitWithScalingRules, calculateScaleDownLimitWithBehaviors). Changes for
// Flotilla: the per-autoscaler memory the controller kept in maps is a History value; the
// clock is passed in; the conditions are returned instead of set on the object; the behavior's
// rules are completed with Kubernetes' defaults before use, so a behavior without
// selectPolicy (Karmada issue 4085) or without a scaleUp or scaleDown part cannot panic.

package hpa

import (
	"math"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/types"
	autoscalingapiv2 "k8s.io/kubernetes/pkg/apis/autoscaling/v2"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
)

// Without behavior, a scale-up may at most reach max(scaleUpLimitFactor * current,
// scaleUpLimitMinimum) replicas in one step.
const (
	scaleUpLimitFactor  = 2.0
	scaleUpLimitMinimum = 4.0
)

type timestampedRecommendation struct {
	recommendation int32
	timestamp      time.Time
}

type timestampedScaleEvent struct {
	replicaChange int32 // absolute value, non-negative
	timestamp     time.Time
	outdated      bool
}

// History is what one FederatedHPA's scaling rules look back on: its recent unstabilized
// recommendations (for the stabilization windows) and its recent scale-ups and scale-downs
// (for the behavior's rate policies). Like the HPA controller, the FederatedHPA controller
// keeps it in memory only: after a restart the windows start empty. A History is not safe for
// concurrent use; a controller reconciles one FederatedHPA at a time.
type History struct {
	recommendations []timestampedRecommendation
	scaleUpEvents   []timestampedScaleEvent
	scaleDownEvents []timestampedScaleEvent
}

// RecordInitialRecommendation makes the current replica count the first recommendation of a
// History that has none, so a FederatedHPA created over a running workload does not scale it
// down before a stabilization window has passed.
func (h *History) RecordInitialRecommendation(currentReplicas int32, now time.Time) {
	if h.recommendations == nil {
		h.recommendations = []timestampedRecommendation{{currentReplicas, now}}
	}
}

// Normalization is the input of History.Normalize.
type Normalization struct {
	// Behavior is the FederatedHPA's spec.behavior; nil for the classic rules.
	Behavior *autoscalingv2.HorizontalPodAutoscalerBehavior
	// MinReplicas and MaxReplicas are the FederatedHPA's bounds.
	MinReplicas, MaxReplicas int32
	// CurrentReplicas is the template's replica count.
	CurrentReplicas int32
	// DesiredReplicas is the metrics' proposal.
	DesiredReplicas int32
	// DownscaleStabilizationWindow is Config.DownscaleStabilizationWindow: the window without
	// behavior, and for a behavior.scaleDown without stabilizationWindowSeconds.
	DownscaleStabilizationWindow time.Duration
}

// Normalized is the outcome of History.Normalize.
type Normalized struct {
	// Replicas is the replica count to scale to.
	Replicas int32
	// AbleToScale is True with ReadyForNewScale, ScaleUpStabilized or ScaleDownStabilized.
	AbleToScale autoscalingv2.HorizontalPodAutoscalerCondition
	// ScalingLimited is True when a bound changed the count (TooFewReplicas, TooManyReplicas,
	// ScaleUpLimit, ScaleDownLimit), else False with DesiredWithinRange.
	ScalingLimited autoscalingv2.HorizontalPodAutoscalerCondition
}

// Normalize turns the metrics' proposal into the replica count to scale to, and records the
// proposal in the History. Without behavior (the HPA's classic rules): the highest
// recommendation within the downscale stabilization window holds a scale-down back, the
// count stays within the bounds, and a scale-up reaches at most max(2x current, 4). With
// behavior: the scaleUp and scaleDown stabilization windows, then the bounds and the rate
// policies (selectPolicy Max, Min or Disabled) over the scale events of the policies' periods.
// A behavior's missing parts take Kubernetes' defaults.
func (h *History) Normalize(n Normalization, now time.Time) Normalized {
	if n.Behavior == nil {
		return h.normalizeDesiredReplicas(n, now)
	}
	return h.normalizeDesiredReplicasWithBehaviors(n, completeBehavior(n.Behavior, n.DownscaleStabilizationWindow), now)
}

// completeBehavior returns a copy of behavior with every rule Kubernetes defaults filled in,
// and the scale-down stabilization window the controller's flag sets when the behavior does
// not.
func completeBehavior(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, downscaleStabilizationWindow time.Duration) *autoscalingv2.HorizontalPodAutoscalerBehavior {
	b := behavior.DeepCopy()
	b.ScaleUp = autoscalingapiv2.GenerateHPAScaleUpRules(b.ScaleUp)
	b.ScaleDown = autoscalingapiv2.GenerateHPAScaleDownRules(b.ScaleDown)
	if b.ScaleDown.StabilizationWindowSeconds == nil {
		seconds := int32(downscaleStabilizationWindow.Seconds())
		b.ScaleDown.StabilizationWindowSeconds = &seconds
	}
	return b
}

// stabilizeRecommendation:
// - replaces old recommendation with the newest recommendation,
// - returns max of recommendations that are not older than downscaleStabilisationWindow.
func (h *History) stabilizeRecommendation(prenormalizedDesiredReplicas int32, downscaleStabilisationWindow time.Duration, now time.Time) int32 {
	maxRecommendation := prenormalizedDesiredReplicas
	foundOldSample := false
	oldSampleIndex := 0
	cutoff := now.Add(-downscaleStabilisationWindow)
	for i, rec := range h.recommendations {
		if rec.timestamp.Before(cutoff) {
			foundOldSample = true
			oldSampleIndex = i
		} else if rec.recommendation > maxRecommendation {
			maxRecommendation = rec.recommendation
		}
	}
	if foundOldSample {
		h.recommendations[oldSampleIndex] = timestampedRecommendation{prenormalizedDesiredReplicas, now}
	} else {
		h.recommendations = append(h.recommendations, timestampedRecommendation{prenormalizedDesiredReplicas, now})
	}
	return maxRecommendation
}

// normalizeDesiredReplicas takes the metrics desired replicas value and normalizes it based on the appropriate conditions (i.e. < maxReplicas, >
// minReplicas, etc...)
func (h *History) normalizeDesiredReplicas(n Normalization, now time.Time) Normalized {
	var out Normalized
	stabilizedRecommendation := h.stabilizeRecommendation(n.DesiredReplicas, n.DownscaleStabilizationWindow, now)
	if stabilizedRecommendation != n.DesiredReplicas {
		out.AbleToScale = condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.ScaleDownStabilizedReason, "recent recommendations were higher than current one, applying the highest recent recommendation")
	} else {
		out.AbleToScale = condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.ReadyForNewScaleReason, "recommended size matches current size")
	}

	desiredReplicas, reason, message := convertDesiredReplicasWithRules(n.CurrentReplicas, stabilizedRecommendation, n.MinReplicas, n.MaxReplicas)
	out.Replicas = desiredReplicas
	out.ScalingLimited = limitedCondition(desiredReplicas != stabilizedRecommendation, reason, message)
	return out
}

// limitedCondition is the ScalingLimited condition: True when the bound named by reason
// changed the count.
func limitedCondition(limited bool, reason, message string) autoscalingv2.HorizontalPodAutoscalerCondition {
	status := corev1.ConditionFalse
	if limited {
		status = corev1.ConditionTrue
	}
	return condition(autoscalingv2.ScalingLimited, status, reason, "%s", message)
}

// normalizationArg is used to pass all needed information between functions as one structure
type normalizationArg struct {
	ScaleUpBehavior   *autoscalingv2.HPAScalingRules
	ScaleDownBehavior *autoscalingv2.HPAScalingRules
	MinReplicas       int32
	MaxReplicas       int32
	CurrentReplicas   int32
	DesiredReplicas   int32
}

// normalizeDesiredReplicasWithBehaviors takes the metrics desired replicas value and normalizes it:
// 1. Apply the basic conditions (i.e. < maxReplicas, > minReplicas, etc...)
// 2. Apply the scale up/down limits from the hpaSpec.Behaviors (i.e. add no more than 4 pods)
// 3. Apply the constraints period (i.e. add no more than 4 pods per minute)
// 4. Apply the stabilization (i.e. add no more than 4 pods per minute, and pick the smallest recommendation during last 5 minutes)
func (h *History) normalizeDesiredReplicasWithBehaviors(n Normalization, behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, now time.Time) Normalized {
	var out Normalized
	arg := normalizationArg{
		ScaleUpBehavior:   behavior.ScaleUp,
		ScaleDownBehavior: behavior.ScaleDown,
		MinReplicas:       n.MinReplicas,
		MaxReplicas:       n.MaxReplicas,
		CurrentReplicas:   n.CurrentReplicas,
		DesiredReplicas:   n.DesiredReplicas,
	}
	stabilizedRecommendation, reason, message := h.stabilizeRecommendationWithBehaviors(arg, now)
	arg.DesiredReplicas = stabilizedRecommendation
	if stabilizedRecommendation != n.DesiredReplicas {
		// "ScaleUpStabilized" || "ScaleDownStabilized"
		out.AbleToScale = condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, reason, "%s", message)
	} else {
		out.AbleToScale = condition(autoscalingv2.AbleToScale, corev1.ConditionTrue, autoscalingv1alpha1.ReadyForNewScaleReason, "recommended size matches current size")
	}
	desiredReplicas, reason, message := h.convertDesiredReplicasWithBehaviorRate(arg, now)
	out.Replicas = desiredReplicas
	out.ScalingLimited = limitedCondition(desiredReplicas != stabilizedRecommendation, reason, message)
	return out
}

// getReplicasChangePerPeriod function find all the replica changes per period
func getReplicasChangePerPeriod(periodSeconds int32, scaleEvents []timestampedScaleEvent, now time.Time) int32 {
	period := time.Second * time.Duration(periodSeconds)
	cutoff := now.Add(-period)
	var replicas int32
	for _, rec := range scaleEvents {
		if rec.timestamp.After(cutoff) {
			replicas += rec.replicaChange
		}
	}
	return replicas
}

// RecordScale records that the FederatedHPA scaled its target from prevReplicas to
// newReplicas, for the rate policies of its behavior (nil: nothing is recorded, the classic
// rules do not look back). Call it only after the new count was written.
func (h *History) RecordScale(behavior *autoscalingv2.HorizontalPodAutoscalerBehavior, prevReplicas, newReplicas int32, now time.Time) {
	if behavior == nil || newReplicas == prevReplicas {
		return // we should not store any event as they will not be used
	}
	// The periods of the policies Normalize applies decide how long an event is kept.
	behavior = completeBehavior(behavior, 0)
	events, change, rules := &h.scaleDownEvents, prevReplicas-newReplicas, behavior.ScaleDown
	if newReplicas > prevReplicas {
		events, change, rules = &h.scaleUpEvents, newReplicas-prevReplicas, behavior.ScaleUp
	}
	longestPolicyPeriod := getLongestPolicyPeriod(rules)
	markScaleEventsOutdated(*events, longestPolicyPeriod, now)
	oldSampleIndex, foundOldSample := 0, false
	for i, event := range *events {
		if event.outdated {
			foundOldSample = true
			oldSampleIndex = i
		}
	}
	newEvent := timestampedScaleEvent{change, now, false}
	if foundOldSample {
		(*events)[oldSampleIndex] = newEvent
	} else {
		*events = append(*events, newEvent)
	}
}

// stabilizeRecommendationWithBehaviors:
// - replaces old recommendation with the newest recommendation,
// - returns {max,min} of recommendations that are not older than constraints.Scale{Up,Down}.DelaySeconds
func (h *History) stabilizeRecommendationWithBehaviors(args normalizationArg, now time.Time) (int32, string, string) {
	foundOldSample := false
	oldSampleIndex := 0

	upRecommendation := args.DesiredReplicas
	upDelaySeconds := *args.ScaleUpBehavior.StabilizationWindowSeconds
	upCutoff := now.Add(-time.Second * time.Duration(upDelaySeconds))

	downRecommendation := args.DesiredReplicas
	downDelaySeconds := *args.ScaleDownBehavior.StabilizationWindowSeconds
	downCutoff := now.Add(-time.Second * time.Duration(downDelaySeconds))

	// Calculate the upper and lower stabilization limits.
	for i, rec := range h.recommendations {
		if rec.timestamp.After(upCutoff) {
			upRecommendation = min(rec.recommendation, upRecommendation)
		}
		if rec.timestamp.After(downCutoff) {
			downRecommendation = max(rec.recommendation, downRecommendation)
		}
		if rec.timestamp.Before(upCutoff) && rec.timestamp.Before(downCutoff) {
			foundOldSample = true
			oldSampleIndex = i
		}
	}

	// Bring the recommendation to within the upper and lower limits (stabilize).
	recommendation := args.CurrentReplicas
	if recommendation < upRecommendation {
		recommendation = upRecommendation
	}
	if recommendation > downRecommendation {
		recommendation = downRecommendation
	}

	// Record the unstabilized recommendation.
	if foundOldSample {
		h.recommendations[oldSampleIndex] = timestampedRecommendation{args.DesiredReplicas, now}
	} else {
		h.recommendations = append(h.recommendations, timestampedRecommendation{args.DesiredReplicas, now})
	}

	// Determine a human-friendly message.
	if args.DesiredReplicas >= args.CurrentReplicas {
		return recommendation, autoscalingv1alpha1.ScaleUpStabilizedReason, "recent recommendations were lower than current one, applying the lowest recent recommendation"
	}
	return recommendation, autoscalingv1alpha1.ScaleDownStabilizedReason, "recent recommendations were higher than current one, applying the highest recent recommendation"
}

// convertDesiredReplicasWithBehaviorRate performs the actual normalization, given the constraint rate
// It doesn't consider the stabilizationWindow, it is done separately
func (h *History) convertDesiredReplicasWithBehaviorRate(args normalizationArg, now time.Time) (int32, string, string) {
	var possibleLimitingReason, possibleLimitingMessage string

	if args.DesiredReplicas > args.CurrentReplicas {
		scaleUpLimit := calculateScaleUpLimitWithScalingRules(args.CurrentReplicas, h.scaleUpEvents, h.scaleDownEvents, args.ScaleUpBehavior, now)

		if scaleUpLimit < args.CurrentReplicas {
			// We shouldn't scale up further until the scaleUpEvents will be cleaned up
			scaleUpLimit = args.CurrentReplicas
		}
		maximumAllowedReplicas := args.MaxReplicas
		if maximumAllowedReplicas > scaleUpLimit {
			maximumAllowedReplicas = scaleUpLimit
			possibleLimitingReason = autoscalingv1alpha1.ScaleUpLimitReason
			possibleLimitingMessage = "the desired replica count is increasing faster than the maximum scale rate"
		} else {
			possibleLimitingReason = autoscalingv1alpha1.TooManyReplicasReason
			possibleLimitingMessage = "the desired replica count is more than the maximum replica count"
		}
		if args.DesiredReplicas > maximumAllowedReplicas {
			return maximumAllowedReplicas, possibleLimitingReason, possibleLimitingMessage
		}
	} else if args.DesiredReplicas < args.CurrentReplicas {
		scaleDownLimit := calculateScaleDownLimitWithBehaviors(args.CurrentReplicas, h.scaleUpEvents, h.scaleDownEvents, args.ScaleDownBehavior, now)

		if scaleDownLimit > args.CurrentReplicas {
			// We shouldn't scale down further until the scaleDownEvents will be cleaned up
			scaleDownLimit = args.CurrentReplicas
		}
		minimumAllowedReplicas := args.MinReplicas
		if minimumAllowedReplicas < scaleDownLimit {
			minimumAllowedReplicas = scaleDownLimit
			possibleLimitingReason = autoscalingv1alpha1.ScaleDownLimitReason
			possibleLimitingMessage = "the desired replica count is decreasing faster than the maximum scale rate"
		} else {
			possibleLimitingMessage = "the desired replica count is less than the minimum replica count"
			possibleLimitingReason = autoscalingv1alpha1.TooFewReplicasReason
		}
		if args.DesiredReplicas < minimumAllowedReplicas {
			return minimumAllowedReplicas, possibleLimitingReason, possibleLimitingMessage
		}
	}
	return args.DesiredReplicas, autoscalingv1alpha1.DesiredWithinRangeReason, "the desired count is within the acceptable range"
}

// convertDesiredReplicasWithRules performs the actual normalization, without depending on `HorizontalController` or `HorizontalPodAutoscaler`
func convertDesiredReplicasWithRules(currentReplicas, desiredReplicas, hpaMinReplicas, hpaMaxReplicas int32) (int32, string, string) {
	var minimumAllowedReplicas int32
	var maximumAllowedReplicas int32

	var possibleLimitingCondition string
	var possibleLimitingReason string

	minimumAllowedReplicas = hpaMinReplicas

	// Do not scaleup too much to prevent incorrect rapid increase of the number of master replicas caused by
	// bogus CPU usage report from heapster/kubelet (like in issue #32304).
	scaleUpLimit := calculateScaleUpLimit(currentReplicas)

	if hpaMaxReplicas > scaleUpLimit {
		maximumAllowedReplicas = scaleUpLimit
		possibleLimitingCondition = autoscalingv1alpha1.ScaleUpLimitReason
		possibleLimitingReason = "the desired replica count is increasing faster than the maximum scale rate"
	} else {
		maximumAllowedReplicas = hpaMaxReplicas
		possibleLimitingCondition = autoscalingv1alpha1.TooManyReplicasReason
		possibleLimitingReason = "the desired replica count is more than the maximum replica count"
	}

	if desiredReplicas < minimumAllowedReplicas {
		possibleLimitingCondition = autoscalingv1alpha1.TooFewReplicasReason
		possibleLimitingReason = "the desired replica count is less than the minimum replica count"

		return minimumAllowedReplicas, possibleLimitingCondition, possibleLimitingReason
	} else if desiredReplicas > maximumAllowedReplicas {
		return maximumAllowedReplicas, possibleLimitingCondition, possibleLimitingReason
	}

	return desiredReplicas, autoscalingv1alpha1.DesiredWithinRangeReason, "the desired count is within the acceptable range"
}

func calculateScaleUpLimit(currentReplicas int32) int32 {
	return int32(math.Max(scaleUpLimitFactor*float64(currentReplicas), scaleUpLimitMinimum))
}

// markScaleEventsOutdated set 'outdated=true' flag for all scale events that are not used by any HPA object
func markScaleEventsOutdated(scaleEvents []timestampedScaleEvent, longestPolicyPeriod int32, now time.Time) {
	period := time.Second * time.Duration(longestPolicyPeriod)
	cutoff := now.Add(-period)
	for i, event := range scaleEvents {
		if event.timestamp.Before(cutoff) {
			// outdated scale event are marked for later reuse
			scaleEvents[i].outdated = true
		}
	}
}

func getLongestPolicyPeriod(scalingRules *autoscalingv2.HPAScalingRules) int32 {
	var longestPolicyPeriod int32
	if scalingRules == nil {
		return 0
	}
	for _, policy := range scalingRules.Policies {
		if policy.PeriodSeconds > longestPolicyPeriod {
			longestPolicyPeriod = policy.PeriodSeconds
		}
	}
	return longestPolicyPeriod
}

// calculateScaleUpLimitWithScalingRules returns the maximum number of pods that could be added for the given HPAScalingRules
func calculateScaleUpLimitWithScalingRules(currentReplicas int32, scaleUpEvents, scaleDownEvents []timestampedScaleEvent, scalingRules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	var result int32
	var proposed int32
	var selectPolicyFn func(int32, int32) int32
	if *scalingRules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return currentReplicas // Scaling is disabled
	} else if *scalingRules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		result = math.MaxInt32
		selectPolicyFn = minInt32 // For scaling up, the lowest change ('min' policy) produces a minimum value
	} else {
		result = math.MinInt32
		selectPolicyFn = maxInt32 // Use the default policy otherwise to produce a highest possible change
	}
	for _, policy := range scalingRules.Policies {
		replicasAddedInCurrentPeriod := getReplicasChangePerPeriod(policy.PeriodSeconds, scaleUpEvents, now)
		replicasDeletedInCurrentPeriod := getReplicasChangePerPeriod(policy.PeriodSeconds, scaleDownEvents, now)
		periodStartReplicas := currentReplicas - replicasAddedInCurrentPeriod + replicasDeletedInCurrentPeriod
		if policy.Type == autoscalingv2.PodsScalingPolicy {
			proposed = periodStartReplicas + policy.Value
		} else if policy.Type == autoscalingv2.PercentScalingPolicy {
			// the proposal has to be rounded up because the proposed change might not increase the replica count causing the target to never scale up
			proposed = int32(math.Ceil(float64(periodStartReplicas) * (1 + float64(policy.Value)/100)))
		}
		result = selectPolicyFn(result, proposed)
	}
	return result
}

// calculateScaleDownLimitWithBehaviors returns the maximum number of pods that could be deleted for the given HPAScalingRules
func calculateScaleDownLimitWithBehaviors(currentReplicas int32, scaleUpEvents, scaleDownEvents []timestampedScaleEvent, scalingRules *autoscalingv2.HPAScalingRules, now time.Time) int32 {
	var result int32
	var proposed int32
	var selectPolicyFn func(int32, int32) int32
	if *scalingRules.SelectPolicy == autoscalingv2.DisabledPolicySelect {
		return currentReplicas // Scaling is disabled
	} else if *scalingRules.SelectPolicy == autoscalingv2.MinChangePolicySelect {
		result = math.MinInt32
		selectPolicyFn = maxInt32 // For scaling down, the lowest change ('min' policy) produces a maximum value
	} else {
		result = math.MaxInt32
		selectPolicyFn = minInt32 // Use the default policy otherwise to produce a highest possible change
	}
	for _, policy := range scalingRules.Policies {
		replicasAddedInCurrentPeriod := getReplicasChangePerPeriod(policy.PeriodSeconds, scaleUpEvents, now)
		replicasDeletedInCurrentPeriod := getReplicasChangePerPeriod(policy.PeriodSeconds, scaleDownEvents, now)
		periodStartReplicas := currentReplicas - replicasAddedInCurrentPeriod + replicasDeletedInCurrentPeriod
		if policy.Type == autoscalingv2.PodsScalingPolicy {
			proposed = periodStartReplicas - policy.Value
		} else if policy.Type == autoscalingv2.PercentScalingPolicy {
			proposed = int32(float64(periodStartReplicas) * (1 - float64(policy.Value)/100))
		}
		result = selectPolicyFn(result, proposed)
	}
	return result
}

// minInt32 is a wrapper around the min builtin to be used as a function value.
func minInt32(a, b int32) int32 { return min(a, b) }

// maxInt32 is a wrapper around the max builtin to be used as a function value.
func maxInt32(a, b int32) int32 { return max(a, b) }

// Histories holds the History of every FederatedHPA the controller handles, by namespace and
// name. It is safe for concurrent use; each History is not (see History).
type Histories struct {
	mu sync.Mutex
	m  map[types.NamespacedName]*History
}

// For returns the History of the FederatedHPA key, empty on first use.
func (hs *Histories) For(key types.NamespacedName) *History {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.m == nil {
		hs.m = map[types.NamespacedName]*History{}
	}
	h, ok := hs.m[key]
	if !ok {
		h = &History{}
		hs.m[key] = h
	}
	return h
}

// Forget drops the History of a FederatedHPA that was deleted.
func (hs *Histories) Forget(key types.NamespacedName) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	delete(hs.m, key)
}
