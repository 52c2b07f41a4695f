package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/flotilla-io/flotilla/internal/reftest"
)

// exampleDir is the repository's examples/<name>.
func exampleDir(t *testing.T, name string) string {
	return filepath.Join(reftest.ModuleRoot(t), "examples", name)
}

// TestQuickStart is the README's main job: up with the nginx example applied,
// then nginx running in member1 and member2.
func TestQuickStart(t *testing.T) {
	s := newStack(t)
	sample := exampleDir(t, "nginx")
	out := s.flotilla("up", "--detach", "--data-dir", s.dataDir, "--apply", sample)
	for _, want := range []string{"deployment.apps/nginx serverside-applied", "propagationpolicy.policy.karmada.io/nginx-propagation serverside-applied", "Flotilla is ready", "get deploy nginx"} {
		if !strings.Contains(out, want) {
			t.Errorf("up output lacks %q:\n%s", want, out)
		}
	}
	for _, m := range []string{"member1", "member2"} {
		s.waitFor(t, "1", m, "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}")
	}
	s.waitFor(t, "2", "", "deploy", "nginx", "-o", "jsonpath={.status.readyReplicas}")
	if got := s.get("member3", "deploy", "nginx", "-o", "name"); got != "" {
		t.Errorf("nginx reached member3, which the sample policy does not select")
	}
}

// TestFailedComponentIsNamed: a component that cannot start makes up exit
// non-zero, naming it and showing the end of its log.
func TestFailedComponentIsNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	s := &stack{t: t, dataDir: t.TempDir()}
	t.Cleanup(s.waitNoProcesses)
	cmd := exec.Command(flotillaBin, "up", "--members", "1", "--data-dir", s.dataDir, "--controller-manager-arg=--no-such-flag")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("up succeeded with a broken controller manager:\n%s", out)
	}
	for _, want := range []string{"flotilla-controller-manager failed", "last lines of", "unknown flag: --no-such-flag", "data in " + s.dataDir + " is kept"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("failure output lacks %q:\n%s", want, out)
		}
	}
}
