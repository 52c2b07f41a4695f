package e2e

import (
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestRemedy follows a Remedy as a Karmada user writes it: TrafficControl
// while member2's ServiceDomainNameResolutionReady is not True. The
// condition is set as a DNS detector would set it (a status patch of the
// Cluster): member2's status.remedyActions becomes ["TrafficControl"] and
// member1's stays empty; it empties when the condition recovers and when
// the Remedy is deleted. A Remedy with an unknown action or condition type
// is refused. Then the service name resolution detector beside member2
// writes the condition itself: True while it resolves localhost, False once
// a name that does not resolve has failed for the failure threshold (and
// TrafficControl follows), True again after the success threshold.
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

	// The detector beside member2, as a Karmada user runs it, with short
	// thresholds: a name that resolves, then one that does not.
	remedyYAML := `apiVersion: remedy.karmada.io/v1alpha1
kind: Remedy
metadata: {name: e2e-dns}
spec:
  decisionMatches:
  - clusterConditionMatch: {conditionType: ServiceDomainNameResolutionReady, operator: NotEqual, conditionStatus: "True"}
  actions: [TrafficControl]
`
	s.mustApply(t, "", remedyYAML)
	detector := func(host string) *exec.Cmd {
		return background(t, filepath.Join(t.TempDir(), "detector.log"), "service-name-resolution-detector",
			"--cluster-name", "member2", "--karmada-kubeconfig", kc, "--karmada-context", ctx,
			"--leader-elect=false", "--healthz-port", "0", "--coredns-detect-host", host,
			"--coredns-detect-period", "1s", "--coredns-success-threshold", "3s", "--coredns-failure-threshold", "3s")
	}
	stop := func(cmd *exec.Cmd) {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		_ = cmd.Wait()
	}
	const reason = `jsonpath={.status.conditions[?(@.type=="ServiceDomainNameResolutionReady")].reason}`
	good := detector("localhost")
	s.waitFor(t, "ServiceDomainNameResolutionReady", "", "cluster", "member2", "-o", reason)
	s.waitFor(t, "", "", "cluster", "member2", "-o", actions)
	stop(good)
	start := time.Now()
	bad := detector("does-not-resolve.invalid")
	s.waitFor(t, "ServiceDomainNameResolutionFailed", "", "cluster", "member2", "-o", reason)
	s.waitFor(t, `["TrafficControl"]`, "", "cluster", "member2", "-o", actions)
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("the failure was reported after %s, before the 3 s failure threshold", d)
	}
	t.Logf("lookups failing: TrafficControl after %s", time.Since(start).Round(100*time.Millisecond))
	stop(bad)
	start = time.Now()
	detector("localhost")
	s.waitFor(t, "", "", "cluster", "member2", "-o", actions)
	if d := time.Since(start); d < 3*time.Second {
		t.Errorf("the recovery was reported after %s, before the 3 s success threshold", d)
	}
	t.Logf("lookups recovered: TrafficControl lifted after %s", time.Since(start).Round(100*time.Millisecond))
	s.kubectl("", "delete", "remedy", "e2e-dns")

	// Bad input is refused with the allowed values.
	for _, tc := range []struct{ spec, want string }{
		{`{actions: [Isolate]}`, "must be TrafficControl"},
		{`{decisionMatches: [{clusterConditionMatch: {conditionType: Ready, operator: NotEqual, conditionStatus: "true"}}], actions: [TrafficControl]}`, `conditionStatus: Unsupported value: "true"`},
		{`{decisionMatches: [{clusterConditionMatch: {conditionType: ServiceDomainNameResolutonReady, operator: Equal, conditionStatus: "False"}}], actions: [TrafficControl]}`, `spec.decisionMatches[0].clusterConditionMatch.conditionType: Unsupported value: "ServiceDomainNameResolutonReady"`},
	} {
		cmd := kubectl("apply", "-f", "-")
		cmd.Stdin = strings.NewReader("apiVersion: remedy.karmada.io/v1alpha1\nkind: Remedy\nmetadata: {name: e2e-bad}\nspec: " + tc.spec + "\n")
		if out, err := cmd.CombinedOutput(); err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("Remedy spec %s: err=%v, want a refusal saying %q:\n%s", tc.spec, err, tc.want, out)
		}
	}
}
