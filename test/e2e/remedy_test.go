package e2e

import (
	"fmt"
	"os/exec"
	"strings"
	"testing"
)

// TestRemedy follows a Remedy as a Karmada user writes it: TrafficControl
// while member2's ServiceDomainNameResolutionReady is not True. The
// condition is set as a DNS detector would set it (a status patch of the
// Cluster): member2's status.remedyActions becomes ["TrafficControl"] and
// member1's stays empty; it empties when the condition recovers and when
// the Remedy is deleted. A Remedy with an unknown action or condition type
// is refused.
func TestRemedy(t *testing.T) {
	s := sharedStackOf(t, 3)
	const actions = "jsonpath={.status.remedyActions}"
	// dns sets member2's ServiceDomainNameResolutionReady to status.
	dns := func(status string) {
		t.Helper()
		cond := fmt.Sprintf(`{"type":"ServiceDomainNameResolutionReady","status":%q,"reason":"ServiceDomainNameResolution%s","message":"set by the test","lastTransitionTime":"2026-01-01T00:00:00Z"}`,
			status, map[string]string{"True": "Ready", "False": "Failed"}[status])
		idx := -1
		for i, typ := range strings.Fields(s.get("", "cluster", "member2", "-o", `jsonpath={range .status.conditions[*]}{.type} {end}`)) {
			if typ == "ServiceDomainNameResolutionReady" {
				idx = i
			}
		}
		patch := fmt.Sprintf(`[{"op":"add","path":"/status/conditions/-","value":%s}]`, cond)
		if idx >= 0 {
			patch = fmt.Sprintf(`[{"op":"replace","path":"/status/conditions/%d","value":%s}]`, idx, cond)
		}
		s.kubectl("", "patch", "cluster", "member2", "--subresource=status", "--type=json", "-p", patch)
	}
	defer dns("True")

	s.mustApply(t, "", `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: e2e-dns}
spec:
  clusterAffinity: {clusterNames: [member1, member2]}
  decisionMatches:
  - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: NotEqual, conditionStatus: "True"}
  actions: [TrafficControl]
`)
	kc, ctx := s.kubeconfig("")
	kubectl := func(args ...string) *exec.Cmd {
		return exec.Command("kubectl", append([]string{"--kubeconfig", kc, "--context", ctx}, args...)...)
	}
	defer func() { _ = kubectl("delete", "remedy", "e2e-dns", "--ignore-not-found").Run() }()
	dns("False")
	s.waitFor(t, `["TrafficControl"]`, "", "cluster", "member2", "-o", actions)
	if got := s.get("", "cluster", "member1", "-o", actions); got != "" {
		t.Errorf("member1, whose DNS condition is absent, has remedyActions %s", got)
	}
	if got := s.get("", "cluster", "member2", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`); got != "True" {
		t.Errorf("member2's Ready is %q beside the detector's condition, want True", got)
	}
	dns("True")
	s.waitFor(t, "", "", "cluster", "member2", "-o", actions)
	dns("False")
	s.waitFor(t, `["TrafficControl"]`, "", "cluster", "member2", "-o", actions)
	s.kubectl("", "delete", "remedy", "e2e-dns")
	s.waitFor(t, "", "", "cluster", "member2", "-o", actions)

	// Bad input is refused with the allowed values.
	for _, tc := range []struct{ spec, want string }{
		{`{actions: [Isolate]}`, "must be TrafficControl"},
		{`{decisionMatches: [{clusterConditionMatch: {conditionType: ServiceDomainNameResolutonReady, operator: Equal, conditionStatus: "False"}}], actions: [TrafficControl]}`, `spec.decisionMatches[0].clusterConditionMatch.conditionType: Unsupported value: "ServiceDomainNameResolutonReady"`},
	} {
		cmd := kubectl("apply", "-f", "-")
		cmd.Stdin = strings.NewReader("apiVersion: remedy.karmada.io/v1alpha1\nkind: Remedy\nmetadata: {name: e2e-bad}\nspec: " + tc.spec + "\n")
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("Remedy spec %s: err=%v, want a refusal saying %q:\n%s", tc.spec, err, tc.want, out)
		}
	}
}
