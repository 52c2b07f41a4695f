package e2e

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/localstack"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
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
	out := func() string {
		starting.Lock()
		defer starting.Unlock()
		return s.flotilla("up", "--detach", "--data-dir", s.dataDir, "--apply", sample)
	}()
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

	// Events come from Karmada's component names (kubectl's FROM column).
	for reason, from := range map[string]string{
		"ApplyPolicySucceed":     "resource-detector",
		"ScheduleBindingSucceed": "karmada-scheduler",
		"SyncWorkSucceed":        "binding-controller",
		"SyncSucceed":            "execution-controller",
	} {
		s.waitFor(t, from, "", "events", "-A", "--field-selector", "reason="+reason, "-o", "jsonpath={.items[0].source.component}")
	}

	// The README's "Metrics, health and logs": what propagating nginx did,
	// in Karmada's metric names, on the controller manager's /metrics.
	t.Run("the controller manager serves Karmada's metrics and its probes", func(t *testing.T) {
		ports := s.ports()
		metricsURL := fmt.Sprintf("http://127.0.0.1:%d/metrics", ports[localstack.ControllerManagerMetricsPort])
		if !strings.Contains(out, "metrics: flotilla-controller-manager "+metricsURL) {
			t.Errorf("up does not say where the controller manager's metrics are (%s):\n%s", metricsURL, out)
		}
		checks := []struct {
			what   string
			series string
			labels map[string]string
			ok     func(float64) bool
		}{
			{"member1 is Ready", "cluster_ready_state", map[string]string{"cluster_name": "member1"}, func(v float64) bool { return v == 1 }},
			{"bindings synced their Works", "binding_sync_work_duration_seconds_count", map[string]string{"result": "success"}, func(v float64) bool { return v > 0 }},
			{"Works were applied to members", "work_sync_workload_duration_seconds_count", map[string]string{"result": "success"}, func(v float64) bool { return v > 0 }},
			{"nginx's binding was scheduled a first time", "karmada_scheduler_schedule_attempts_total",
				map[string]string{"result": "scheduled", "scheduleType": "FirstSchedule"}, func(v float64) bool { return v >= 1 }},
			{"the policy was applied", "policy_apply_attempts_total", map[string]string{"result": "success"}, func(v float64) bool { return v >= 1 }},
			{"controller-runtime's workqueues count adds", "workqueue_adds_total", map[string]string{}, func(v float64) bool { return v > 0 }},
		}
		eventually(t, 30*time.Second, "the controller manager's metrics", func() (bool, string) {
			body, err := httpGet(metricsURL)
			if err != nil {
				return false, err.Error()
			}
			var missing []string
			for _, c := range checks {
				if v, found := maxSeries(body, c.series, c.labels); !found || !c.ok(v) {
					missing = append(missing, fmt.Sprintf("%s: %s%v = %v (found %v)", c.what, c.series, c.labels, v, found))
				}
			}
			return len(missing) == 0, strings.Join(missing, "; ")
		})
		for _, probe := range []string{"/readyz", "/healthz"} {
			url := fmt.Sprintf("http://127.0.0.1:%d%s", ports[localstack.ControllerManagerHealthPort], probe)
			if _, err := httpGet(url); err != nil {
				t.Errorf("%s: %v", url, err)
			}
		}
	})
}

// ports reads the stack's <data-dir>/ports.json.
func (s *stack) ports() map[string]int {
	s.t.Helper()
	data, err := os.ReadFile(filepath.Join(s.dataDir, "ports.json"))
	if err != nil {
		s.t.Fatal(err)
	}
	ports := map[string]int{}
	if err := json.Unmarshal(data, &ports); err != nil {
		s.t.Fatalf("ports.json: %v", err)
	}
	return ports
}

// httpGet returns the body of url; any status but 200 is an error.
func httpGet(url string) (string, error) {
	client := &http.Client{Timeout: 10 * time.Second}
	resp, err := client.Get(url)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return "", err
	}
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("%s answered %d: %s", url, resp.StatusCode, body)
	}
	return string(body), nil
}

// maxSeries finds, in a Prometheus text exposition, the series of name
// whose labels include labels, and returns the largest value among them.
func maxSeries(exposition, name string, labels map[string]string) (float64, bool) {
	best, found := 0.0, false
	for _, line := range strings.Split(exposition, "\n") {
		rest, ok := strings.CutPrefix(line, name)
		if !ok || (rest != "" && rest[0] != '{' && rest[0] != ' ') {
			continue
		}
		set, value := "", rest
		if strings.HasPrefix(rest, "{") {
			end := strings.Index(rest, "}")
			set, value = rest[1:end], rest[end+1:]
		}
		have := map[string]string{}
		for _, pair := range strings.Split(set, ",") {
			if k, v, ok := strings.Cut(pair, "="); ok {
				have[k] = strings.Trim(v, `"`)
			}
		}
		match := true
		for k, v := range labels {
			match = match && have[k] == v
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !match || err != nil {
			continue
		}
		if !found || v > best {
			best, found = v, true
		}
	}
	return best, found
}

// TestFailedComponentIsNamed: a component that cannot start makes up exit
// non-zero, naming it and showing the end of its log.
func TestFailedComponentIsNamed(t *testing.T) {
	if testing.Short() {
		t.Skip("e2e: skipped with -short")
	}
	inLane(t, laneOwnStack)
	s := &stack{t: t, dataDir: t.TempDir()}
	t.Cleanup(s.waitNoProcesses)
	cmd := exec.Command(flotillaBin, "up", "--members", "1", "--data-dir", s.dataDir, "--controller-manager-arg=--no-such-flag")
	starting.Lock()
	out, err := cmd.CombinedOutput()
	starting.Unlock()
	if err == nil {
		t.Fatalf("up succeeded with a broken controller manager:\n%s", out)
	}
	for _, want := range []string{"flotilla-controller-manager failed", "last lines of", "unknown flag: --no-such-flag", "data in " + s.dataDir + " is kept"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("failure output lacks %q:\n%s", want, out)
		}
	}
}
