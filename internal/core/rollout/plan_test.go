package rollout

import (
	"slices"
	"strings"
	"testing"
	"time"
)

var t0 = time.Date(2026, 12, 6, 12, 0, 0, 0, time.UTC)

// canaryFirst is the example: waves env=canary then env=prod, a
// whole wave at once, 15 s soak, 5 min deadline, no failure tolerated.
func canaryFirst(clusters map[string]Cluster, now time.Time) Input {
	return Input{
		Strategy: Strategy{Type: ProgressivePerGroup, MinSuccessTime: 15 * time.Second, ProgressDeadline: 5 * time.Minute},
		Waves: GroupByLabel(map[string]map[string]string{
			"member1": {"env": "canary"}, "member2": {"env": "prod"}, "member3": {"env": "prod"},
		}, "env", []string{"canary", "prod"}),
		Clusters: clusters,
		Now:      now,
	}
}

func TestPerGroupCanaryFirst(t *testing.T) {
	// Nothing admitted: the canary wave alone.
	d := Plan(canaryFirst(nil, t0))
	if !slices.Equal(d.Admit, []string{"member1"}) || d.Phase != Progressing || d.Wave != 0 {
		t.Fatalf("start: %+v, want member1 admitted in wave 0", d)
	}
	// Canary healthy for 10 s of 15: prod waits, a timer for the rest.
	c := map[string]Cluster{"member1": {Admitted: true, AdmittedAt: t0, Healthy: true, HealthySince: t0.Add(5 * time.Second)}}
	d = Plan(canaryFirst(c, t0.Add(15*time.Second)))
	if len(d.Admit) != 0 || d.RequeueAfter != 5*time.Second {
		t.Fatalf("soaking: %+v, want nothing admitted and a 5 s timer", d)
	}
	// Soaked: both prod clusters at once (the whole wave).
	d = Plan(canaryFirst(c, t0.Add(20*time.Second)))
	if !slices.Equal(d.Admit, []string{"member2", "member3"}) || d.Wave != 1 {
		t.Fatalf("soaked: %+v, want member2 and member3 in wave 1", d)
	}
	// All done.
	for _, n := range []string{"member2", "member3"} {
		c[n] = Cluster{Admitted: true, AdmittedAt: t0.Add(20 * time.Second), Healthy: true, HealthySince: t0.Add(25 * time.Second)}
	}
	d = Plan(canaryFirst(c, t0.Add(time.Minute)))
	if d.Phase != Succeeded || len(d.Admit) != 0 || d.Wave != 2 {
		t.Fatalf("end: %+v, want Succeeded", d)
	}
}

func TestPerGroupCanaryNeverHealthy(t *testing.T) {
	c := map[string]Cluster{"member1": {Admitted: true, AdmittedAt: t0}}
	d := Plan(canaryFirst(c, t0.Add(4*time.Minute)))
	if len(d.Admit) != 0 || d.Phase != Progressing || d.RequeueAfter != time.Minute {
		t.Fatalf("before the deadline: %+v, want waiting with a 1 min timer", d)
	}
	d = Plan(canaryFirst(c, t0.Add(6*time.Minute)))
	if d.Phase != Failed || len(d.Admit) != 0 || !slices.Equal(d.Failed, []string{"member1"}) || !strings.Contains(d.Message, "wave canary: 1 of 1 clusters not Healthy within the progressDeadline of 5m0s (member1)") {
		t.Fatalf("past the deadline: %+v, want Failed naming member1", d)
	}
}

func TestPausedAdmitsNothing(t *testing.T) {
	in := canaryFirst(nil, t0)
	in.Paused = true
	if d := Plan(in); d.Phase != Paused || len(d.Admit) != 0 {
		t.Fatalf("paused: %+v", d)
	}
}

func TestProgressiveWindowAndMandatory(t *testing.T) {
	in := Input{
		Strategy: Strategy{Type: Progressive, MaxConcurrency: &Amount{Value: 50, Percent: true}, MaxFailures: Amount{Value: 1}},
		Waves: []Wave{
			{Name: "a", Clusters: []string{"c1", "c2", "c3"}},
			{Name: "canary", Clusters: []string{"k1"}, Mandatory: true},
		},
		Now: t0,
	}
	// The mandatory wave goes first, alone.
	if d := Plan(in); !slices.Equal(d.Admit, []string{"k1"}) {
		t.Fatalf("mandatory first: %+v", d)
	}
	in.Clusters = map[string]Cluster{"k1": {Admitted: true, AdmittedAt: t0, Healthy: true, HealthySince: t0}}
	// Then 50% of 4 = 2 in flight at most.
	d := Plan(in)
	if !slices.Equal(d.Admit, []string{"c1", "c2"}) {
		t.Fatalf("window: %+v, want c1 and c2", d)
	}
	in.Clusters["c1"] = Cluster{Admitted: true, AdmittedAt: t0}
	if d := Plan(in); !slices.Equal(d.Admit, []string{"c2"}) {
		t.Fatalf("one in flight: %+v, want c2 only", d)
	}
}

func TestAllAdmitsEverything(t *testing.T) {
	in := Input{Strategy: Strategy{Type: All}, Waves: []Wave{{Clusters: []string{"a", "b"}}, {Clusters: []string{"c"}}}, Now: t0}
	if d := Plan(in); !slices.Equal(d.Admit, []string{"a", "b", "c"}) || d.Phase != Progressing {
		t.Fatalf("All: %+v", d)
	}
}

func TestAmountAndGroups(t *testing.T) {
	if got := (Amount{Value: 25, Percent: true}).Of(3); got != 1 {
		t.Errorf("25%% of 3 = %d, want 1 (rounded up)", got)
	}
	if got := (Amount{Value: 2}).Of(10); got != 2 {
		t.Errorf("2 of 10 = %d", got)
	}
	w := GroupByLabel(map[string]map[string]string{"x": {"env": "dev"}, "y": {}, "z": {"env": "prod"}}, "env", []string{"canary", "prod"})
	if len(w) != 3 || len(w[0].Clusters) != 0 || !slices.Equal(w[1].Clusters, []string{"z"}) || !slices.Equal(w[2].Clusters, []string{"x", "y"}) {
		t.Errorf("GroupByLabel = %+v", w)
	}
}
