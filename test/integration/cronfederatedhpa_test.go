package integration

import (
	"fmt"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/yaml"
	testingclock "k8s.io/utils/clock/testing"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/app/controllermanager"
	"github.com/flotilla-io/flotilla/internal/controller/autoscaling/cronfederatedhpa"
	"github.com/flotilla-io/flotilla/internal/controllerkit/fastpath"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// cronStart is where the fake clock of TestCronFederatedHPA starts: half a
// minute before a whole hour, in the controller's zone (rules without a
// timeZone run in the process's local zone, as in Karmada).
var cronStart = time.Date(2026, 1, 5, 8, 59, 30, 0, time.Local)

// cronEnv is a case of TestCronFederatedHPA: an env whose namespace exists on
// the control plane only (the CronFederatedHPA controller runs alone; it
// scales templates, and propagation is the other controllers' business), and
// the fake clock.
type cronEnv struct {
	*env
	clock *testingclock.FakeClock
}

// TestCronFederatedHPA runs the CronFederatedHPA controller alone, on a fake
// clock the test steps from one scheduled minute to the next, so that
// schedules of every minute, of every hour and missed runs are checked in
// seconds. Cases run one after another: they share the clock.
func TestCronFederatedHPA(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	clk := testingclock.NewFakeClock(cronStart)
	m := mode{name: "cronfederatedhpa", suffix: "cron", fastPaths: fastpath.All()}
	only := func(window time.Duration) func(*controllermanager.Options) {
		return func(o *controllermanager.Options) {
			o.Controllers = []string{cronfederatedhpa.ControllerName}
			o.Clock = clk
			o.CronFederatedHPAMissedRunWindow = window
		}
	}
	// A timer armed for a time the test has just set fires at the next
	// change of the fake clock: nudge it without moving it.
	nudge := time.NewTicker(20 * time.Millisecond)
	defer nudge.Stop()
	go func() {
		for range nudge.C {
			clk.Step(0)
		}
	}()
	top := t
	ctl := runControllers(t, m, only(0))
	n := 0
	newCronEnv := func(t *testing.T) *cronEnv {
		n++
		ns := fmt.Sprintf("cron-%d", n)
		e := &env{T: t, ctx: t.Context(), controlPlane: theStack.controlPlane, members: theStack.members, ns: ns, ctl: ctl}
		e.create(e.controlPlane, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}})
		t.Cleanup(func() { deleteNamespace(t, ctl, ns) })
		return &cronEnv{env: e, clock: clk}
	}

	t.Run("workload mode: the template is scaled at the scheduled minute", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.deployment("web", 2))
		e.create(e.controlPlane, e.cron("web", deploymentRef("web"), rule("up", "*/1 * * * *", ptr.To[int32](6), nil, nil)))
		due := e.nextRun("web", "up")
		if due.Second() != 0 || !due.After(clk.Now()) {
			t.Fatalf("nextExecutionTime %s is not the next whole minute after %s", due, clk.Now())
		}
		e.replicasStay("web", 2) // nothing runs before the minute
		clk.SetTime(due)
		e.waitReplicas("web", 6)
		h := e.waitHistory("web", "up", "a successful run", func(h autoscalingv1alpha1.ExecutionHistory) bool { return len(h.SuccessfulExecutions) > 0 })
		run := h.SuccessfulExecutions[0]
		if !run.ScheduleTime.Time.Equal(due) || ptr.Deref(run.AppliedReplicas, 0) != 6 {
			t.Errorf("run %s replicas %v, want scheduled %s with 6", run.ScheduleTime, run.AppliedReplicas, due)
		}
		if next := h.NextExecutionTime; next == nil || !next.Time.Equal(due.Add(time.Minute)) {
			t.Errorf("nextExecutionTime after the run = %v, want %s", next, due.Add(time.Minute))
		}
	})

	t.Run("from zero: a workload at 0 replicas is scaled up", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.deployment("idle", 0))
		e.create(e.controlPlane, e.cron("idle", deploymentRef("idle"), rule("wake", "*/1 * * * *", ptr.To[int32](3), nil, nil)))
		clk.SetTime(e.nextRun("idle", "wake"))
		e.waitReplicas("idle", 3)
	})

	t.Run("FederatedHPA mode: only the bounds a rule sets are written, never swapped", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.deployment("api", 1))
		e.create(e.controlPlane, e.federatedHPA("api", "api", 1, 10))
		e.create(e.controlPlane, e.cron("api", fhpaRef("api"), rule("floor", "*/1 * * * *", nil, ptr.To[int32](5), nil)))
		clk.SetTime(e.nextRun("api", "floor"))
		e.waitBounds("api", 5, 10)
		h := e.waitHistory("api", "floor", "a successful run", func(h autoscalingv1alpha1.ExecutionHistory) bool { return len(h.SuccessfulExecutions) > 0 })
		if run := h.SuccessfulExecutions[0]; ptr.Deref(run.AppliedMinReplicas, 0) != 5 || run.AppliedMaxReplicas != nil || run.AppliedReplicas != nil {
			t.Errorf("history %+v: want only appliedMinReplicas 5", run)
		}
		// A rule asking min 2 max 8 of a FederatedHPA at 5/10 writes both,
		// in an order that never leaves min above max. The edited rule runs
		// five minutes on, not at the old rule's next minute, so that its next
		// run shows when the controller has seen the edit: a clock moved
		// before that would make the controller plan the edited rule after it.
		old := e.nextRunAfter("api", "floor", clk.Now())
		update(e.env, e.controlPlane, &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Name: "api", Namespace: e.ns}}, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			at := fmt.Sprintf("%d * * * *", (clk.Now().Minute()+5)%60)
			c.Spec.Rules = []autoscalingv1alpha1.CronFederatedHPARule{rule("floor", at, nil, ptr.To[int32](2), ptr.To[int32](8))}
		})
		clk.SetTime(e.nextRunAfter("api", "floor", old))
		e.waitBounds("api", 2, 8)
	})

	t.Run("suspend: a suspended rule does not run and has no next time", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.deployment("web", 1))
		e.create(e.controlPlane, e.cron("web", deploymentRef("web"), rule("tick", "*/1 * * * *", ptr.To[int32](2), nil, nil)))
		clk.SetTime(e.nextRun("web", "tick"))
		e.waitReplicas("web", 2)
		e.waitHistory("web", "tick", "a successful run", func(h autoscalingv1alpha1.ExecutionHistory) bool { return len(h.SuccessfulExecutions) == 1 })
		update(e.env, e.controlPlane, &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Name: "web", Namespace: e.ns}}, func(c *autoscalingv1alpha1.CronFederatedHPA) {
			c.Spec.Rules[0].Suspend = ptr.To(true)
		})
		e.waitHistory("web", "tick", "no next run", func(h autoscalingv1alpha1.ExecutionHistory) bool { return h.NextExecutionTime == nil })
		update(e.env, e.controlPlane, e.deployment("web", 0), func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](1) })
		for range 3 {
			clk.Step(time.Minute)
		}
		e.replicasStay("web", 1)
		if h := e.history("web", "tick"); len(h.SuccessfulExecutions) != 1 {
			t.Errorf("a suspended rule ran: %d successful runs", len(h.SuccessfulExecutions))
		}
	})

	t.Run("the seed's two examples run at 9:00 and 10:00 and do what the seed says", func(t *testing.T) {
		e := newCronEnv(t)
		var workload, fhpa *autoscalingv1alpha1.CronFederatedHPA
		for _, b := range reftest.SeedYAMLBlocks(t) {
			if !strings.Contains(b, "kind: CronFederatedHPA") {
				continue
			}
			c := &autoscalingv1alpha1.CronFederatedHPA{}
			if err := yaml.Unmarshal([]byte(b), c); err != nil {
				t.Fatalf("the seed's CronFederatedHPA: %v\n%s", err, b)
			}
			c.Namespace = e.ns
			switch c.Spec.ScaleTargetRef.Kind {
			case "Deployment":
				workload = c
			case "FederatedHPA":
				fhpa = c
			}
		}
		if workload == nil || fhpa == nil {
			t.Fatal("the seed's two CronFederatedHPA examples were not found")
		}
		fhpa.Name += "-fhpa" // both examples share a name; one namespace holds them here
		e.create(e.controlPlane, e.deployment(workload.Spec.ScaleTargetRef.Name, 2))
		e.create(e.controlPlane, e.federatedHPA(fhpa.Spec.ScaleTargetRef.Name, workload.Spec.ScaleTargetRef.Name, 1, 100))
		e.create(e.controlPlane, workload)
		e.create(e.controlPlane, fhpa)
		up, down := e.nextRun(workload.Name, "scale-up"), e.nextRun(workload.Name, "scale-down")
		if up.Hour() != 9 || up.Minute() != 0 || down.Hour() != 10 || down.Minute() != 0 || !down.Before(up) {
			t.Fatalf("scale-up is due at %s and scale-down at %s, want 10:00 today, then 9:00 tomorrow", up, down)
		}
		e.nextRun(fhpa.Name, "scale-down")
		clk.SetTime(down)
		e.waitReplicas(workload.Spec.ScaleTargetRef.Name, 1)
		e.waitBounds(fhpa.Spec.ScaleTargetRef.Name, 1, 100)
		clk.SetTime(up)
		e.waitReplicas(workload.Spec.ScaleTargetRef.Name, 50)
		e.waitBounds(fhpa.Spec.ScaleTargetRef.Name, 50, 100)
	})

	t.Run("a missing target or one without /scale is a failed run with a clear message", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.configMap("plain", nil))
		e.create(e.controlPlane, e.cron("gone", deploymentRef("nope"), rule("up", "*/1 * * * *", ptr.To[int32](2), nil, nil)))
		e.create(e.controlPlane, e.cron("noscale", autoscalingv2.CrossVersionObjectReference{APIVersion: "v1", Kind: "ConfigMap", Name: "plain"},
			rule("up", "*/1 * * * *", ptr.To[int32](2), nil, nil)))
		e.nextRun("gone", "up")
		clk.SetTime(e.nextRun("noscale", "up"))
		failed := func(want string) func(autoscalingv1alpha1.ExecutionHistory) bool {
			return func(h autoscalingv1alpha1.ExecutionHistory) bool {
				return len(h.FailedExecutions) > 0 && strings.Contains(h.FailedExecutions[0].Message, want)
			}
		}
		e.waitHistory("gone", "up", "the failed run", failed("Deployment "+e.ns+"/nope does not exist"))
		e.waitHistory("noscale", "up", "the failed run", failed("has no scale subresource"))
		e.waitEvent("gone", "ScaleFailed")
	})

	t.Run("a workload also managed by a FederatedHPA gets a warning", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.deployment("both", 1))
		e.create(e.controlPlane, e.cron("both", deploymentRef("both"), rule("up", "0 9 1 1 *", ptr.To[int32](2), nil, nil)))
		e.nextRun("both", "up")
		e.create(e.controlPlane, e.federatedHPA("both-fhpa", "both", 1, 4))
		e.waitEvent("both", "ScaleTargetConflict", "both-fhpa")
	})

	t.Run("a run missed while the controller manager was down is made up once at start-up", func(t *testing.T) {
		e := newCronEnv(t)
		e.create(e.controlPlane, e.deployment("web", 1))
		e.create(e.controlPlane, e.cron("web", deploymentRef("web"), rule("tick", "*/1 * * * *", ptr.To[int32](2), nil, nil)))
		missed := e.nextRun("web", "tick")
		ctl.stop()
		clk.SetTime(missed.Add(20 * time.Second))
		ctl = runControllers(top, m, only(5*time.Minute)) // outlives the case: its namespace is deleted first
		e.ctl = ctl
		h := e.waitHistory("web", "tick", "the made-up run", func(h autoscalingv1alpha1.ExecutionHistory) bool { return len(h.SuccessfulExecutions) > 0 })
		made := 0
		for _, run := range h.SuccessfulExecutions {
			if run.ScheduleTime.Time.Equal(missed) {
				made++
			}
		}
		if made != 1 {
			t.Errorf("the missed run %s is in the history %d times: %+v", missed, made, h.SuccessfulExecutions)
		}
		e.waitReplicas("web", 2)
	})
}

