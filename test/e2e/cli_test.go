package e2e

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

func TestDryRunStartsNothing(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the binary")
	}
	dir := t.TempDir()
	out, err := exec.Command(flotillaBin, "up", "--dry-run", "--members", "1", "--data-dir", dir).CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	for _, want := range []string{"dry run: nothing is started", "cluster control-plane:", "cluster member1:", "kwok", "--controllers=namespace-controller"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("dry-run output lacks %q:\n%s", want, out)
		}
	}
	s := &stack{t: t, dataDir: dir}
	if p := s.processes(); len(p) != 0 {
		t.Errorf("dry run left processes: %v", p)
	}
}

func TestBadFlagsGetClearErrors(t *testing.T) {
	if testing.Short() {
		t.Skip("needs the binary")
	}
	out, err := exec.Command(flotillaBin, "up", "--members", "0", "--data-dir", t.TempDir()).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "at least one member cluster") {
		t.Errorf("--members 0: err=%v out=%s", err, out)
	}
	out, err = exec.Command(flotillaBin, "down", "--data-dir", t.TempDir()).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "no stack is running") {
		t.Errorf("down with nothing running: err=%v out=%s", err, out)
	}
	out, err = exec.Command(flotillaBin, "down", "--data-dir", filepath.Join(t.TempDir(), "typo")).CombinedOutput()
	if err == nil || !strings.Contains(string(out), "does not exist (check --data-dir)") {
		t.Errorf("down with a data dir that does not exist must fail: err=%v out=%s", err, out)
	}
}
