package e2e

import (
	"fmt"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cronFHPA is a CronFederatedHPA on a Deployment or a FederatedHPA with the
// given rules (YAML list items, indented by four spaces).
func cronFHPA(ns, name, targetAPIVersion, targetKind, target string, rules ...string) string {
	return fmt.Sprintf(`apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: %s, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: %s, kind: %s, name: %s}
  rules:
%s
`, name, ns, targetAPIVersion, targetKind, target, strings.Join(rules, "\n"))
}

func federatedHPA(ns, name, target string, min, max int) string {
	return fmt.Sprintf(`apiVersion: autoscaling.karmada.io/v1alpha1
kind: FederatedHPA
metadata: {name: %s, namespace: %s}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: %s}
  minReplicas: %d
  maxReplicas: %d
`, name, ns, target, min, max)
}

func policyTo(ns, name, kind, target string, clusters ...string) string {
	return fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: %s, namespace: %s}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: %s, name: %s}
  placement:
    clusterAffinity: {clusterNames: [%s]}
    replicaScheduling: {replicaSchedulingType: Divided, replicaDivisionPreference: Aggregated}
`, name, ns, kind, target, strings.Join(clusters, ", "))
}

// history is a jsonpath over a CronFederatedHPA's rule history.
func history(rule, field string) string {
	return fmt.Sprintf(`jsonpath={.status.executionHistories[?(@.ruleName=="%s")].%s}`, rule, field)
}

// waitHistory polls a rule's history field until match accepts it. A tick
// comes within a minute; allow two and the propagation after.
func (s *stack) waitHistory(t *testing.T, ns, name, rule, field string, match func(string) bool) string {
	t.Helper()
	var got string
	eventually(t, 150*time.Second, fmt.Sprintf("%s/%s rule %s: %s", ns, name, rule, field), func() (bool, string) {
		got = s.get("", "cronfhpa", name, "-n", ns, "-o", history(rule, field))
		return match(got), got
	})
	return got
}

func nonEmpty(s string) bool { return s != "" }

func TestCronFederatedHPA(t *testing.T) {
	s := startStack(t, 2)
	for _, ns := range []string{"cron-work", "cron-zero", "cron-fhpa", "cron-suspend", "cron-seed-a", "cron-seed-b", "cron-missing", "cron-bad", "cron-missed"} {
		s.kubectl("", "create", "namespace", ns)
	}

	t.Run("bad input is refused when applied, naming the rule and field", func(t *testing.T) {
		rule := func(r string) string { return cronFHPA("cron-bad", "bad", "apps/v1", "Deployment", "web", r) }
		cases := map[string]struct{ yaml, want string }{
			"a bad cron expression":          {rule(`  - {name: up, schedule: "61 * * * *", targetReplicas: 2}`), "spec.rules[0].schedule"},
			"an unknown time zone":           {rule(`  - {name: up, schedule: "0 9 * * *", timeZone: Mars/Olympus, targetReplicas: 2}`), "spec.rules[0].timeZone"},
			"a duplicate rule name":          {rule("  - {name: up, schedule: \"0 9 * * *\", targetReplicas: 2}\n  - {name: up, schedule: \"0 10 * * *\", targetReplicas: 1}"), "must be unique"},
			"a rule name over 32 characters": {rule(`  - {name: ` + strings.Repeat("x", 33) + `, schedule: "0 9 * * *", targetReplicas: 2}`), "spec.rules[0].name"},
			"targetMinReplicas 0": {cronFHPA("cron-bad", "bad", "autoscaling.karmada.io/v1alpha1", "FederatedHPA", "f",
				`  - {name: up, schedule: "0 9 * * *", targetMinReplicas: 0}`), "targetMinReplicas"},
			"min 9 over max 3": {cronFHPA("cron-bad", "bad", "autoscaling.karmada.io/v1alpha1", "FederatedHPA", "f",
				`  - {name: up, schedule: "0 9 * * *", targetMinReplicas: 9, targetMaxReplicas: 3}`), "targetMinReplicas"},
			"a workload rule without targetReplicas": {rule(`  - {name: up, schedule: "0 9 * * *"}`), "targetReplicas"},
		}
		for name, tc := range cases {
			out, err := s.apply(tc.yaml)
			if err == nil {
				t.Errorf("%s: accepted:\n%s", name, out)
				continue
			}
			if !strings.Contains(out, tc.want) {
				t.Errorf("%s: the refusal does not name %q:\n%s", name, tc.want, out)
			}
		}
	})

	// The rules below tick every minute; they run side by side so that the
	// whole test waits for the same few ticks.
	t.Run("rules", func(t *testing.T) {
		t.Run("workload mode: the template is scaled and the members follow", func(t *testing.T) {
			t.Parallel()
			ns := "cron-work"
			s.mustApply(t, "", deploymentYAML(ns, "web", 2, "nginx"))
			s.mustApply(t, "", strings.Replace(weightedPolicy("web", "web", 1, 1), "namespace: default", "namespace: "+ns, 1))
			s.waitFor(t, "1", "member1", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.waitFor(t, "1", "member2", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.mustApply(t, "", cronFHPA(ns, "web", "apps/v1", "Deployment", "web", `  - {name: up, schedule: "*/1 * * * *", targetReplicas: 6}`))
			next := s.waitHistory(t, ns, "web", "up", "nextExecutionTime", nonEmpty)
			if _, err := time.Parse(time.RFC3339, next); err != nil || !strings.HasSuffix(next, ":00Z") {
				t.Errorf("nextExecutionTime %q is not a whole minute", next)
			}
			s.waitHistory(t, ns, "web", "up", "successfulExecutions[0].appliedReplicas", func(v string) bool { return v == "6" })
			s.waitFor(t, "6", "", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.waitFor(t, "3", "member1", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.waitFor(t, "3", "member2", "deploy", "web", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			sched := s.get("", "cronfhpa", "web", "-n", ns, "-o", history("up", "successfulExecutions[0].scheduleTime"))
			if !strings.HasSuffix(sched, ":00Z") {
				t.Errorf("scheduleTime %q is not the minute the rule was due", sched)
			}
		})

		t.Run("from zero: a workload at 0 replicas is scaled up", func(t *testing.T) {
			t.Parallel()
			ns := "cron-zero"
			s.mustApply(t, "", deploymentYAML(ns, "idle", 0, "nginx"))
			s.mustApply(t, "", policyTo(ns, "idle", "Deployment", "idle", "member1"))
			s.waitFor(t, "0", "member1", "deploy", "idle", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.mustApply(t, "", cronFHPA(ns, "idle", "apps/v1", "Deployment", "idle", `  - {name: wake, schedule: "*/1 * * * *", targetReplicas: 3}`))
			s.waitHistory(t, ns, "idle", "wake", "successfulExecutions[0].appliedReplicas", func(v string) bool { return v == "3" })
			s.waitFor(t, "3", "", "deploy", "idle", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.waitFor(t, "3", "", "rb", "idle-deployment", "-n", ns, "-o", "jsonpath={.spec.replicas}")
			s.waitFor(t, "3", "member1", "deploy", "idle", "-n", ns, "-o", "jsonpath={.spec.replicas}")
		})

		t.Run("FederatedHPA mode: only the bounds a rule sets are written, never swapped", func(t *testing.T) {
			t.Parallel()
			ns := "cron-fhpa"
			s.mustApply(t, "", deploymentYAML(ns, "api", 1, "nginx"))
			s.mustApply(t, "", federatedHPA(ns, "api", "api", 1, 10))
			s.mustApply(t, "", cronFHPA(ns, "api", "autoscaling.karmada.io/v1alpha1", "FederatedHPA", "api", `  - {name: floor, schedule: "*/1 * * * *", targetMinReplicas: 5}`))
			s.waitFor(t, "5/10", "", "fhpa", "api", "-n", ns, "-o", "jsonpath={.spec.minReplicas}/{.spec.maxReplicas}")
			got := s.waitHistory(t, ns, "api", "floor", "successfulExecutions[0]", nonEmpty)
			if !strings.Contains(got, `"appliedMinReplicas":5`) || strings.Contains(got, "appliedMaxReplicas") || strings.Contains(got, `"appliedReplicas"`) {
				t.Errorf("history %s: want only appliedMinReplicas 5", got)
			}
			s.mustApply(t, "", cronFHPA(ns, "api", "autoscaling.karmada.io/v1alpha1", "FederatedHPA", "api", `  - {name: floor, schedule: "*/1 * * * *", targetMinReplicas: 2, targetMaxReplicas: 8}`))
			s.waitFor(t, "2/8", "", "fhpa", "api", "-n", ns, "-o", "jsonpath={.spec.minReplicas}/{.spec.maxReplicas}")
			s.waitHistory(t, ns, "api", "floor", "successfulExecutions[0]", func(v string) bool {
				return strings.Contains(v, `"appliedMinReplicas":2`) && strings.Contains(v, `"appliedMaxReplicas":8`)
			})
		})

		t.Run("suspend: a suspended rule does not run and has no next time", func(t *testing.T) {
			t.Parallel()
			ns := "cron-suspend"
			s.mustApply(t, "", deploymentYAML(ns, "web", 1, "nginx"))
			rule := `  - {name: tick, schedule: "*/1 * * * *", targetReplicas: 2, suspend: %t}`
			s.mustApply(t, "", cronFHPA(ns, "web", "apps/v1", "Deployment", "web", fmt.Sprintf(rule, false)))
			s.waitHistory(t, ns, "web", "tick", "successfulExecutions[0].scheduleTime", nonEmpty)
			s.mustApply(t, "", cronFHPA(ns, "web", "apps/v1", "Deployment", "web", fmt.Sprintf(rule, true)))
			s.waitHistory(t, ns, "web", "tick", "nextExecutionTime", func(v string) bool { return v == "" })
			before := s.get("", "cronfhpa", "web", "-n", ns, "-o", history("tick", "successfulExecutions[*].scheduleTime"))
			time.Sleep(125 * time.Second) // two ticks
			if after := s.get("", "cronfhpa", "web", "-n", ns, "-o", history("tick", "successfulExecutions[*].scheduleTime")); after != before {
				t.Errorf("a suspended rule ran: history %q became %q", before, after)
			}
		})

		t.Run("the seed's two examples, every minute, do what the seed says", func(t *testing.T) {
			t.Parallel()
			var workload, fhpa string
			for _, b := range seedYAMLBlocks(t) {
				if strings.Contains(b, "kind: CronFederatedHPA") && strings.Contains(b, "kind: Deployment") {
					workload = b
				}
				if strings.Contains(b, "kind: CronFederatedHPA") && strings.Contains(b, "kind: FederatedHPA") {
					fhpa = b
				}
			}
			if workload == "" || fhpa == "" {
				t.Fatal("the seed's CronFederatedHPA examples were not found")
			}
			everyMinute := func(b string) string {
				return regexp.MustCompile(`"0 (9|10) \* \* \*"`).ReplaceAllString(b, `"*/1 * * * *"`)
			}
			// Mode 1: nginx is scaled to 50, then to 1, by the two rules in
			// spec order at each tick.
			s.mustApply(t, "", deploymentYAML("cron-seed-a", "nginx", 2, "nginx"))
			s.mustApply(t, "", policyTo("cron-seed-a", "nginx", "Deployment", "nginx", "member1", "member2"))
			if out, err := s.apply(everyMinute(workload), "-n", "cron-seed-a"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			s.waitHistory(t, "cron-seed-a", "nginx-cronfhpa", "scale-up", "successfulExecutions[0].appliedReplicas", func(v string) bool { return v == "50" })
			s.waitHistory(t, "cron-seed-a", "nginx-cronfhpa", "scale-down", "successfulExecutions[0].appliedReplicas", func(v string) bool { return v == "1" })
			s.waitFor(t, "1", "", "deploy", "nginx", "-n", "cron-seed-a", "-o", "jsonpath={.spec.replicas}")
			// Mode 2: nginx-fhpa's minimum is set to 50, then to 1; its
			// maximum is left alone.
			s.mustApply(t, "", deploymentYAML("cron-seed-b", "nginx", 2, "nginx"))
			s.mustApply(t, "", federatedHPA("cron-seed-b", "nginx-fhpa", "nginx", 1, 100))
			if out, err := s.apply(everyMinute(fhpa), "-n", "cron-seed-b"); err != nil {
				t.Fatalf("%v\n%s", err, out)
			}
			s.waitHistory(t, "cron-seed-b", "nginx-cronfhpa", "scale-up", "successfulExecutions[0].appliedMinReplicas", func(v string) bool { return v == "50" })
			s.waitHistory(t, "cron-seed-b", "nginx-cronfhpa", "scale-down", "successfulExecutions[0].appliedMinReplicas", func(v string) bool { return v == "1" })
			s.waitFor(t, "1/100", "", "fhpa", "nginx-fhpa", "-n", "cron-seed-b", "-o", "jsonpath={.spec.minReplicas}/{.spec.maxReplicas}")
		})

		t.Run("a missing target or one without /scale is a failed run with a clear message", func(t *testing.T) {
			t.Parallel()
			ns := "cron-missing"
			s.kubectl("", "create", "configmap", "plain", "-n", ns)
			s.mustApply(t, "", cronFHPA(ns, "gone", "apps/v1", "Deployment", "nope", `  - {name: up, schedule: "*/1 * * * *", targetReplicas: 2}`))
			s.mustApply(t, "", cronFHPA(ns, "noscale", "v1", "ConfigMap", "plain", `  - {name: up, schedule: "*/1 * * * *", targetReplicas: 2}`))
			s.waitHistory(t, ns, "gone", "up", "failedExecutions[0].message", func(v string) bool { return strings.Contains(v, "Deployment cron-missing/nope does not exist") })
			s.waitHistory(t, ns, "noscale", "up", "failedExecutions[0].message", func(v string) bool { return strings.Contains(v, "has no scale subresource") })
			s.waitFor(t, "ScaleFailed", "", "events", "-n", ns, "--field-selector", "involvedObject.name=gone", "-o", "jsonpath={.items[0].reason}")
		})

		t.Run("a workload also managed by a FederatedHPA gets a warning", func(t *testing.T) {
			t.Parallel()
			ns := "cron-fhpa"
			s.mustApply(t, "", deploymentYAML(ns, "both", 1, "nginx"))
			// The CronFederatedHPA first, whose rule runs once a year: the
			// FederatedHPA that comes after it is warned of at once.
			s.mustApply(t, "", cronFHPA(ns, "both", "apps/v1", "Deployment", "both", `  - {name: up, schedule: "0 9 1 1 *", targetReplicas: 2}`))
			s.waitHistory(t, ns, "both", "up", "nextExecutionTime", nonEmpty)
			s.mustApply(t, "", federatedHPA(ns, "both-fhpa", "both", 1, 4))
			s.waitFor(t, "ScaleTargetConflict", "", "events", "-n", ns, "--field-selector", "involvedObject.name=both,involvedObject.kind=CronFederatedHPA", "-o", "jsonpath={.items[0].reason}")
			if msg := s.get("", "events", "-n", ns, "--field-selector", "involvedObject.name=both,involvedObject.kind=CronFederatedHPA", "-o", "jsonpath={.items[0].message}"); !strings.Contains(msg, "both-fhpa") {
				t.Errorf("the warning does not name the FederatedHPA: %q", msg)
			}
		})
	})

	t.Run("a run missed while the controller manager was down is made up once at start-up", func(t *testing.T) {
		ns := "cron-missed"
		s.mustApply(t, "", deploymentYAML(ns, "web", 1, "nginx"))
		s.mustApply(t, "", cronFHPA(ns, "web", "apps/v1", "Deployment", "web", `  - {name: tick, schedule: "*/1 * * * *", targetReplicas: 2, successfulHistoryLimit: 10}`))
		s.waitHistory(t, ns, "web", "tick", "successfulExecutions[0].scheduleTime", nonEmpty)
		// Freeze the controller manager across the next tick, then kill it;
		// flotilla up starts a new one.
		pid := s.controllerManagerPID()
		if pid == 0 {
			t.Fatal("no controller-manager process")
		}
		missed := s.get("", "cronfhpa", "web", "-n", ns, "-o", history("tick", "nextExecutionTime"))
		due, err := time.Parse(time.RFC3339, missed)
		if err != nil {
			t.Fatalf("nextExecutionTime %q: %v", missed, err)
		}
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Until(due) + 3*time.Second)
		if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		// The made-up run keeps its scheduleTime, and happens once.
		got := s.waitHistory(t, ns, "web", "tick", "successfulExecutions[*].scheduleTime", func(v string) bool { return strings.Contains(v, missed) })
		if n := strings.Count(got, missed); n != 1 {
			t.Errorf("the missed run %s is in the history %d times: %s", missed, n, got)
		}
	})
}
