package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// BenchmarkSearch measures flotilla search (karmada-search) with 10,000
// Deployments in the members (3,334 templates, each on all 3): the memory
// the cache takes for them (the search server's resident memory before the
// ResourceRegistry and once every copy is cached), and the latency of a list
// of all of them from the cache (search/cache and the proxy, through the
// control plane) beside a list of the 3,334 templates from the control plane
// itself and a list of the 10,000 from the members one after another (what a
// client does without the cache).
func BenchmarkSearch(b *testing.B) {
	h := startHarness(b)
	const templates = 3334
	total := templates * 3
	ctx := context.Background()
	h.createDeployments(ns, "s", templates, func(*appsv1.Deployment) {})
	h.waitFor("every copy in the members", 10*time.Minute, func() bool {
		n := 0
		for _, m := range h.members {
			l, err := m.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{ResourceVersion: "0"})
			if err != nil {
				return false
			}
			n += len(l.Items)
		}
		return n == total
	})
	proc := h.searchProc()
	before := rssMiB(proc)
	apply := exec.Command("kubectl", "--kubeconfig", h.kubeconfig, "--context", h.context, "apply", "-f", "-")
	apply.Stdin = strings.NewReader(`apiVersion: search.karmada.io/v1alpha1
kind: ResourceRegistry
metadata: {name: bench}
spec:
  targetCluster: {clusterNames: [member1, member2, member3]}
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
`)
	if out, err := apply.CombinedOutput(); err != nil {
		b.Fatalf("%v: %s", err, out)
	}
	rest := h.cp.AppsV1().RESTClient()
	count := func(path string) int {
		data, err := rest.Get().AbsPath(path).DoRaw(ctx)
		if err != nil {
			return -1
		}
		var l struct {
			Items []json.RawMessage `json:"items"`
		}
		_ = json.Unmarshal(data, &l)
		return len(l.Items)
	}
	const cachePath = "/apis/search.karmada.io/v1alpha1/search/cache/apis/apps/v1/deployments"
	const proxyPath = "/apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/apis/apps/v1/deployments"
	start := time.Now()
	// Measured before any list: a list of 10,000 leaves garbage behind.
	h.waitFor("the registry Ready", 5*time.Minute, func() bool {
		out, _ := exec.Command("kubectl", "--kubeconfig", h.kubeconfig, "--context", h.context, "get", "resourceregistry", "bench",
			"-o", `jsonpath={.status.conditions[?(@.type=="Ready")].status}`).Output()
		return string(out) == "True"
	})
	cached := time.Since(start)
	time.Sleep(5 * time.Second)
	after := rssMiB(proc)
	if got := count(cachePath); got != total {
		b.Fatalf("the cache lists %d, want %d", got, total)
	}

	timeIt := func(n int, f func() int, want int) (p50, p99 time.Duration) {
		var d []time.Duration
		for range n {
			t := time.Now()
			if got := f(); got != want {
				b.Fatalf("listed %d, want %d", got, want)
			}
			d = append(d, time.Since(t))
		}
		sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
		return pct(d, 0.50), pct(d, 0.99)
	}
	const rounds = 30
	c50, c99 := timeIt(rounds, func() int { return count(cachePath) }, total)
	p50, p99 := timeIt(rounds, func() int { return count(proxyPath) }, total)
	t50, t99 := timeIt(rounds, func() int { return count("/apis/apps/v1/namespaces/" + ns + "/deployments") }, templates)
	m50, m99 := timeIt(rounds, func() int {
		n := 0
		for _, m := range h.members {
			l, err := m.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return -1
			}
			n += len(l.Items)
		}
		return n
	}, total)
	fmt.Printf("search cache: %d Deployments in 3 members cached in %s; search server RSS %.0f MiB before, %.0f MiB after (%.1f MiB per 10,000 cached objects)\n",
		total, cached.Round(100*time.Millisecond), before, after, (after-before)*10000/float64(total))
	fmt.Printf("list of all %d (%d lists each): search/cache p50 %s p99 %s; proxy p50 %s p99 %s; the members one after another p50 %s p99 %s; the control plane's %d templates p50 %s p99 %s\n",
		total, rounds, c50.Round(time.Millisecond), c99.Round(time.Millisecond), p50.Round(time.Millisecond), p99.Round(time.Millisecond),
		m50.Round(time.Millisecond), m99.Round(time.Millisecond), templates, t50.Round(time.Millisecond), t99.Round(time.Millisecond))
	b.ReportMetric((after-before)*10000/float64(total), "MiB/10k-cached")
	b.ReportMetric(float64(c50.Milliseconds()), "cache-list-p50-ms")
	b.ReportMetric(float64(c99.Milliseconds()), "cache-list-p99-ms")
}

// searchProc is the /proc directory of the stack's search server.
func (h *harness) searchProc() string {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte("\x00search\x00")) && bytes.Contains(cmdline, []byte(h.dataDir)) {
			return filepath.Join("/proc", e.Name())
		}
	}
	h.b.Fatal("no search server process")
	return ""
}

// rssMiB is a process's resident memory now (VmRSS), in MiB.
func rssMiB(proc string) float64 {
	status, _ := os.ReadFile(filepath.Join(proc, "status"))
	for _, line := range strings.Split(string(status), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
			return kb / 1024
		}
	}
	return 0
}
