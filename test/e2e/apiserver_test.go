package e2e

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// TestControlPlaneAdmitsPodTemplatesAsKarmadaDoes: the control plane's API
// server runs without the admission plugins that make no sense where nothing
// runs (Karmada's karmada-apiserver turns off ServiceAccount and
// StorageObjectInUseProtection), so a Pod is accepted in a fresh namespace
// with nothing of the control plane's baked in, and its member copy is
// admitted by the member.
func TestControlPlaneAdmitsPodTemplatesAsKarmadaDoes(t *testing.T) {
	s := sharedStackOf(t, 2)
	ctx := context.Background()
	s.kubectl("", "create", "namespace", "t3")
	s.mustApply(t, "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: pods, namespace: t3}
spec:
  resourceSelectors: [{apiVersion: v1, kind: Pod}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)

	t.Run("a Pod is accepted in a fresh namespace, which has no service account there", func(t *testing.T) {
		runPod(t, s, "p")
	})

	t.Run("a Pod template gets no token volume and no tolerations, even where the service account exists", func(t *testing.T) {
		s.kubectl("", "create", "serviceaccount", "default", "-n", "t3")
		runPod(t, s, "p2")
		for _, name := range []string{"p", "p2"} {
			pod, err := s.client("").CoreV1().Pods("t3").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			assertNothingBakedIn(t, pod)
		}
	})

	t.Run("the Pod propagates to member1, which admits it with its own plugins", func(t *testing.T) {
		for _, name := range []string{"p", "p2"} {
			s.waitFor(t, name, "member1", "pod", name, "-n", "t3", "-o", "jsonpath={.metadata.name}")
			pod, err := s.client("member1").CoreV1().Pods("t3").Get(ctx, name, metav1.GetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if pod.Spec.Containers[0].Image != "nginx:1.25" {
				t.Errorf("member1 pod %s runs %q, want nginx:1.25", name, pod.Spec.Containers[0].Image)
			}
			// The member's own ServiceAccount plugin mounts its token
			// once; a template that carried one would make two.
			if n := countTokenVolumes(pod); n != 1 {
				t.Errorf("member1 pod %s has %d kube-api-access volumes, want the member's one: %+v", name, n, pod.Spec.Volumes)
			}
		}
	})
}

// runPod creates a Pod on the control plane as a user would, and fails the
// test with kubectl's own message if the API server refuses it.
func runPod(t *testing.T, s *stack, name string) {
	t.Helper()
	kc, ctx := s.kubeconfig("")
	out, err := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx,
		"-n", "t3", "run", name, "--image=nginx:1.25", "--restart=Never").CombinedOutput()
	if err != nil {
		t.Fatalf("kubectl run %s on the control plane: %v\n%s", name, err, out)
	}
}

func assertNothingBakedIn(t *testing.T, pod *corev1.Pod) {
	t.Helper()
	if n := countTokenVolumes(pod); n != 0 {
		t.Errorf("control-plane pod %s has a kube-api-access volume: %+v", pod.Name, pod.Spec.Volumes)
	}
	for _, c := range pod.Spec.Containers {
		if len(c.VolumeMounts) != 0 {
			t.Errorf("control-plane pod %s container %s has mounts %+v, want none", pod.Name, c.Name, c.VolumeMounts)
		}
	}
	if len(pod.Spec.Tolerations) != 0 {
		t.Errorf("control-plane pod %s has tolerations %+v, want none (members add their own)", pod.Name, pod.Spec.Tolerations)
	}
	if pod.Spec.Priority != nil {
		t.Errorf("control-plane pod %s has priority %d resolved on the control plane", pod.Name, *pod.Spec.Priority)
	}
}

func countTokenVolumes(pod *corev1.Pod) int {
	n := 0
	for _, v := range pod.Spec.Volumes {
		if strings.HasPrefix(v.Name, "kube-api-access-") {
			n++
		}
	}
	return n
}

// TestSchedulerHelpShowsOnlyItsOwnFlags: like karmada-scheduler, `flotilla
// scheduler` takes no controller-manager flags, and its help lists none.
func TestSchedulerHelpShowsOnlyItsOwnFlags(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the binary")
	}
	cmOnly := []string{"--controllers", "--cluster-status-update-frequency", "--skipped-propagating-namespaces"}
	shared := []string{"--kubeconfig", "--context", "--leader-elect", "--health-probe-bind-address", "--metrics-bind-address"}
	help := func(cmd string) string {
		out, err := exec.Command(flotillaBin, cmd, "--help").CombinedOutput()
		if err != nil {
			t.Fatalf("flotilla %s --help: %v\n%s", cmd, err, out)
		}
		return string(out)
	}
	sched, cm := help("scheduler"), help("controller-manager")
	for _, f := range cmOnly {
		if listsFlag(sched, f) {
			t.Errorf("flotilla scheduler --help lists %s, a controller-manager flag:\n%s", f, sched)
		}
		if !listsFlag(cm, f) {
			t.Errorf("flotilla controller-manager --help lacks %s:\n%s", f, cm)
		}
	}
	for _, f := range shared {
		if !listsFlag(sched, f) || !listsFlag(cm, f) {
			t.Errorf("both commands take %s; scheduler help:\n%s\ncontroller-manager help:\n%s", f, sched, cm)
		}
	}
}

