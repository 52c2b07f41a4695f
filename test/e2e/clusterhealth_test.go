package e2e

import (
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestClusterHealthThresholds checks that a member's Ready condition
// follows its health only past Karmada's thresholds (30 s each by
// default): a 10 s outage changes nothing; a longer one makes the cluster
// NotReady and tainted cluster.karmada.io/not-ready:NoSchedule, while its
// placements stay (Failover is off); recovery clears both. Deleting and
// restoring the credentials Secret within seconds never flips Ready.
func TestClusterHealthThresholds(t *testing.T) {
	extended(t)
	s := startStack(t, 2)
	ready := func() string {
		return s.get("", "cluster", "member1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`)
	}
	taints := func() string {
		return s.get("", "cluster", "member1", "-o", `jsonpath={range .spec.taints[*]}{.key}:{.effect} {end}`)
	}
	// Each healthy probe renews the cluster's Lease, as in Karmada.
	s.waitFor(t, "member1", "", "lease", "member1", "-n", "karmada-cluster", "-o", "jsonpath={.spec.holderIdentity}")
	s.kubectl("", "create", "namespace", "health")
	s.mustApply(t, "", deploymentYAML("health", "web", 4, "nginx")+"---\n"+strings.Replace(policyTo("health", "web", "Deployment", "web", "member1", "member2"), "Aggregated", "Weighted", 1))
	s.waitFor(t, "member1=2 member2=2", "", "rb", "web-deployment", "-n", "health", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`)
	watchReady := func(d time.Duration) {
		t.Helper()
		for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(time.Second) {
			if got := ready(); got != "True" {
				t.Fatalf("member1 Ready became %q inside the threshold", got)
			}
		}
	}

	pid := s.apiServerPID("member1")
	if pid == 0 {
		t.Fatal("no member1 API server")
	}
	stopped := false
	stop := func(b bool) {
		sig := syscall.SIGCONT
		if b {
			sig = syscall.SIGSTOP
		}
		if err := syscall.Kill(pid, sig); err != nil {
			t.Fatal(err)
		}
		stopped = b
	}
	defer func() {
		if stopped {
			_ = syscall.Kill(pid, syscall.SIGCONT)
		}
	}()

	// A 10 s outage: nothing changes.
	stop(true)
	watchReady(10 * time.Second)
	stop(false)
	watchReady(15 * time.Second)

	// A long outage: NotReady after the threshold, tainted, nothing moves.
	stop(true)
	down := time.Now()
	watchReady(20 * time.Second)
	eventually(t, 2*time.Minute, "member1 to become NotReady", func() (bool, string) {
		got := ready()
		return got == "False", got
	})
	if d := time.Since(down); d < 30*time.Second {
		t.Errorf("member1 became NotReady %s after it stopped, inside the 30s failure threshold", d.Round(time.Second))
	}
	eventually(t, 30*time.Second, "the not-ready taint", func() (bool, string) {
		got := taints()
		return strings.Contains(got, "cluster.karmada.io/not-ready:NoSchedule"), got
	})
	if got := s.get("", "rb", "web-deployment", "-n", "health", "-o", `jsonpath={range .spec.clusters[*]}{.name}={.replicas} {end}`); got != "member1=2 member2=2" {
		t.Errorf("with Failover off the placement changed while member1 was down: %q", got)
	}
	stop(false)
	recovered := time.Now()
	for ready() != "True" {
		if time.Since(recovered) > 4*time.Minute {
			cond := s.get("", "cluster", "member1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")]}`)
			t.Fatalf("member1 not Ready 4 minutes after SIGCONT; condition: %s\ncontroller-manager log about member1:\n%s", cond, s.logLines("flotilla-controller-manager", "member1", 40))
		}
		time.Sleep(time.Second)
	}
	t.Logf("member1 Ready again %s after SIGCONT", time.Since(recovered).Round(time.Second))
	eventually(t, 30*time.Second, "the not-ready taint to go", func() (bool, string) {
		got := taints()
		return !strings.Contains(got, "not-ready"), got
	})

	// Credentials rotated: the Secret deleted and restored within seconds.
	secret := s.kubectl("", "get", "secret", "member1", "-n", "karmada-cluster", "-o", "yaml")
	s.kubectl("", "delete", "secret", "member1", "-n", "karmada-cluster")
	time.Sleep(5 * time.Second)
	s.mustApply(t, "", stripServerFields(secret))
	watchReady(40 * time.Second)
}

// stripServerFields drops the metadata fields the API server owns from a
// kubectl -o yaml dump, so it can be created again. Only the object's own
// (two-space indented) fields go: an owner reference keeps its uid.
func stripServerFields(yaml string) string {
	var out []string
	for _, l := range strings.Split(yaml, "\n") {
		if strings.HasPrefix(l, "  resourceVersion:") || strings.HasPrefix(l, "  uid:") || strings.HasPrefix(l, "  creationTimestamp:") {
			continue
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
