package e2e

import (
	"strings"
	"testing"
)

// TestSeedMigrationThenPreemption is the seed's story end to end: an
// application already runs in member1; the same YAML is applied to the
// control plane and the seed's batch-migration policy (Overwrite) adopts it
// in place; then the seed's nginx-pp (priority 10, preemption: Always) takes
// nginx-deploy over and spreads it to member2. The pods in member1 are never
// restarted or replaced.
func TestSeedMigrationThenPreemption(t *testing.T) {
	s := startStack(t, 2, "--feature-gates=PropagationPolicyPreemption=true")
	app := deploymentYAML("foo", "nginx-deploy", 2, "nginx") + "---\n" + deploymentYAML("foo", "other", 1, "nginx")

	// 1. The application runs in member1, created there directly.
	s.kubectl("member1", "create", "namespace", "foo")
	s.mustApply(t, "member1", app)
	s.waitFor(t, "2", "member1", "deploy", "nginx-deploy", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "1", "member1", "deploy", "other", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
	podsBefore := s.get("member1", "pods", "-n", "foo", "-o", "jsonpath={.items[*].metadata.uid}")
	rsBefore := s.get("member1", "rs", "-n", "foo", "-o", "jsonpath={.items[*].metadata.name}")
	if len(strings.Fields(podsBefore)) != 3 || len(strings.Fields(rsBefore)) != 2 {
		t.Fatalf("member1 runs pods %q from ReplicaSets %q; want 3 pods of 2 ReplicaSets", podsBefore, rsBefore)
	}

	// 2. and 3. The same YAML on the control plane, and the seed's policy.
	s.kubectl("", "create", "namespace", "foo")
	s.mustApply(t, "", app)
	var policy string
	for _, b := range seedYAMLBlocks(t) {
		if strings.Contains(b, "name: deployments-pp") {
			policy = reindentUnderSpec(b)
		}
	}
	if policy == "" {
		t.Fatal("the seed's batch-migration policy was not found")
	}
	s.mustApply(t, "", policy)

	// 4. Adopted in place: aggregated status, same pods, same ReplicaSets.
	s.waitFor(t, "2", "", "deploy", "nginx-deploy", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "1", "", "deploy", "other", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "True", "", "rb", "nginx-deploy-deployment", "-n", "foo", "-o", "jsonpath={.status.conditions[?(@.type=='FullyApplied')].status}")
	unchanged := func(when string) {
		t.Helper()
		if got := s.get("member1", "pods", "-n", "foo", "-o", "jsonpath={.items[*].metadata.uid}"); got != podsBefore {
			t.Errorf("%s: member1's pods changed from %q to %q", when, podsBefore, got)
		}
		if got := s.get("member1", "rs", "-n", "foo", "-o", "jsonpath={.items[*].metadata.name}"); got != rsBefore {
			t.Errorf("%s: member1's ReplicaSets changed from %q to %q", when, rsBefore, got)
		}
		if got := s.get("member1", "pods", "-n", "foo", "-o", "jsonpath={.items[*].status.containerStatuses[*].restartCount}"); strings.Trim(got, "0 ") != "" {
			t.Errorf("%s: restart counts %q", when, got)
		}
	}
	unchanged("after the migration")

	// 5. The seed's nginx-pp preempts deployments-pp for nginx-deploy.
	var preempt string
	for _, b := range seedYAMLBlocks(t) {
		if strings.Contains(b, "name: nginx-pp") {
			preempt = b
		}
	}
	if preempt == "" {
		t.Fatal("the seed's nginx-pp was not found")
	}
	if out, err := s.apply(preempt, "-n", "foo"); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	s.waitFor(t, "2", "member2", "deploy", "nginx-deploy", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "4", "", "deploy", "nginx-deploy", "-n", "foo", "-o", "jsonpath={.status.readyReplicas}")
	// The claim is nginx-pp's alone, on the template and on its binding.
	for _, obj := range []string{"deploy/nginx-deploy", "rb/nginx-deploy-deployment"} {
		s.waitFor(t, "nginx-pp", "", obj, "-n", "foo", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}")
		meta := s.get("", obj, "-n", "foo", "-o", "jsonpath={.metadata.labels} {.metadata.annotations}")
		if strings.Contains(meta, "deployments-pp") || strings.Contains(meta, "clusterpropagationpolicy") {
			t.Errorf("%s keeps something of the policy it was taken from: %s", obj, meta)
		}
	}
	if got := s.get("", "deploy", "other", "-n", "foo", "-o", "jsonpath={.metadata.annotations.propagationpolicy\\.karmada\\.io/name}"); got != "deployments-pp" {
		t.Errorf("the Deployment nginx-pp does not select was taken from deployments-pp: claimed by %q", got)
	}
	s.waitFor(t, "PreemptPolicySucceed", "", "events", "-n", "foo", "--field-selector", "involvedObject.name=nginx-deploy,reason=PreemptPolicySucceed", "-o", "jsonpath={.items[0].reason}")
	msg := s.get("", "events", "-n", "foo", "--field-selector", "involvedObject.name=nginx-deploy,reason=PreemptPolicySucceed", "-o", "jsonpath={.items[0].message}")
	if !strings.Contains(msg, "nginx-pp") || !strings.Contains(msg, "deployments-pp") {
		t.Errorf("the preemption event does not name both policies: %q", msg)
	}
	if got := s.get("member2", "deploy", "other", "-n", "foo", "-o", "name"); got != "" {
		t.Errorf("a Deployment nginx-pp does not select went to member2: %s", got)
	}
	unchanged("after the preemption")
}