// listsFlag reports whether help has a flag line for flag (the flag first on
// its line), as opposed to mentioning it in prose or an example.
func listsFlag(help, flag string) bool {
	for _, line := range strings.Split(help, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), flag+" ") {
			return true
		}
	}
	return false
}

// TestEveryErrorStartsWithLowercaseError: flotilla reports failures as kubectl
// does, "error: <message>", once, whoever detects them (flotilla, cobra, or
// a Kubernetes component it runs), and points at --help after a usage
// mistake.
func TestEveryErrorStartsWithLowercaseError(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the binary")
	}
	tmp := t.TempDir()
	for _, tc := range []struct {
		name      string
		args      []string
		wantError string
		wantHint  string
	}{
		{name: "unknown flag", args: []string{"up", "--bogus"}, wantError: "error: unknown flag: --bogus", wantHint: "See 'flotilla up --help' for usage."},
		{name: "controller-manager flag given to the scheduler", args: []string{"scheduler", "--controllers=*"}, wantError: "error: unknown flag: --controllers", wantHint: "See 'flotilla scheduler --help' for usage."},
		{name: "unexpected argument", args: []string{"down", "extra"}, wantError: `error: unknown command "extra" for "flotilla down"`, wantHint: "See 'flotilla down --help' for usage."},
		{name: "unknown command", args: []string{"nosuch"}, wantError: `error: unknown command "nosuch" for "flotilla"`, wantHint: "See 'flotilla --help' for usage."},
		{name: "unknown subcommand of a command group", args: []string{"component", "nosuch"}, wantError: `error: unknown command "nosuch" for "flotilla component"`, wantHint: "See 'flotilla component --help' for usage."},
		{name: "a failure while running", args: []string{"down", "--data-dir", filepath.Join(tmp, "typo")}, wantError: "error: no stack data in"},
		{name: "a Kubernetes component's flag error", args: []string{"component", "kube-scheduler", "--bogus"}, wantError: "error: unknown flag: --bogus"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cmd := exec.Command(flotillaBin, tc.args...)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			err := cmd.Run()
			if ee := (*exec.ExitError)(nil); !errors.As(err, &ee) {
				t.Fatalf("flotilla %v: want a non-zero exit, got %v\n%s", tc.args, err, stderr.String())
			}
			got := stderr.String()
			if strings.Contains(got, "Error:") {
				t.Errorf("stderr has a capitalised 'Error:':\n%s", got)
			}
			if n := strings.Count(got, "error:"); n != 1 {
				t.Errorf("the error is reported %d times, want once:\n%s", n, got)
			}
			if !strings.Contains(got, "\n"+tc.wantError) && !strings.HasPrefix(got, tc.wantError) {
				t.Errorf("want a line starting %q; stderr:\n%s", tc.wantError, got)
			}
			if tc.wantHint != "" && !strings.Contains(got, tc.wantHint) {
				t.Errorf("want the hint %q; stderr:\n%s", tc.wantHint, got)
			}
		})
	}
}
