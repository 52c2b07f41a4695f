package rollout

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	plan "github.com/flotilla-io/flotilla/internal/core/rollout"
)

var fleet = map[string]map[string]string{
	"member1": {"env": "canary"},
	"member2": {"env": "prod", "region": "eu"},
	"member3": {"env": "prod", "region": "us"},
	"member4": nil,
}

func waveNames(ws []plan.Wave) []string {
	var out []string
	for _, w := range ws {
		s := w.Name + ":"
		for _, c := range w.Clusters {
			s += " " + c
		}
		if w.Mandatory {
			s += " (mandatory)"
		}
		out = append(out, s)
	}
	return out
}

func TestWaves(t *testing.T) {
	for _, tc := range []struct {
		name      string
		spec      rolloutv1alpha1.RolloutStrategySpec
		placement *policyv1alpha1.Placement
		want      []string
	}{
		{name: "by label, in groups order", spec: rolloutv1alpha1.RolloutStrategySpec{GroupBy: &rolloutv1alpha1.GroupBy{ClusterLabel: "env"}, Groups: []string{"canary", "prod"}},
			want: []string{"canary: member1", "prod: member2 member3", "(other): member4"}},
		{name: "by label, values sorted without groups", spec: rolloutv1alpha1.RolloutStrategySpec{GroupBy: &rolloutv1alpha1.GroupBy{ClusterLabel: "env"}},
			want: []string{"canary: member1", "prod: member2 member3", "(other): member4"}},
		{name: "steps, first match wins, default names", spec: rolloutv1alpha1.RolloutStrategySpec{Steps: []rolloutv1alpha1.RolloutStep{
			{MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "region", Operator: metav1.LabelSelectorOpIn, Values: []string{"eu"}}}},
			{Name: "prod", MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpExists}}},
		}}, want: []string{"step-0: member2", "prod: member1 member3", "(other): member4"}},
		{name: "the policy's clusterAffinities", spec: rolloutv1alpha1.RolloutStrategySpec{GroupBy: &rolloutv1alpha1.GroupBy{ClusterAffinities: &rolloutv1alpha1.AffinityGrouping{}}},
			placement: &policyv1alpha1.Placement{ClusterAffinities: []policyv1alpha1.ClusterAffinityTerm{
				{AffinityName: "first", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member3"}}},
				{AffinityName: "rest", ClusterAffinity: policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1", "member2", "member3"}}},
			}}, want: []string{"first: member3", "rest: member1 member2", "(other): member4"}},
		{name: "one wave without grouping", want: []string{"all: member1 member2 member3 member4"}},
		{name: "mandatory by name and by index", spec: rolloutv1alpha1.RolloutStrategySpec{GroupBy: &rolloutv1alpha1.GroupBy{ClusterLabel: "env"}, Groups: []string{"canary", "prod"},
			MandatoryDecisionGroups: []rolloutv1alpha1.MandatoryDecisionGroup{{GroupName: "prod"}, {GroupIndex: ptr.To[int32](0)}}},
			want: []string{"canary: member1 (mandatory)", "prod: member2 member3 (mandatory)", "(other): member4"}},
	} {
		got := waveNames(waves(&tc.spec, tc.placement, fleet))
		if len(got) != len(tc.want) {
			t.Errorf("%s: waves %q, want %q", tc.name, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%s: waves %q, want %q", tc.name, got, tc.want)
				break
			}
		}
	}
}

func TestStartOrRestart(t *testing.T) {
	now := time.Date(2026, 12, 7, 0, 0, 0, 0, time.UTC)
	r := &Reconciler{}
	// A change: member1 holds "a" and wants "b"; member2 is unchanged.
	facts := map[string]fact{"member1": {current: "a", target: "b"}, "member2": {current: "b", target: "b"}}
	ro := &workv1alpha2.RolloutStatus{}
	r.startOrRestart(ro, facts, "rev1", nil, now)
	if ro.Revision != "rev1" || len(ro.Clusters) != 2 || ro.Clusters[0].Phase != workv1alpha2.ClusterRolloutWaiting || ro.Clusters[1].Phase != workv1alpha2.ClusterRolloutSucceeded {
		t.Fatalf("a new change: %+v, want member1 Waiting and the unchanged member2 Succeeded", ro)
	}
	// member1 is admitted and soaking; the same revision keeps its progress.
	admitted := metav1.NewTime(now)
	ro.Clusters[0].Rendering, ro.Clusters[0].Phase, ro.Clusters[0].AdmittedTime = "b", workv1alpha2.ClusterRolloutProgressing, &admitted
	facts["member1"] = fact{current: "b", target: "b"}
	r.startOrRestart(ro, facts, "rev1", nil, now.Add(time.Second))
	if ro.Clusters[0].Phase != workv1alpha2.ClusterRolloutProgressing || ro.Clusters[0].AdmittedTime != &admitted {
		t.Errorf("the same revision reset member1: %+v", ro.Clusters[0])
	}
	// A newer change: member1 waits again, from the first wave.
	facts = map[string]fact{"member1": {current: "b", target: "c"}, "member2": {current: "b", target: "c"}}
	r.startOrRestart(ro, facts, "rev2", nil, now.Add(2*time.Second))
	for _, c := range ro.Clusters {
		if c.Phase != workv1alpha2.ClusterRolloutWaiting {
			t.Errorf("a newer change left %s %s, want Waiting", c.Name, c.Phase)
		}
	}
	// A restart forgives a failed cluster that has the change: a new deadline.
	facts = map[string]fact{"member1": {current: "c", target: "c"}}
	ro.Clusters = []workv1alpha2.ClusterRollout{{Name: "member1", Rendering: "c", Phase: workv1alpha2.ClusterRolloutFailed, AdmittedTime: &admitted}}
	later := now.Add(time.Hour)
	r.startOrRestart(ro, facts, "rev2", map[string]string{rolloutv1alpha1.RestartAnnotation: "t1"}, later)
	if c := ro.Clusters[0]; c.Phase != workv1alpha2.ClusterRolloutProgressing || !c.AdmittedTime.Time.Equal(later) || ro.ObservedRestart != "t1" {
		t.Errorf("restart: %+v (observed %q), want member1 Progressing since the restart", c, ro.ObservedRestart)
	}
}