// rule is a CronFederatedHPA rule; replicas for a workload target, min and
// max for a FederatedHPA.
func rule(name, schedule string, replicas, minReplicas, maxReplicas *int32) autoscalingv1alpha1.CronFederatedHPARule {
	return autoscalingv1alpha1.CronFederatedHPARule{Name: name, Schedule: schedule, TargetReplicas: replicas,
		TargetMinReplicas: minReplicas, TargetMaxReplicas: maxReplicas}
}

func deploymentRef(name string) autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Name: name}
}

func fhpaRef(name string) autoscalingv2.CrossVersionObjectReference {
	return autoscalingv2.CrossVersionObjectReference{APIVersion: "autoscaling.karmada.io/v1alpha1", Kind: "FederatedHPA", Name: name}
}

// cron is a CronFederatedHPA of the case's namespace.
func (e *cronEnv) cron(name string, target autoscalingv2.CrossVersionObjectReference, rules ...autoscalingv1alpha1.CronFederatedHPARule) *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: autoscalingv1alpha1.CronFederatedHPASpec{ScaleTargetRef: target, Rules: rules}}
}

// federatedHPA is a FederatedHPA of the case's namespace on a Deployment.
func (e *env) federatedHPA(name, deployment string, minReplicas, maxReplicas int32) *autoscalingv1alpha1.FederatedHPA {
	return &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns},
		Spec: autoscalingv1alpha1.FederatedHPASpec{ScaleTargetRef: deploymentRef(deployment), MinReplicas: ptr.To(minReplicas), MaxReplicas: maxReplicas}}
}

