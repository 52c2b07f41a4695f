package e2e

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestFleetCommands uses karmadactl's everyday commands as flotilla has
// them: apply with --all-clusters and -C writes the object and a policy that
// propagates it; logs, exec and describe reach a member with -C (its Cluster
// proxy) and without it (flotilla search's proxy finds the member holding
// the object); rebalance reports each workload's result; a cluster that is
// not joined gets a clear error.
func TestFleetCommands(t *testing.T) {
	s := sharedStackOf(t, 3)
	kc := []string{"--kubeconfig", filepath.Join(s.dataDir, "karmada.config")}
	// The control plane's flags go right after the command, before any "--".
	withKC := func(args []string) []string { return append(append([]string{args[0]}, kc...), args[1:]...) }
	run := func(args ...string) string {
		t.Helper()
		out, ok := s.flotillaCmd(withKC(args)...)
		if !ok {
			t.Fatalf("flotilla %s: %s", strings.Join(args, " "), out)
		}
		return out
	}
	dir := t.TempDir()
	web := filepath.Join(dir, "web.yaml")
	cm := filepath.Join(dir, "cm.yaml")
	// A Namespace applied with the workload gets no policy of its own.
	if err := os.WriteFile(web, []byte("apiVersion: v1\nkind: Namespace\nmetadata: {name: fleetcli}\n---\n"+deploymentYAML("fleetcli", "web", 1, "nginx")), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cm, []byte("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: only-one, namespace: fleetcli}\ndata: {k: v}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if out := run("apply", "-f", web, "--all-clusters"); !strings.Contains(out, "deployment.apps/web created") || !strings.Contains(out, "propagationpolicy.policy.karmada.io/web-deployment applied") {
		t.Errorf("apply --all-clusters: %s", out)
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		s.waitFor(t, "1", m, "deploy", "web", "-n", "fleetcli", "-o", "jsonpath={.status.readyReplicas}")
	}
	if got := s.get("", "clusterpropagationpolicy", "fleetcli-namespace", "-o", "name"); got != "" {
		t.Errorf("apply --all-clusters wrote a policy for the Namespace: %s", got)
	}
	// A cluster that is not joined: nothing is applied.
	if out, ok := s.flotillaCmd(withKC([]string{"apply", "-f", cm, "-C", "member1,member9"})...); ok || !strings.Contains(out, `cluster "member9" is not joined to the control plane; joined clusters: member1, member2, member3`) {
		t.Errorf("apply -C member1,member9: ok=%v %s", ok, out)
	}
	if got := s.get("", "configmap", "only-one", "-n", "fleetcli", "-o", "name"); got != "" {
		t.Errorf("apply -C with an unknown cluster applied the object: %q", got)
	}
	run("apply", "-f", cm, "-C", "member1")
	s.waitFor(t, "v", "member1", "configmap", "only-one", "-n", "fleetcli", "-o", "jsonpath={.data.k}")
	time.Sleep(2 * time.Second)
	if got := s.get("member2", "configmap", "only-one", "-n", "fleetcli", "-o", "name"); got != "" {
		t.Errorf("apply -C member1 reached member2: %q", got)
	}
	// From -C to --all-clusters: the policy's placement widens.
	run("apply", "-f", cm, "--all-clusters")
	s.waitFor(t, "v", "member2", "configmap", "only-one", "-n", "fleetcli", "-o", "jsonpath={.data.k}")

	// With -C: the Cluster proxy.
	if out := run("logs", "-C", "member1", "deploy/web", "-n", "fleetcli"); !strings.Contains(out, "simulated container") {
		t.Errorf("logs -C member1: %s", out)
	}
	if out := run("exec", "-C", "member2", "deploy/web", "-n", "fleetcli", "--", "echo", "from-member2"); lastLine(out) != "from-member2" {
		t.Errorf("exec -C member2: %q", out)
	}
	if out := run("describe", "-C", "member3", "deployment", "web", "-n", "fleetcli"); !strings.Contains(out, "Name:") || !strings.Contains(out, "web") || !strings.Contains(out, "Replicas:") {
		t.Errorf("describe -C member3: %s", out)
	}
	if out, ok := s.flotillaCmd(withKC([]string{"logs", "-C", "nosuch", "deploy/web", "-n", "fleetcli"})...); ok || !strings.Contains(out, `cluster "nosuch" is not joined to the control plane; joined clusters: member1, member2, member3`) {
		t.Errorf("logs -C nosuch: ok=%v %s", ok, out)
	}

	if out, ok := s.flotillaCmd(withKC([]string{"logs", "-C", "member1,member2", "deploy/web", "-n", "fleetcli"})...); ok || !strings.Contains(out, "names one member cluster") {
		t.Errorf("logs -C member1,member2: ok=%v %s", ok, out)
	}
	// Without -C before any registry caches the pods: said at once.
	start := time.Now()
	if out, ok := s.flotillaCmd(withKC([]string{"logs", "deploy/web", "-n", "fleetcli"})...); ok || !strings.Contains(out, "no ResourceRegistry caches pods in namespace fleetcli") {
		t.Errorf("logs without -C, pods not cached: ok=%v %s", ok, out)
	}
	t.Logf("logs without -C, pods not cached: answered in %s", time.Since(start).Round(time.Millisecond))

	// Without -C: the fleet proxy, once the kinds are cached.
	s.mustApply(t, "", `apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: fleetcli}
spec:
  targetCluster: {clusterNames: [member1, member2, member3]}
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, namespace: fleetcli}
  - {apiVersion: apps/v1, kind: ReplicaSet, namespace: fleetcli}
  - {apiVersion: v1, kind: Pod, namespace: fleetcli}
`)
	s.waitFor(t, "True", "", "resourceregistry", "fleetcli", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	eventually(t, time.Minute, "logs without -C", func() (bool, string) {
		out, ok := s.flotillaCmd(withKC([]string{"logs", "deploy/web", "-n", "fleetcli"})...)
		return ok && strings.Contains(out, "simulated container"), out
	})

	// rebalance: the workload rescheduled afresh, its result printed.
	out := run("rebalance", "deployment/web", "-n", "fleetcli", "--name", "cli-rebalance")
	if !strings.Contains(out, "WORKLOAD") || !strings.Contains(out, "deployment/web") || !strings.Contains(out, "Successful") {
		t.Errorf("rebalance: %s", out)
	}
	// Results follow the order the workloads were named.
	out, ok := s.flotillaCmd(withKC([]string{"rebalance", "deployment/nosuch", "deployment/web", "-n", "fleetcli"})...)
	if ok || !strings.Contains(out, "ReferencedBindingNotFound") || strings.Index(out, "deployment/nosuch") > strings.Index(out, "deployment/web") {
		t.Errorf("rebalance of a workload nothing propagates, then web: ok=%v %s", ok, out)
	}
	if out, ok := s.flotillaCmd(withKC([]string{"rebalance", "deploymnet/web", "-n", "fleetcli"})...); ok || !strings.Contains(out, `serves no resource type "deploymnet"`) {
		t.Errorf("rebalance of a misspelt type: ok=%v %s", ok, out)
	}
}
