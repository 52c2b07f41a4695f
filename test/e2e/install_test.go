package e2e

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/test/helmchart"
	"github.com/flotilla-io/flotilla/internal/test/testproc"
)

func freePort(t *testing.T) int { return testproc.FreePort(t) }

// background starts the binary with args, its output in log; it is stopped
// when the test ends.
func background(t *testing.T, log string, args ...string) *exec.Cmd {
	return testproc.Background(t, flotillaBin, log, args...)
}

// TestExternalControlPlane runs Flotilla on a kube-apiserver it does not
// embed: the stack's member3, a plain kube-apiserver started by `flotilla
// component` without Flotilla's admission plugins. `flotilla install`
// prepares it; the webhook, two controller managers and the scheduler run
// as separate processes; member1 and member2 join it. The nginx example
// propagates, bad input is refused by the webhook, and a kill -9 of the
// leading controller manager during a burst of 200 converges. First, the
// Helm chart's rendered objects are validated by member1's API server.
func TestExternalControlPlane(t *testing.T) {
	extended(t)
	s := startStack(t, 3, "--bare-members", "--controller-manager-replicas", "2")
	t.Run("up --controller-manager-replicas 2 runs two that elect one leader", func(t *testing.T) {
		if id := s.get("", "lease", "-n", "karmada-system", "karmada-controller-manager", "-o", "jsonpath={.spec.holderIdentity}"); id == "" {
			t.Errorf("the embedded control plane's controller-manager Lease has no holder")
		}
		leaders := 0
		for _, name := range []string{"flotilla-controller-manager", "flotilla-controller-manager-2"} {
			data, err := os.ReadFile(filepath.Join(s.dataDir, "logs", name+".log"))
			if err != nil {
				t.Fatalf("replica %s: %v", name, err)
			}
			if strings.Contains(string(data), "Successfully acquired lease") {
				leaders++
			}
		}
		if leaders != 1 {
			t.Errorf("%d replicas logged that they lead, want 1", leaders)
		}
	})
	dir := filepath.Join(s.dataDir, "external")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	kc := filepath.Join(dir, "cp.config")
	if err := os.WriteFile(kc, []byte(s.kubectl("member3", "config", "view", "--minify", "--raw")), 0o600); err != nil {
		t.Fatal(err)
	}
	ext := func(args ...string) (string, error) { return kubectlAs(kc, args...) }
	mustExt := func(args ...string) string {
		t.Helper()
		out, err := ext(args...)
		if err != nil {
			t.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}

	t.Run("the Helm chart's objects, hooks included, pass a real API server's validation", func(t *testing.T) {
		chart, err := helmchart.Dir()
		if err != nil {
			t.Fatal(err)
		}
		// member1 is a plain kube-apiserver with the default admission
		// plugins: it validates what a host cluster would be sent, and
		// warns where a pod template breaks the restricted Pod Security level.
		for ns, values := range map[string]map[string]any{
			"flotilla-system":   nil,
			"flotilla-external": {"etcd": map[string]any{"external": map[string]any{"endpoints": []any{"https://etcd.example.com:2379"}, "tlsSecretName": "etcd-client"}}},
		} {
			r, err := helmchart.Render(chart, ns, values)
			if err != nil {
				t.Fatal(err)
			}
			s.kubectl("member1", "create", "namespace", ns)
			s.kubectl("member1", "label", "namespace", ns, "pod-security.kubernetes.io/enforce=restricted", "pod-security.kubernetes.io/warn=restricted")
			kc, ctx := s.kubeconfig("member1")
			apply := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "apply", "--dry-run=server", "-f", "-")
			apply.Stdin = strings.NewReader(r.Manifest)
			out, err := apply.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: kubectl apply --dry-run=server: %v\n%s", ns, err, out)
			}
			if n := strings.Count(string(out), "(server dry run)"); n != len(r.Objects) || strings.Contains(string(out), "Warning") {
				t.Errorf("%s: %d of %d objects accepted, want all, without warnings:\n%s", ns, n, len(r.Objects), out)
			}
			t.Logf("%s: the API server accepted all %d objects", ns, len(r.Objects))
		}
	})

	hookPort := freePort(t)
	certs := filepath.Join(dir, "webhook-certs")
	install := []string{"install", "--kubeconfig", kc, "--webhook-url", fmt.Sprintf("https://127.0.0.1:%d", hookPort), "--webhook-cert-dir", certs}
	if !t.Run("install prepares the API server, idempotently, and --dry-run shows it", func(t *testing.T) {
		yaml := s.flotilla(append(install, "--dry-run", "-o", "yaml")...)
		for _, want := range []string{"kind: CustomResourceDefinition", "name: propagationpolicies.policy.karmada.io", "kind: ValidatingWebhookConfiguration", "kind: MutatingWebhookConfiguration", "name: flotilla:controller-manager", "name: cluster-info"} {
			if !strings.Contains(yaml, want) {
				t.Errorf("install --dry-run -o yaml lacks %q", want)
			}
		}
		if _, err := ext("get", "crd", "propagationpolicies.policy.karmada.io", "-o", "name"); err == nil {
			t.Fatalf("--dry-run installed the CRDs")
		}
		for i := 0; i < 2; i++ {
			if out := s.flotilla(install...); !strings.Contains(out, "Flotilla is installed") {
				t.Fatalf("install run %d:\n%s", i+1, out)
			}
		}
		mustExt("get", "clusterrolebinding", "flotilla:scheduler")
		mustExt("get", "ns", "karmada-cluster")
	}) {
		t.FailNow()
	}

	hookHealth, cm1, cm2, schedHealth := freePort(t), freePort(t), freePort(t), freePort(t)
	background(t, filepath.Join(dir, "webhook.log"), "webhook", "--kubeconfig", kc, "--bind-address", "127.0.0.1",
		"--secure-port", fmt.Sprint(hookPort), "--cert-dir", certs, "--metrics-bind-address", "0", "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", hookHealth))
	managers := map[string]*exec.Cmd{}
	for name, port := range map[string]int{"cm1": cm1, "cm2": cm2} {
		managers[name] = background(t, filepath.Join(dir, name+".log"), "controller-manager", "--kubeconfig", kc, "--controllers", "*,-scheduler",
			"--metrics-bind-address", "0", "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", port))
	}
	background(t, filepath.Join(dir, "scheduler.log"), "scheduler", "--kubeconfig", kc,
		"--metrics-bind-address", "0", "--health-probe-bind-address", fmt.Sprintf("127.0.0.1:%d", schedHealth))
	eventually(t, time.Minute, "the webhook ready", func() (bool, string) {
		out, err := exec.Command("curl", "-sf", fmt.Sprintf("http://127.0.0.1:%d/readyz", hookHealth)).CombinedOutput()
		return err == nil, string(out)
	})

	for _, m := range []string{"member1", "member2"} {
		s.flotilla("unjoin", m, "--kubeconfig", filepath.Join(s.dataDir, "karmada.config"))
		s.flotilla("join", m, "--kubeconfig", kc, "--cluster-kubeconfig", filepath.Join(s.dataDir, "members.config"), "--cluster-context", m)
	}
	eventually(t, 2*time.Minute, "member1 and member2 Ready on the external control plane", func() (bool, string) {
		out, _ := ext("get", "clusters", "-o", "jsonpath={.items[*].status.conditions[?(@.type=='Ready')].status}")
		return out == "True True", out
	})

	t.Run("the nginx example propagates", func(t *testing.T) {
		mustExt("apply", "-f", exampleDir(t, "nginx"))
		for _, m := range []string{"member1", "member2"} {
			s.waitFor(t, "1", m, "deploy", "nginx", "-o", "jsonpath={.spec.replicas}")
		}
		s.waitFor(t, "staging", "member2", "deploy", "nginx", "-o", "jsonpath={.metadata.labels.env}")
	})

	extApply := func(yaml string, extra ...string) (string, error) {
		cmd := exec.Command("kubectl", append([]string{"--kubeconfig", kc, "apply", "-f", "-"}, extra...)...)
		cmd.Stdin = strings.NewReader(yaml)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	t.Run("the webhook does what the built-in plugins do", func(t *testing.T) {
		// A policy is born with its permanent id: the create's own response has it.
		id, err := extApply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: default}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`, "-o", "jsonpath={.metadata.labels.propagationpolicy\\.karmada\\.io/permanent-id}")
		if err != nil || id == "" {
			t.Fatalf("the policy was not created with its permanent-id label: %q %v", id, err)
		}
		// A template is claimed as it is created.
		claim, err := extApply(deploymentYAML("default", "web", 1, "nginx"), "-o", "jsonpath={.metadata.labels.propagationpolicy\\.karmada\\.io/permanent-id}")
		if err != nil || claim != id {
			t.Errorf("the template was created with claim %q (%v), want the policy's %q", claim, err, id)
		}
		// The checks CEL cannot express refuse bad input.
		out, err := extApply(`apiVersion: autoscaling.karmada.io/v1alpha1
kind: CronFederatedHPA
metadata: {name: bad, namespace: default}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  rules: [{name: up, schedule: "0 25 * * *", targetReplicas: 3}]
`)
		if err == nil || !strings.Contains(out, "spec.rules[0].schedule") {
			t.Errorf("a bad cron schedule: want a refusal naming spec.rules[0].schedule, got %v:\n%s", err, out)
		}
		out, err = extApply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: bad-fields, namespace: default}
spec:
  resourceSelectors: [{apiVersion: v1, kind: ConfigMap}]
  placement:
    clusterAffinity: {fieldSelector: {matchExpressions: [{key: color, operator: In, values: [x]}]}}
    clusterAffinities: [{affinityName: a, clusterNames: [member1]}]
`)
		// One answer names the webhook's error and the CRD's CEL rule's
		// (/mutate-validate runs before the API server's checks).
		if err == nil || !strings.Contains(out, `unsupported key "color"`) || !strings.Contains(out, "cannot be used together with placement.clusterAffinity") {
			t.Errorf("a bad fieldSelector beside both affinities: want one refusal naming both errors, got %v:\n%s", err, out)
		}
	})

	t.Run("a kill -9 of the leader during a burst of 200 converges", func(t *testing.T) {
		leader := ""
		eventually(t, time.Minute, "a leader", func() (bool, string) {
			for name := range managers {
				data, _ := os.ReadFile(filepath.Join(dir, name+".log"))
				if strings.Contains(string(data), "Successfully acquired lease") {
					leader = name
					return true, ""
				}
			}
			return false, "no controller manager logged that it acquired the lease"
		})
		other := map[string]string{"cm1": "cm2", "cm2": "cm1"}[leader]
		mustExt("create", "namespace", "burst")
		var b strings.Builder
		b.WriteString(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: burst, namespace: burst}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
		for i := 0; i < 200; i++ {
			fmt.Fprintf(&b, "---\n%s", deploymentYAML("burst", fmt.Sprintf("b%03d", i), 1, "nginx"))
		}
		apply := exec.Command("kubectl", "--kubeconfig", kc, "apply", "-f", "-")
		apply.Stdin = strings.NewReader(b.String())
		var applyOut strings.Builder
		apply.Stdout, apply.Stderr = &applyOut, &applyOut
		if err := apply.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill the leader once part of the burst has propagated.
		eventually(t, time.Minute, "the burst under way in member1", func() (bool, string) {
			out := s.get("member1", "deploy", "-n", "burst", "-o", "name")
			n := len(strings.Fields(out))
			return n >= 20, fmt.Sprint(n)
		})
		if err := managers[leader].Process.Kill(); err != nil {
			t.Fatal(err)
		}
		if err := apply.Wait(); err != nil {
			t.Fatalf("kubectl apply: %v\n%s", err, applyOut.String())
		}
		// How fast the takeover is belongs to the bench; here it only has to happen.
		eventually(t, 2*time.Minute, "the other controller manager takes over", func() (bool, string) {
			data, _ := os.ReadFile(filepath.Join(dir, other+".log"))
			return strings.Contains(string(data), "Successfully acquired lease"), ""
		})
		eventually(t, 3*time.Minute, "200 Deployments in member1", func() (bool, string) {
			n := len(strings.Fields(s.get("member1", "deploy", "-n", "burst", "-o", "name")))
			return n == 200, fmt.Sprint(n)
		})
		rbs := len(strings.Fields(mustExt("get", "rb", "-n", "burst", "-o", "name")))
		works := strings.Count(mustExt("get", "works", "-n", "karmada-es-member1", "-o", `jsonpath={range .items[*]}{.metadata.annotations.resourcebinding\.karmada\.io/namespace}{"\n"}{end}`), "burst\n")
		if rbs != 200 || works != 200 {
			t.Errorf("%d ResourceBindings and %d Works for 200 Deployments: want one each", rbs, works)
		}
	})
}