// history is a rule's execution history as last written.
func (e *cronEnv) history(name, ruleName string) autoscalingv1alpha1.ExecutionHistory {
	e.Helper()
	c := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := e.controlPlane.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, c); err != nil {
		e.Fatal(err)
	}
	for _, h := range c.Status.ExecutionHistories {
		if h.RuleName == ruleName {
			return h
		}
	}
	return autoscalingv1alpha1.ExecutionHistory{}
}

// waitHistory polls a rule's history until ok holds, and returns it.
func (e *cronEnv) waitHistory(name, ruleName, what string, ok func(autoscalingv1alpha1.ExecutionHistory) bool) autoscalingv1alpha1.ExecutionHistory {
	e.Helper()
	key := &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}
	var got autoscalingv1alpha1.ExecutionHistory
	waitFor(e.env, e.controlPlane, key, name+" rule "+ruleName+": "+what, func(c *autoscalingv1alpha1.CronFederatedHPA) (bool, string) {
		for _, h := range c.Status.ExecutionHistories {
			if h.RuleName == ruleName {
				got = h
				return ok(h), describe(h)
			}
		}
		return false, describe(c.Status.ExecutionHistories)
	})
	return got
}

// nextRun waits for the rule's nextExecutionTime and returns it.
func (e *cronEnv) nextRun(name, ruleName string) time.Time {
	e.Helper()
	return e.nextRunAfter(name, ruleName, time.Time{})
}

