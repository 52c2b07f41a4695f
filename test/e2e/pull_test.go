package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestPullMode runs member2 in Pull mode (`up --pull-members member2`):
// registered with a bootstrap token, its agent applies Karmada's nginx
// sample there (override included), reports status, corrects drift, keeps
// everything through a 60 s control-plane outage, and its credentials
// reach nothing of member1's.
func TestPullMode(t *testing.T) {
	sample := exampleDir(t, "nginx")
	s := startStack(t, 2, "--pull-members", "member2", "--apply", sample)

	if got := s.kubectl("", "get", "cluster", "member2", "-o", "jsonpath={.spec.syncMode}"); got != "Pull" {
		t.Fatalf("member2 syncMode = %q, want Pull", got)
	}
	if got := s.kubectl("", "get", "cluster", "member1", "-o", "jsonpath={.spec.syncMode}"); got != "Push" {
		t.Fatalf("member1 syncMode = %q, want Push", got)
	}
	// The agent records the topology from the member's nodes, as join does,
	// so that spread by region sees the Pull cluster.
	s.waitFor(t, s.get("member2", "nodes", "-o", `jsonpath={.items[0].metadata.labels.topology\.kubernetes\.io/region}`), "", "cluster", "member2", "-o", "jsonpath={.spec.region}")
	if got := s.get("", "cluster", "member2", "-o", "jsonpath={.spec.region}"); got == "" {
		t.Errorf("the Pull cluster has no spec.region")
	}
	out := s.kubectl("", "get", "clusters")
	var err error
	if !strings.Contains(out, "Pull") {
		t.Errorf("kubectl get clusters does not show the Pull mode:\n%s", out)
	}

	// The sample: one replica each, member2's copy through its agent with
	// member2's override, status aggregated on the control plane.
	for _, m := range []string{"member1", "member2"} {
		s.waitFor(t, "1", m, "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}")
	}
	s.waitFor(t, "staging", "member2", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.env}")
	s.waitFor(t, "2", "", "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}")
	s.waitFor(t, "True", "", "work", "-n", "karmada-es-member2", "-o", "jsonpath={.items[0].status.conditions[?(@.type==\"Applied\")].status}")

	// Drift in the member is reverted by the agent.
	s.kubectl("member2", "label", "deploy", "nginx", "env=edited", "--overwrite")
	s.waitFor(t, "staging", "member2", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.env}")

	// The agent's credentials: its own Works, nothing of member1's.
	agentConfig := s.agentKubeconfig("member2")
	if out, err := kubectlAs(agentConfig, "get", "works", "-n", "karmada-es-member2", "-o", "name"); err != nil || !strings.Contains(out, "work") {
		t.Errorf("the agent cannot list its own Works: %v\n%s", err, out)
	}
	for _, args := range [][]string{
		{"get", "works", "-n", "karmada-es-member1"},
		{"get", "secret", "member1", "-n", "karmada-cluster"},
		{"get", "cluster", "member1"},
		{"get", "deployments", "-n", "default"},
	} {
		out, err := kubectlAs(agentConfig, args...)
		if err == nil || !strings.Contains(out, "forbidden") {
			t.Errorf("the agent's credentials: kubectl %s was not forbidden: %v\n%s", strings.Join(args, " "), err, out)
		}
	}

	// The agents of member2 elect a leader on the control plane, as
	// karmada-agent's do: a second agent stands by and applies nothing.
	holder := s.get("", "lease", "karmada-agent-member2", "-n", "karmada-system", "-o", "jsonpath={.spec.holderIdentity}")
	if holder == "" {
		t.Errorf("the agents' Lease karmada-system/karmada-agent-member2 has no holder")
	}
	m2KC, m2Ctx := s.kubeconfig("member2")
	second := exec.Command(flotillaBin, "agent", "--cluster-name", "member2", "--kubeconfig", m2KC, "--context", m2Ctx,
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	secondLog := filepath.Join(t.TempDir(), "second-agent.log")
	logFile, err := os.Create(secondLog)
	if err != nil {
		t.Fatal(err)
	}
	second.Stdout, second.Stderr = logFile, logFile
	if err := second.Start(); err != nil {
		t.Fatal(err)
	}
	read := func() string { b, _ := os.ReadFile(secondLog); return string(b) }
	eventually(t, time.Minute, "the second agent to wait for the Lease", func() (bool, string) {
		return strings.Contains(read(), "Attempting to acquire leader lease"), read()
	})
	time.Sleep(5 * time.Second) // a few retry periods: it must not take the Lease over
	_ = second.Process.Kill()
	_ = second.Wait()
	logFile.Close()
	if strings.Contains(read(), "Successfully acquired lease") {
		t.Errorf("a second agent of member2 took the Lease while the first held it:\n%s", read())
	}
	if got := s.get("", "lease", "karmada-agent-member2", "-n", "karmada-system", "-o", "jsonpath={.spec.holderIdentity}"); got != holder {
		t.Errorf("the Lease's holder changed from %q to %q", holder, got)
	}

	// The Cluster proxy reaches the Pull member as its impersonator, whose
	// token the agent reported (KubeImpersonator) and whose ClusterRole the
	// agent applied from the unifiedAuth controller's Work: the admin may be
	// impersonated there.
	if got := s.get("", "cluster", "member2", "-o", "jsonpath={.spec.impersonatorSecretRef.name}"); got != "member2-impersonator" {
		t.Errorf("member2's impersonatorSecretRef names %q, want member2-impersonator", got)
	}
	eventually(t, time.Minute, "member2's karmada-impersonator to let the admin be impersonated", func() (bool, string) {
		got := s.get("member2", "clusterrole", "karmada-impersonator", "-o", `jsonpath={.rules[?(@.resources[0]=="users")].resourceNames}`)
		return strings.Contains(got, `"flotilla-admin"`), got
	})
	if out := s.flotilla("get", "deploy", "nginx", "-C", "member2", "--kubeconfig", filepath.Join(s.dataDir, "karmada.config")); !strings.Contains(out, "member2") {
		t.Errorf("flotilla get -C member2 did not reach the Pull member:\n%s", out)
	}

	// Bad input changes nothing: a token the control plane does not know,
	// a CA hash that does not match, a member registered or joined under
	// another name, the control plane itself, a Push-mode join of the Pull
	// name.
	kc := filepath.Join(s.dataDir, "karmada.config")
	cmdLine := strings.Fields(s.flotilla("token", "create", "--print-register-command", "--kubeconfig", kc))
	server, token, hash := cmdLine[len(cmdLine)-5], cmdLine[len(cmdLine)-3], cmdLine[len(cmdLine)-1]
	if !strings.HasPrefix(hash, "sha256:") {
		t.Fatalf("token create --print-register-command printed %q", strings.Join(cmdLine, " "))
	}
	// The command runs as pasted: it names this binary as it was run, not a bare flotilla
	// that may not be on $PATH.
	if _, err := exec.LookPath(cmdLine[0]); err != nil {
		t.Errorf("token create --print-register-command printed %q, whose %q does not run: %v", strings.Join(cmdLine, " "), cmdLine[0], err)
	}
	memberKC, _ := s.kubeconfig("member1")
	cpKC, _ := s.kubeconfig("")
	for _, c := range []struct{ token, hash, kubeconfig, context, want string }{
		{"abcdef.0123456789abcdef", hash, memberKC, "member1", "token"},
		{token, "sha256:" + strings.Repeat("0", 64), memberKC, "member1", "hash"},
		{token, hash, memberKC, "member2", "already registered as \"member2\""},
		{token, hash, memberKC, "member1", "already joined to a control plane as \"member1\""},
		{token, hash, cpKC, "karmada-apiserver", "the control plane itself"},
	} {
		out, err := flotillaOut("register", server, "--token", c.token, "--discovery-token-ca-cert-hash", c.hash, "--cluster-name", "intruder",
			"--kubeconfig", c.kubeconfig, "--context", c.context, "--timeout", "10s")
		if err == nil || !strings.Contains(out, c.want) {
			t.Errorf("register refused for %q: %v\n%s", c.want, err, out)
		}
	}
	if got := s.get("member1", "ns", "karmada-system", "-o", "name"); got != "" {
		t.Errorf("a refused register wrote to the member: %s", got)
	}
	if got := s.get("", "cluster", "intruder", "-o", "name"); got != "" {
		t.Errorf("a refused register left Cluster %q", got)
	}
	out, err = flotillaOut("join", "member2", "--kubeconfig", kc, "--cluster-kubeconfig", memberKC, "--cluster-context", "member1")
	if err == nil || !strings.Contains(out, "Pull-mode") {
		t.Errorf("join of the Pull cluster's name was not refused: %v\n%s", err, out)
	}
	if out, err := flotillaOut("unjoin", "member2", "--kubeconfig", kc); err == nil || !strings.Contains(out, "flotilla unregister member2") {
		t.Errorf("unjoin of a Pull cluster was not refused: %v\n%s", err, out)
	}

	// The control plane's API server stops for 30 s, twice the agent's
	// lease: the member keeps its objects and the agent deletes nothing.
	pid := s.apiServerPID("control-plane")
	if pid == 0 {
		t.Fatal("no control-plane API server")
	}
	uid := s.get("member2", "deploy", "nginx", "-o", "jsonpath={.metadata.uid}")
	if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}()
	for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(5 * time.Second) {
		if got := s.get("member2", "deploy", "nginx", "-o", "jsonpath={.metadata.uid}"); got != uid {
			t.Fatalf("member2's nginx changed while the control plane was away: uid %q, was %q", got, uid)
		}
	}
	if err := syscall.Kill(pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	stopped = false
	// Back: a template change converges on the Pull member.
	eventually(t, 2*time.Minute, "the control plane to answer again", func() (bool, string) {
		_, err := s.client("").CoreV1().Namespaces().Get(context.Background(), "default", metav1.GetOptions{})
		return err == nil, ""
	})
	s.kubectl("", "scale", "deploy", "nginx", "--replicas", "4")
	s.waitFor(t, "2", "member2", "deploy", "nginx", "-o", "jsonpath={.spec.replicas}")
	s.waitFor(t, "True", "", "cluster", "member2", "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}")
	if got := s.get("member2", "deploy", "nginx", "-o", "jsonpath={.metadata.uid}"); got != uid {
		t.Errorf("member2's nginx was re-created after the outage (uid %q, was %q)", got, uid)
	}

	// Unregister while the agent is away for a moment (stopped, its Lease
	// still valid): nothing can finish until it is back. Then it removes
	// what it applied and stops; its credentials and rights are gone on
	// both sides. (The Works go before the execution namespace, which holds
	// the agent's rights to release them.)
	agent := s.agentPID("member2")
	if agent == 0 {
		t.Fatal("no agent process for member2")
	}
	if err := syscall.Kill(agent, syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	out, err = flotillaOut("unregister", "member2", "--kubeconfig", kc, "--cluster-kubeconfig", memberKC, "--cluster-context", "member2", "--wait", "5s")
	if err2 := syscall.Kill(agent, syscall.SIGCONT); err2 != nil {
		t.Fatal(err2)
	}
	if err == nil {
		t.Logf("unregister finished while the agent was stopped:\n%s", out)
	}
	// Again, as a user would after the timeout: it waits for the rest and
	// removes the agent's credentials from the member.
	out = s.flotilla("unregister", "member2", "--kubeconfig", kc, "--cluster-kubeconfig", memberKC, "--cluster-context", "member2")
	if !strings.Contains(out, "unregistered") && !strings.Contains(out, "gone from the control plane already") {
		t.Errorf("unregister said:\n%s", out)
	}
	for what, args := range map[string][]string{
		"Cluster member2":                          {"", "cluster", "member2", "-o", "name"},
		"namespace karmada-es-member2":             {"", "ns", "karmada-es-member2", "-o", "name"},
		"ClusterRole system:karmada:agent:member2": {"", "clusterrole", "system:karmada:agent:member2", "-o", "name"},
		"member2's nginx":                          {"member2", "deploy", "nginx", "-o", "name"},
		"member2's agent credentials":              {"member2", "secret", "-n", "karmada-system", "karmada-kubeconfig", "-o", "name"},
	} {
		eventually(t, time.Minute, what+" to be gone", func() (bool, string) {
			got := s.get(args[0], args[1:]...)
			return got == "", got
		})
	}
	if out, err := flotillaOut("unregister", "member1", "--kubeconfig", kc); err == nil || !strings.Contains(out, "flotilla unjoin") {
		t.Errorf("unregister of a Push cluster was not refused: %v\n%s", err, out)
	}
}

// agentPID returns the pid of the stack's agent of member, or 0.
func (s *stack) agentPID(member string) int {
	return s.pidOf(func(args []string) bool {
		return len(args) > 1 && args[1] == "agent" && slices.Contains(args, "--cluster-name="+member)
	})
}

// agentKubeconfig writes the Pull member's agent credentials (the Secret
// `flotilla register` stored in the member) to a file and returns its path.
func (s *stack) agentKubeconfig(member string) string {
	s.t.Helper()
	sec, err := s.client(member).CoreV1().Secrets("karmada-system").Get(context.Background(), "karmada-kubeconfig", metav1.GetOptions{})
	if err != nil {
		s.t.Fatalf("read %s's agent credentials: %v", member, err)
	}
	path := filepath.Join(s.t.TempDir(), "agent.config")
	if err := os.WriteFile(path, sec.Data["karmada-kubeconfig"], 0o600); err != nil {
		s.t.Fatal(err)
	}
	return path
}

// flotillaOut runs the binary and returns its output and error.
func flotillaOut(args ...string) (string, error) {
	out, err := exec.Command(flotillaBin, args...).CombinedOutput()
	return string(out), err
}

// kubectlAs runs kubectl with another kubeconfig and returns its output.
func kubectlAs(kubeconfig string, args ...string) (string, error) {
	out, err := exec.Command("kubectl", append([]string{"--kubeconfig", kubeconfig}, args...)...).CombinedOutput()
	return string(out), err
}

// TestPullGuideOnTheLocalStack follows the Pull-mode guide on the local
// stack: member2 is unjoined and registered again as edge-1 with its agent
// run by hand; after `down`, `up` still starts the stack (saying that
// member2 stays edge-1 and how to take it back), `unregister edge-1
// --force` finishes without the agent and lists what it left, and the next
// `up` joins member2 again.
func TestPullGuideOnTheLocalStack(t *testing.T) {
	extended(t)
	s := startStack(t, 2, "--bare-members")
	kc := filepath.Join(s.dataDir, "karmada.config")
	members := filepath.Join(s.dataDir, "members.config")
	s.flotilla("unjoin", "member2", "--kubeconfig", kc, "--cluster-kubeconfig", members, "--cluster-context", "member2")
	// Duplicated: bare members have no nodes, so (as in Karmada) they have no
	// room for Divided replicas.
	s.mustApply(t, "", deploymentYAML("default", "edge-app", 1, "nginx")+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: edge-app, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: edge-app}]
  placement: {clusterAffinity: {clusterNames: [edge-1]}}
`)
	cmdLine := strings.Fields(s.flotilla("token", "create", "--print-register-command", "--kubeconfig", kc))
	server, token, hash := cmdLine[len(cmdLine)-5], cmdLine[len(cmdLine)-3], cmdLine[len(cmdLine)-1]
	s.flotilla("register", server, "--token", token, "--discovery-token-ca-cert-hash", hash, "--cluster-name", "edge-1",
		"--kubeconfig", members, "--context", "member2")
	agent := exec.Command(flotillaBin, "agent", "--cluster-name", "edge-1", "--kubeconfig", members, "--context", "member2",
		"--metrics-bind-address", "0", "--health-probe-bind-address", "0")
	if err := agent.Start(); err != nil {
		t.Fatal(err)
	}
	s.waitFor(t, "True", "", "cluster", "edge-1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	s.waitFor(t, "1", "member2", "deploy", "edge-app", "-o", "jsonpath={.spec.replicas}")
	_ = agent.Process.Kill()
	_ = agent.Wait()

	// The stack restarts with member2 still edge-1, and says how to take it back.
	s.flotilla("down", "--data-dir", s.dataDir)
	s.waitNoProcesses()
	out := s.flotilla("up", "--members", "2", "--bare-members", "--detach", "--data-dir", s.dataDir, "--timeout", "8m")
	if !strings.Contains(out, "Flotilla is ready") || !strings.Contains(out, "member2 is a member as edge-1 (Pull mode)") || !strings.Contains(out, "unregister edge-1 --force") {
		t.Fatalf("up after the Pull-mode guide:\n%s", out)
	}

	// Without its agent, unregister finishes with --force and lists what stays.
	out, err := flotillaOut("unregister", "edge-1", "--force", "--wait", "5s", "--kubeconfig", kc)
	if err != nil || !strings.Contains(out, "cluster(edge-1) is unregistered successfully") || !strings.Contains(out, "Deployment default/edge-app") {
		t.Fatalf("unregister --force: %v\n%s", err, out)
	}
	if got := s.get("", "cluster", "edge-1", "-o", "name"); got != "" {
		t.Errorf("edge-1 is still there: %q", got)
	}
	if out, err := flotillaOut("unregister", "edge-1", "--force", "--wait", "0s", "--kubeconfig", kc); err == nil || !strings.Contains(out, "--force needs a --wait") {
		t.Errorf("--force without a wait: %v\n%s", err, out)
	}

	// The next up takes member2 back. (Its old agent credentials are
	// removed first, as unregister --cluster-kubeconfig would.)
	s.kubectl("member2", "delete", "secret", "-n", "karmada-system", "karmada-kubeconfig", "--ignore-not-found")
	s.flotilla("down", "--data-dir", s.dataDir)
	s.waitNoProcesses()
	s.up(2, "--bare-members")
	s.waitFor(t, "True", "", "cluster", "member2", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
}
