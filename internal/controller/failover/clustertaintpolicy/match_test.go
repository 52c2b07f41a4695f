package clustertaintpolicy

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestMatch(t *testing.T) {
	ready := func(s metav1.ConditionStatus) []metav1.Condition {
		return []metav1.Condition{{Type: "Ready", Status: s}}
	}
	notReady := []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{"False", "Unknown"}}}
	isReady := []policyv1alpha1.MatchCondition{{ConditionType: "Ready", Operator: policyv1alpha1.MatchConditionOpNotIn, StatusValues: []metav1.ConditionStatus{"False", "Unknown"}}}
	for _, tc := range []struct {
		conds []metav1.Condition
		match []policyv1alpha1.MatchCondition
		want  bool
	}{
		{ready("False"), notReady, true},
		{ready("Unknown"), notReady, true},
		{ready("True"), notReady, false},
		{nil, notReady, true}, // no condition reads as Unknown
		{ready("True"), isReady, true},
		{ready("False"), isReady, false},
		{ready("False"), append(notReady, policyv1alpha1.MatchCondition{ConditionType: "Other", Operator: policyv1alpha1.MatchConditionOpIn, StatusValues: []metav1.ConditionStatus{"True"}}), false},
	} {
		if got := Match(tc.conds, tc.match); got != tc.want {
			t.Errorf("Match(%v, %v) = %v", tc.conds, tc.match, got)
		}
	}
}