// nextRunAfter waits for a nextExecutionTime of the rule after t.
func (e *cronEnv) nextRunAfter(name, ruleName string, t time.Time) time.Time {
	e.Helper()
	h := e.waitHistory(name, ruleName, "a next run after "+t.String(), func(h autoscalingv1alpha1.ExecutionHistory) bool {
		return h.NextExecutionTime != nil && h.NextExecutionTime.After(t)
	})
	return h.NextExecutionTime.Time
}

// waitReplicas waits for the Deployment template's spec.replicas.
func (e *cronEnv) waitReplicas(name string, want int32) {
	e.Helper()
	waitFor(e.env, e.controlPlane, e.deployment(name, 0), fmt.Sprintf("deployment %s at %d replicas", name, want), func(d *appsv1.Deployment) (bool, string) {
		return ptr.Deref(d.Spec.Replicas, -1) == want, fmt.Sprint(ptr.Deref(d.Spec.Replicas, -1))
	})
}

// replicasStay checks, for a moment, that the Deployment template keeps its
// replicas: the controller had the time to do something and did not.
func (e *cronEnv) replicasStay(name string, want int32) {
	e.Helper()
	for end := time.Now().Add(time.Second); time.Now().Before(end); time.Sleep(100 * time.Millisecond) {
		d := &appsv1.Deployment{}
		if err := e.controlPlane.Get(e.ctx, client.ObjectKey{Namespace: e.ns, Name: name}, d); err != nil {
			e.Fatal(err)
		}
		if got := ptr.Deref(d.Spec.Replicas, -1); got != want {
			e.Fatalf("deployment %s scaled to %d at %s, want it to stay at %d", name, got, e.clock.Now(), want)
		}
	}
}

// waitBounds waits for a FederatedHPA's minReplicas and maxReplicas.
func (e *cronEnv) waitBounds(name string, minReplicas, maxReplicas int32) {
	e.Helper()
	key := &autoscalingv1alpha1.FederatedHPA{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: e.ns}}
	waitFor(e.env, e.controlPlane, key, fmt.Sprintf("federatedhpa %s at %d/%d", name, minReplicas, maxReplicas), func(f *autoscalingv1alpha1.FederatedHPA) (bool, string) {
		got := fmt.Sprintf("%d/%d", ptr.Deref(f.Spec.MinReplicas, 1), f.Spec.MaxReplicas)
		return got == fmt.Sprintf("%d/%d", minReplicas, maxReplicas), got
	})
}
