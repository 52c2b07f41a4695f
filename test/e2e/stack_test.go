package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// stack is a `flotilla up --detach` running from a temp data dir.
type stack struct {
	t       *testing.T
	dataDir string
	shared  *sharedStack // nil for a stack of the test's own
}

// newStack gives a test a data dir for a stack that is stopped, with every
// process gone, when the test ends. e2e tests are skipped with -short.
func newStack(t *testing.T) *stack {
	t.Helper()
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	inLane(t, laneOwnStack)
	s := &stack{t: t, dataDir: t.TempDir()}
	t.Cleanup(func() {
		s.flotilla("down", "--data-dir", s.dataDir)
		s.waitNoProcesses()
	})
	return s
}

func startStack(t *testing.T, members int, extra ...string) *stack {
	t.Helper()
	s := newStack(t)
	s.up(members, extra...)
	return s
}

func (s *stack) up(members int, extra ...string) {
	s.t.Helper()
	s.upWith(append([]string{"--members", fmt.Sprint(members)}, extra...)...)
}

// upWith runs `flotilla up --detach` with args, one stack starting at a time.
func (s *stack) upWith(args ...string) {
	s.t.Helper()
	starting.Lock()
	defer starting.Unlock()
	out := s.flotilla(append([]string{"up", "--detach", "--data-dir", s.dataDir, "--timeout", "8m"}, args...)...)
	if !strings.Contains(out, "Flotilla is ready") {
		s.t.Fatalf("up did not report readiness:\n%s", out)
	}
}

// flotilla runs the binary and fails the test on a non-zero exit.
func (s *stack) flotilla(args ...string) string {
	s.t.Helper()
	cmd := exec.Command(flotillaBin, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		s.t.Fatalf("flotilla %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func (s *stack) kubeconfig(member string) (path, context string) {
	if member == "" {
		return filepath.Join(s.dataDir, "karmada.config"), localstack.ControlPlaneContext
	}
	return filepath.Join(s.dataDir, "members.config"), member
}

// kubectl runs the machine's kubectl against the control plane ("") or a member.
func (s *stack) kubectl(member string, args ...string) string {
	s.t.Helper()
	kc, ctx := s.kubeconfig(member)
	cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kc, "--context", ctx}, args...)...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		s.t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

func (s *stack) client(member string) kubernetes.Interface {
	s.t.Helper()
	cfg, err := s.restConfig(member)
	if err != nil {
		s.t.Fatal(err)
	}
	return kubernetes.NewForConfigOrDie(cfg)
}

// restConfig reaches the control plane ("") or a member through the stack's kubeconfigs.
func (s *stack) restConfig(member string) (*rest.Config, error) {
	kc, ctx := s.kubeconfig(member)
	return clientcmd.NewNonInteractiveDeferredLoadingClientConfig(
		&clientcmd.ClientConfigLoadingRules{ExplicitPath: kc}, &clientcmd.ConfigOverrides{CurrentContext: ctx}).ClientConfig()
}

// processes lists the live processes of the stack.
func (s *stack) processes() []string { return processesOf(s.dataDir) }

func (s *stack) waitNoProcesses() {
	s.t.Helper()
	eventually(s.t, time.Minute, "no stack process left", func() (bool, string) {
		p := s.processes()
		return len(p) == 0, strings.Join(p, "\n")
	})
}

// eventually polls cond every 250ms until it holds or the deadline passes.
// logLines returns the last n lines of a component's log in the stack's
// data dir that contain substr, for failure messages.
func (s *stack) logLines(component, substr string, n int) string {
	data, _ := os.ReadFile(filepath.Join(s.dataDir, "logs", component+".log"))
	var hits []string
	for _, l := range strings.Split(string(data), "\n") {
		if strings.Contains(l, substr) {
			hits = append(hits, l)
		}
	}
	if len(hits) > n {
		hits = hits[len(hits)-n:]
	}
	return strings.Join(hits, "\n")
}

func eventually(t *testing.T, timeout time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	last := ""
	for {
		ok, status := cond()
		if ok {
			return
		}
		last = status
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s; last status: %s", timeout, what, last)
		}
		time.Sleep(250 * time.Millisecond)
	}
}

func deployment(name string, replicas int32) *appsv1.Deployment {
	labels := map[string]string{"app": name}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(replicas),
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec:       corev1.PodSpec{Containers: []corev1.Container{{Name: "nginx", Image: "nginx"}}},
			},
		},
	}
}

