package e2e

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// sighting is what one member runs of the web Deployment, and since when:
// its image, with "+unschedulable" when its pods can never be scheduled
// (the nodeSelector of the failing change).
type sighting struct {
	at    time.Time
	value string
}

// sampler records, every 100 ms, what each member runs, so that the test
// can say no member ever saw a rendering out of order.
type sampler struct {
	mu   sync.Mutex
	seen map[string][]sighting // member -> distinct values in order
	stop context.CancelFunc
	done chan struct{}
}

func startSampler(t *testing.T, s *stack, members []string) *sampler {
	ctx, cancel := context.WithCancel(context.Background())
	sm := &sampler{seen: map[string][]sighting{}, stop: cancel, done: make(chan struct{})}
	clients := map[string]kubernetes.Interface{}
	for _, m := range members {
		clients[m] = s.client(m)
	}
	go func() {
		defer close(sm.done)
		for ctx.Err() == nil {
			for _, m := range members {
				d, err := clients[m].AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
				if err != nil {
					continue
				}
				v := d.Spec.Template.Spec.Containers[0].Image
				if len(d.Spec.Template.Spec.NodeSelector) > 0 {
					v += "+unschedulable"
				}
				sm.mu.Lock()
				if l := sm.seen[m]; len(l) == 0 || l[len(l)-1].value != v {
					sm.seen[m] = append(l, sighting{at: time.Now(), value: v})
				}
				sm.mu.Unlock()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	t.Cleanup(func() { cancel(); <-sm.done })
	return sm
}

// values is the distinct values member ran, in order.
func (sm *sampler) values(member string) []string {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	var out []string
	for _, s := range sm.seen[member] {
		out = append(out, s.value)
	}
	return out
}

// firstSeen is when member first ran value (zero if never).
func (sm *sampler) firstSeen(member, value string) time.Time {
	sm.mu.Lock()
	defer sm.mu.Unlock()
	for _, s := range sm.seen[member] {
		if s.value == value {
			return s.at
		}
	}
	return time.Time{}
}

// TestStagedRollout follows the staged-rollouts guide on three members
// labelled env=canary, env=prod, env=prod, under the guide's RolloutStrategy
// (waves by env, canary first, one prod cluster at a time): a `kubectl set
// image` reaches the canary first and prod only once the canary has been
// Healthy for minSuccessTime; a change whose pods never become Ready stops
// the rollout at the canary (RolloutPaused, naming it) and `flotilla
// rollout abort` takes the canary back; a second change mid-rollout and a
// kill -9 of the controller manager still end with every member on the
// newest image, and no member ever ran the renderings out of order. Bad
// strategies are refused at admission, naming the field.
func TestStagedRollout(t *testing.T) {
	s := startStack(t, 3)
	kc, _ := s.kubeconfig("")
	s.kubectl("", "label", "cluster", "member1", "env=canary")
	s.kubectl("", "label", "cluster", "member2", "member3", "env=prod")
	const minSuccess = 8 * time.Second
	s.mustApply(t, "", fmt.Sprintf(`apiVersion: rollout.flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: canary-first, namespace: default}
spec:
  type: ProgressivePerGroup
  groupBy: {clusterLabel: env}
  groups: [canary, prod]
  maxConcurrency: 1
  minSuccessTime: %s
  progressDeadline: 5m
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: default
  annotations: {rollout.flotilla.io/strategy: canary-first}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2, member3]}
---
%s`, minSuccess, strings.Replace(deploymentYAML("default", "web", 2, "nginx:1"), "name: app,", "name: web,", 1)))
	members := []string{"member1", "member2", "member3"}
	progressing := func() (reason, status, msg string) {
		out := s.get("", "rb", "web-deployment", "-o", `jsonpath={.status.conditions[?(@.type=="Progressing")].reason}|{.status.conditions[?(@.type=="Progressing")].status}|{.status.conditions[?(@.type=="Progressing")].message}`)
		parts := strings.SplitN(out, "|", 3)
		for len(parts) < 3 {
			parts = append(parts, "")
		}
		return parts[0], parts[1], parts[2]
	}
	waitReason := func(want string, within time.Duration) {
		t.Helper()
		eventually(t, within, "Progressing "+want, func() (bool, string) {
			r, _, m := progressing()
			return r == want, r + ": " + m
		})
	}
	waitAll := func(image string, within time.Duration) {
		t.Helper()
		for _, m := range members {
			eventually(t, within, m+" to run "+image, func() (bool, string) {
				got := s.get(m, "deploy", "web", "-n", "default", "-o", "jsonpath={.spec.template.spec.containers[0].image}")
				return got == image, got
			})
		}
	}
	// The first placement is not held.
	waitAll("nginx:1", 2*time.Minute)
	waitReason("RolloutSucceeded", time.Minute)
	sm := startSampler(t, s, members)

	t.Run("set image reaches the canary first, then prod one cluster at a time after minSuccessTime", func(t *testing.T) {
		s.kubectl("", "set", "image", "deployment/web", "web=nginx:2")
		waitAll("nginx:2", 3*time.Minute)
		waitReason("RolloutSucceeded", time.Minute)
		canary := sm.firstSeen("member1", "nginx:2")
		for _, m := range []string{"member2", "member3"} {
			// The sampler polls each member every 100 ms or so: allow for it.
			if at := sm.firstSeen(m, "nginx:2"); at.Sub(canary) < minSuccess-500*time.Millisecond {
				t.Errorf("%s ran nginx:2 %s after the canary, before the canary's minSuccessTime of %s", m, at.Sub(canary), minSuccess)
			}
		}
		// maxConcurrency 1: the second prod cluster waits for the first's soak.
		first, second := sm.firstSeen("member2", "nginx:2"), sm.firstSeen("member3", "nginx:2")
		if d := second.Sub(first); d < minSuccess-time.Second {
			t.Errorf("member3 ran nginx:2 %s after member2; with maxConcurrency 1 it waits for member2's minSuccessTime (%s)", d, minSuccess)
		}
		out := s.flotilla("rollout", "status", "deployment/web", "--kubeconfig", kc)
		for _, want := range []string{"RolloutSucceeded", "canary", "prod", "member3"} {
			if !strings.Contains(out, want) {
				t.Errorf("flotilla rollout status does not say %q:\n%s", want, out)
			}
		}
		events := s.kubectl("", "get", "events", "-n", "default", "--field-selector", "involvedObject.kind=Deployment,involvedObject.name=web", "-o", "jsonpath={.items[*].reason}")
		for _, want := range []string{"RolloutProgressing", "RolloutSucceeded"} {
			if !strings.Contains(events, want) {
				t.Errorf("the Deployment has no %s event: %s", want, events)
			}
		}
	})

	t.Run("a canary that never becomes Healthy pauses the rollout; abort takes it back", func(t *testing.T) {
		s.kubectl("", "patch", "rolloutstrategy", "canary-first", "-n", "default", "--type=merge", "-p", `{"spec":{"progressDeadline":"20s"}}`)
		s.kubectl("", "patch", "deployment", "web", "-n", "default", "--type=merge", "-p",
			`{"spec":{"template":{"spec":{"nodeSelector":{"e2e.flotilla.io/no-such-node":"true"}}}}}`)
		waitReason("RolloutPaused", 2*time.Minute)
		_, status, msg := progressing()
		if status != "False" || !strings.Contains(msg, "member1") || !strings.Contains(msg, "progressDeadline") {
			t.Errorf("Progressing is %s: %s; want False naming member1 and the progressDeadline", status, msg)
		}
		explain := s.flotilla("explain", "deployment", "web", "-n", "default", "--kubeconfig", kc)
		if !strings.Contains(explain, "Rollout:") || !strings.Contains(explain, "held by the staged rollout") {
			t.Errorf("flotilla explain does not say the rollout holds prod:\n%s", explain)
		}
		out := s.flotilla("rollout", "abort", "deployment/web", "--kubeconfig", kc)
		if !strings.Contains(out, "aborted") {
			t.Errorf("abort printed %q", out)
		}
		eventually(t, time.Minute, "member1 back to the previous rendering", func() (bool, string) {
			got := s.get("member1", "deploy", "web", "-n", "default", "-o", "jsonpath={.spec.template.spec.containers[0].image}|{.spec.template.spec.nodeSelector}")
			return got == "nginx:2|", got
		})
		waitReason("RolloutFailed", 30*time.Second)
		for _, m := range []string{"member2", "member3"} {
			if vs := sm.values(m); slices.Contains(vs, "nginx:2+unschedulable") {
				t.Errorf("%s ran the failing change: %v", m, vs)
			}
		}
	})

	t.Run("a second change mid-rollout and a kill -9 of the controller manager", func(t *testing.T) {
		s.kubectl("", "patch", "deployment", "web", "-n", "default", "--type=json", "-p",
			`[{"op":"remove","path":"/spec/template/spec/nodeSelector"},{"op":"replace","path":"/spec/template/spec/containers/0/image","value":"nginx:3"}]`)
		eventually(t, time.Minute, "the canary to run nginx:3", func() (bool, string) {
			return !sm.firstSeen("member1", "nginx:3").IsZero(), strings.Join(sm.values("member1"), " ")
		})
		s.kubectl("", "set", "image", "deployment/web", "web=nginx:4")
		killControllerManager(t, s)
		waitAll("nginx:4", 4*time.Minute)
		waitReason("RolloutSucceeded", 2*time.Minute)
		canary := sm.firstSeen("member1", "nginx:4")
		for _, m := range []string{"member2", "member3"} {
			if got, want := sm.values(m), []string{"nginx:1", "nginx:2", "nginx:4"}; !slices.Equal(got, want) {
				t.Errorf("%s ran %v, want %v", m, got, want)
			}
			if at := sm.firstSeen(m, "nginx:4"); at.Before(canary) {
				t.Errorf("%s ran nginx:4 before the canary", m)
			}
		}
		if got, want := sm.values("member1"), []string{"nginx:1", "nginx:2", "nginx:2+unschedulable", "nginx:2", "nginx:3", "nginx:4"}; !slices.Equal(got, want) {
			t.Errorf("the canary ran %v, want %v", got, want)
		}
	})

	t.Run("bad strategies are refused at admission, naming the field", func(t *testing.T) {
		for _, tc := range []struct{ spec, want string }{
			{"type: Canary", `spec.type: Unsupported value: "Canary"`},
			{"type: Progressive\n  maxConcurrency: -1", "spec.maxConcurrency: Invalid value"},
			{"type: All\n  minSuccessTime: 1m\n  progressDeadline: 30s", "spec.progressDeadline: Invalid value"},
		} {
			out, err := s.apply("apiVersion: rollout.flotilla.io/v1alpha1\nkind: RolloutStrategy\nmetadata: {name: bad, namespace: default}\nspec:\n  " + tc.spec + "\n")
			if err == nil || !strings.Contains(out, tc.want) {
				t.Errorf("%q: want a refusal containing %q, got %v:\n%s", tc.spec, tc.want, err, out)
			}
		}
	})
}

// killControllerManager kill -9s the stack's controller manager; the
// stack restarts it.
func killControllerManager(t *testing.T, s *stack) {
	t.Helper()
	for _, p := range s.processes() {
		pid, rest, _ := strings.Cut(p, ": ")
		if !strings.Contains(rest, " controller-manager ") || strings.Contains(rest, "component") {
			continue
		}
		n, err := strconv.Atoi(pid)
		if err != nil {
			continue
		}
		if err := syscall.Kill(n, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		return
	}
	t.Fatalf("no controller manager among %v", s.processes())
}
