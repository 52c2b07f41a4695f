package bench

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/flotilla-io/flotilla/internal/test/testproc"
)

// BenchmarkPropagationExternal is BenchmarkPropagation against a control
// plane Flotilla does not embed (issue: production): the stack's member4, a
// plain kube-apiserver without Flotilla's admission plugins, prepared by
// `flotilla install`, with `flotilla webhook` serving the checks and
// mutations as admission webhooks and one `flotilla controller-manager`
// (the scheduler in-process, as in the local stack) run as separate
// processes; member1 to member3 are unjoined from the stack's own control
// plane and joined to it.
func BenchmarkPropagationExternal(b *testing.B) {
	benchPropagationOn(b, startHarnessOn(b, externalControlPlane, "--members", "4"))
}

// externalControlPlane turns the stack's member4 into the bench's control
// plane, as an operator would with `flotilla install`.
func externalControlPlane(h *harness, run func(args ...string) string) {
	b := h.b
	dir := filepath.Join(h.dataDir, "external")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	members := filepath.Join(h.dataDir, "members.config")
	raw, err := exec.Command("kubectl", "--kubeconfig", members, "--context", "member4", "config", "view", "--minify", "--raw").Output()
	if err != nil {
		b.Fatalf("member4's kubeconfig: %v", err)
	}
	kc := filepath.Join(dir, "cp.config")
	if err := os.WriteFile(kc, raw, 0o600); err != nil {
		b.Fatal(err)
	}
	hookAddr, hookHealth, cmHealth := freePort(b), freePort(b), freePort(b)
	certs := filepath.Join(dir, "webhook-certs")
	start := time.Now()
	run("install", "--kubeconfig", kc, "--webhook-url", "https://"+hookAddr, "--webhook-cert-dir", certs)
	_, hookPort, _ := strings.Cut(hookAddr, ":")
	background(b, filepath.Join(dir, "webhook.log"), "webhook", "--kubeconfig", kc, "--bind-address", "127.0.0.1",
		"--secure-port", hookPort, "--cert-dir", certs, "--metrics-bind-address", "0", "--health-probe-bind-address", hookHealth)
	background(b, filepath.Join(dir, "controller-manager.log"), "controller-manager", "--kubeconfig", kc, "--leader-elect=false",
		"--metrics-bind-address", "0", "--health-probe-bind-address", cmHealth)
	for _, url := range []string{"http://" + hookHealth + "/readyz", "http://" + cmHealth + "/readyz"} {
		h.waitFor(url, 2*time.Minute, func() bool {
			resp, err := http.Get(url)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
	}
	for _, m := range []string{"member1", "member2", "member3", "member4"} {
		run("unjoin", m, "--kubeconfig", filepath.Join(h.dataDir, "karmada.config"))
	}
	for _, m := range []string{"member1", "member2", "member3"} {
		run("join", m, "--kubeconfig", kc, "--cluster-kubeconfig", members, "--cluster-context", m)
	}
	h.waitFor("member1 to member3 Ready on the external control plane", 2*time.Minute, func() bool {
		out, _ := exec.Command("kubectl", "--kubeconfig", kc, "get", "clusters",
			"-o", "jsonpath={.items[*].status.conditions[?(@.type=='Ready')].status}").Output()
		return string(out) == "True True True"
	})
	b.Logf("external control plane installed, its components ready and 3 members joined in %s", time.Since(start).Round(100*time.Millisecond))
	h.kubeconfig, h.context, h.cmMatch = kc, "", kc
}

// background starts FLOTILLA_BIN with args, its output in log, and stops it
// when the bench ends.
func background(b *testing.B, log string, args ...string) {
	testproc.Background(b, os.Getenv("FLOTILLA_BIN"), log, args...)
}
