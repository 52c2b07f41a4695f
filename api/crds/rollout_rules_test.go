package crds_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/intstr"
	"k8s.io/utils/ptr"

	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
)

// canaryFirst returns the staged-rollouts guide's RolloutStrategy, changed by edits.
func canaryFirst(edits ...func(*rolloutv1alpha1.RolloutStrategySpec)) *rolloutv1alpha1.RolloutStrategy {
	s := &rolloutv1alpha1.RolloutStrategy{
		ObjectMeta: metav1.ObjectMeta{Name: "canary-first", Namespace: "default"},
		Spec: rolloutv1alpha1.RolloutStrategySpec{
			Type:             rolloutv1alpha1.ProgressivePerGroup,
			GroupBy:          &rolloutv1alpha1.GroupBy{ClusterLabel: "env"},
			Groups:           []string{"canary", "prod"},
			MinSuccessTime:   &metav1.Duration{Duration: 15 * time.Second},
			ProgressDeadline: &metav1.Duration{Duration: 5 * time.Minute},
		},
	}
	for _, edit := range edits {
		edit(&s.Spec)
	}
	return s
}

func TestRolloutStrategyRules(t *testing.T) {
	runRuleCases(t, []ruleCase{
		{name: "the guide's strategy is accepted", obj: canaryFirst()},
		{name: "a percentage window and failure budget are accepted", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.MaxConcurrency, s.MaxFailures = ptr.To(intstr.FromString("50%")), ptr.To(intstr.FromInt32(1))
		})},
		{name: "steps are accepted", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.GroupBy, s.Groups = nil, nil
			s.Steps = []rolloutv1alpha1.RolloutStep{{Name: "canary", MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"canary"}}}}}
		})},
		{name: "an unknown type is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.Type = "Canary" }),
			wantField: "spec.type", wantErr: "Unsupported value"},
		{name: "a negative maxConcurrency is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.MaxConcurrency = ptr.To(intstr.FromInt32(-1)) }),
			wantField: "spec.maxConcurrency", wantErr: "maxConcurrency must be a number of at least 1"},
		{name: "a percentage over 100 is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.MaxConcurrency = ptr.To(intstr.FromString("150%")) }),
			wantField: "spec.maxConcurrency", wantErr: "percentage from 1% to 100%"},
		{name: "a negative maxFailures is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.MaxFailures = ptr.To(intstr.FromInt32(-2)) }),
			wantField: "spec.maxFailures", wantErr: "maxFailures must be a number of at least 0"},
		{name: "a deadline shorter than minSuccessTime is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.ProgressDeadline = &metav1.Duration{Duration: 10 * time.Second}
		}), wantField: "spec.progressDeadline", wantErr: "progressDeadline must be longer than minSuccessTime"},
		{name: "groupBy and steps together are refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.Groups = nil
			s.Steps = []rolloutv1alpha1.RolloutStep{{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}}}
		}), wantErr: "groupBy and steps are exclusive"},
		{name: "ProgressivePerGroup without waves is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.GroupBy, s.Groups = nil, nil }),
			wantErr: "type ProgressivePerGroup needs waves"},
		{name: "an invalid label key is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.GroupBy.ClusterLabel = "not a key" }),
			wantField: "spec.groupBy.clusterLabel", wantErr: "should match"},
		{name: "no minSuccessTime is accepted", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) { s.MinSuccessTime = nil })},
		{name: "a step operator that is not a label selector's is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.GroupBy, s.Groups = nil, nil
			s.Steps = []rolloutv1alpha1.RolloutStep{{Name: "canary", MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: "Equals", Values: []string{"canary"}}}}}
		}), wantErr: "matchExpressions operators are In, NotIn, Exists or DoesNotExist"},
		{name: "In without values is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.GroupBy, s.Groups = nil, nil
			s.Steps = []rolloutv1alpha1.RolloutStep{{Name: "canary", MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn}}}}
		}), wantErr: "In and NotIn need values"},
		{name: "two steps of one name are refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.GroupBy, s.Groups = nil, nil
			e := []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}
			s.Steps = []rolloutv1alpha1.RolloutStep{{Name: "a", MatchExpressions: e}, {Name: "a", MatchExpressions: e}}
		}), wantErr: "step names must be unique"},
		{name: "a mandatory group with both name and index is refused", obj: canaryFirst(func(s *rolloutv1alpha1.RolloutStrategySpec) {
			s.MandatoryDecisionGroups = []rolloutv1alpha1.MandatoryDecisionGroup{{GroupName: "canary", GroupIndex: ptr.To[int32](0)}}
		}), wantErr: "set exactly one of groupName and groupIndex"},
	})
}

// TestRolloutStrategyDurationRules sends a duration typo as a user writes it
// (metav1.Duration cannot hold one): the refusal says what a duration is.
func TestRolloutStrategyDurationRules(t *testing.T) {
	as := newAdmitters(t)
	_, obj := asJSONMap(t, canaryFirst())
	spec := obj["spec"].(map[string]interface{})
	spec["minSuccessTime"] = "fifteen"
	a, err := as.forKind(t, rolloutv1alpha1.SchemeGroupVersion.WithKind("RolloutStrategy"))
	if err != nil {
		t.Fatal(err)
	}
	got := a.admit(obj)
	if !strings.Contains(fmt.Sprint(got), "minSuccessTime must be a duration of 0 or more, such as 15s") || strings.Contains(fmt.Sprint(got), "type conversion error") {
		t.Errorf("minSuccessTime: fifteen: %v, want one refusal saying what a duration is", got)
	}
}
