package e2e

import (
	"fmt"
	"strings"
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
	s := sharedStackOf(t, 2)
	for _, ns := range []string{"cron-work", "cron-bad"} {
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

	// What a rule does at its minute, suspension, the seed's examples, failed
	// runs, conflicts and missed runs are checked on a fake clock in
	// test/integration (TestCronFederatedHPA); here one rule runs by the real
	// clock, end to end, and the members follow.
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

	})
}