func TestLocalStack(t *testing.T) {
	s := sharedStackOf(t, 2)
	ctx := context.Background()

	t.Run("every API server answers through client-go and kubectl", func(t *testing.T) {
		for _, c := range []string{"", "member1", "member2"} {
			v, err := s.client(c).Discovery().ServerVersion()
			if err != nil {
				t.Fatalf("%q: %v", c, err)
			}
			if !strings.HasPrefix(v.GitVersion, "v1.37") && !strings.HasPrefix(v.GitVersion, "v0.0.0") {
				t.Errorf("%q serves %s, want Kubernetes 1.37", c, v.GitVersion)
			}
			if out := s.kubectl(c, "get", "ns", "default", "-o", "name"); strings.TrimSpace(out) != "namespace/default" {
				t.Errorf("kubectl get ns default on %q: %q", c, out)
			}
		}
	})

	t.Run("member nodes are Ready and carry topology labels", func(t *testing.T) {
		for i, m := range []string{"member1", "member2"} {
			want := localstack.DefaultMember(i+1, localstack.NodeDefaults{})
			nodes, err := s.client(m).CoreV1().Nodes().List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(nodes.Items) != 3 {
				t.Fatalf("%s has %d nodes, want 3", m, len(nodes.Items))
			}
			for _, n := range nodes.Items {
				if n.Labels[corev1.LabelTopologyRegion] != want.Region || n.Labels[corev1.LabelTopologyZone] != want.Zone || n.Labels[localstack.ProviderLabel] != want.Provider {
					t.Errorf("%s node %s labels %v, want region %s zone %s provider %s", m, n.Name, n.Labels, want.Region, want.Zone, want.Provider)
				}
				if cpu := n.Status.Allocatable.Cpu().String(); cpu != "8" {
					t.Errorf("%s node %s allocatable cpu %s, want 8", m, n.Name, cpu)
				}
				ready := false
				for _, c := range n.Status.Conditions {
					ready = ready || (c.Type == corev1.NodeReady && c.Status == corev1.ConditionTrue)
				}
				if !ready {
					t.Errorf("%s node %s is not Ready", m, n.Name)
				}
			}
		}
	})

	t.Run("a Deployment rolls out on a member but stays a template on the control plane", func(t *testing.T) {
		if _, err := s.client("").AppsV1().Deployments("default").Create(ctx, deployment("tmpl", 2), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		if _, err := s.client("member1").AppsV1().Deployments("default").Create(ctx, deployment("web", 2), metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		eventually(t, 2*time.Minute, "web to have 2 ready replicas in member1", func() (bool, string) {
			d, err := s.client("member1").AppsV1().Deployments("default").Get(ctx, "web", metav1.GetOptions{})
			if err != nil {
				return false, err.Error()
			}
			return d.Status.ReadyReplicas == 2, fmt.Sprintf("status %+v", d.Status)
		})
		pods, err := s.client("member1").CoreV1().Pods("default").List(ctx, metav1.ListOptions{LabelSelector: "app=web"})
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pods.Items {
			if !strings.HasPrefix(p.Spec.NodeName, "member1-node-") || p.Status.Phase != corev1.PodRunning {
				t.Errorf("pod %s on node %q in phase %s, want Running on a kwok node", p.Name, p.Spec.NodeName, p.Status.Phase)
			}
		}
		// By now the member's deployment controller has acted; the
		// control plane has none, so the template must be untouched.
		rs, err := s.client("").AppsV1().ReplicaSets("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		cpPods, err := s.client("").CoreV1().Pods("").List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(rs.Items) != 0 || len(cpPods.Items) != 0 {
			t.Errorf("control plane has %d ReplicaSets and %d pods, want none", len(rs.Items), len(cpPods.Items))
		}
		tmpl, err := s.client("").AppsV1().Deployments("default").Get(ctx, "tmpl", metav1.GetOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if tmpl.Status.ObservedGeneration != 0 {
			t.Errorf("control-plane Deployment was processed by a deployment controller: %+v", tmpl.Status)
		}
	})

	t.Run("objects survive down and up, and kill -9 of up leaves no process behind", func(t *testing.T) {
		s.markBroken()
		s.kubectl("", "create", "configmap", "persist-me", "--from-literal=k=v")
		s.kubectl("member1", "create", "configmap", "persist-me-too", "--from-literal=k=v")
		out := s.flotilla("down", "--data-dir", s.dataDir)
		if !strings.Contains(out, "stopped") {
			t.Fatalf("down: %s", out)
		}
		s.waitNoProcesses()
		s.up(2)
		if got := s.kubectl("", "get", "configmap", "persist-me", "-o", "jsonpath={.data.k}"); got != "v" {
			t.Errorf("control-plane configmap after restart: %q", got)
		}
		if got := s.kubectl("member1", "get", "configmap", "persist-me-too", "-o", "jsonpath={.data.k}"); got != "v" {
			t.Errorf("member1 configmap after restart: %q", got)
		}
		st, err := localstack.ReadState(s.dataDir)
		if err != nil || st.PID == 0 {
			t.Fatalf("no recorded pid: %+v %v", st, err)
		}
		if err := syscall.Kill(st.PID, syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		s.waitNoProcesses()
	})
}

// TestBareMembers: `up --bare-members` runs each member as an API server
// (plus the namespace, garbage-collection and token controllers) and no
// nodes; objects still propagate, and bindings born scheduled get their
// Scheduled condition from the first aggregation write.
func TestBareMembers(t *testing.T) {
	s := startStack(t, 2, "--bare-members")
	for _, p := range s.processes() {
		if strings.Contains(p, "component kwok") || strings.Contains(p, "component kube-scheduler") || strings.Contains(p, "component metrics") {
			t.Errorf("a bare stack runs %s", p)
		}
	}
	if got := s.get("member1", "nodes", "-o", "name"); got != "" {
		t.Errorf("a bare member has nodes: %s", got)
	}
	s.waitFor(t, "True True", "", "cluster", "member1", "-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status} {.status.conditions[?(@.type=="CompleteAPIEnablements")].status}`)
	if out, err := s.apply(`apiVersion: apps/v1
kind: Deployment
metadata: {name: bare, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: bare}}
  template:
    metadata: {labels: {app: bare}}
    spec: {containers: [{name: c, image: nginx}]}
---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bare, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: bare}]
  placement: {clusterAffinity: {clusterNames: [member1, member2]}}
`); err != nil {
		t.Fatalf("apply: %v\n%s", err, out)
	}
	for _, m := range []string{"member1", "member2"} {
		s.waitFor(t, "2", m, "deploy", "bare", "-o", "jsonpath={.spec.replicas}")
	}
	s.waitFor(t, "True True 1", "", "rb", "bare-deployment", "-o",
		`jsonpath={.status.conditions[?(@.type=="Scheduled")].status} {.status.conditions[?(@.type=="FullyApplied")].status} {.status.schedulerObservedGeneration}`)
	if got := s.get("member1", "pods", "-o", "name"); got != "" {
		t.Errorf("a bare member ran pods: %s", got)
	}
}
