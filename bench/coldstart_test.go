package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/kubernetes"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

var workGVR = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha1", Resource: "works"}

// coldCount is how many templates the cold-start bench propagates before it
// restarts the controller manager: BENCH_COLD, default 30,000.
var coldCount = func() int {
	if v, err := strconv.Atoi(os.Getenv("BENCH_COLD")); err == nil && v > 0 {
		return v
	}
	return 30000
}()

// writeCounts sums kube-apiserver's apiserver_request_total for writes
// (POST, PUT, PATCH, DELETE, APPLY) by resource (with subresource), leaving
// out leases and events, which every component writes all the time. A
// request answered with other than 2xx is counted apart, under its key
// followed by the code ("works 409").
func writeCounts(c kubernetes.Interface) (map[string]float64, error) {
	return requestCounts(c, false)
}

// requestCounts is writeCounts, or with all every request when all is set:
// reads too (GET, LIST, WATCH; keys then start with the verb), leases and
// events.
func requestCounts(c kubernetes.Interface, all bool) (map[string]float64, error) {
	raw, err := c.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(context.Background())
	if err != nil {
		return nil, err
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(string(raw)))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if !strings.HasPrefix(line, "apiserver_request_total{") {
			continue
		}
		labels := map[string]string{}
		body := line[strings.IndexByte(line, '{')+1 : strings.LastIndexByte(line, '}')]
		for _, kv := range strings.Split(body, ",") {
			k, v, _ := strings.Cut(kv, "=")
			labels[k] = strings.Trim(v, `"`)
		}
		key := ""
		switch labels["verb"] {
		case "POST", "PUT", "PATCH", "DELETE", "APPLY":
		case "GET", "LIST", "WATCH":
			if !all {
				continue
			}
			key = labels["verb"] + " "
		default:
			continue
		}
		if labels["dry_run"] != "" || !all && (labels["resource"] == "leases" || labels["resource"] == "events") {
			continue
		}
		v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
		key += labels["resource"]
		if labels["subresource"] != "" {
			key += "/" + labels["subresource"]
		}
		if code := labels["code"]; code != "" && code[0] != '2' {
			key += " " + code // refused or failed: a conflict (409) is a write retried
		}
		out[key] += v
	}
	return out, sc.Err()
}

// allWrites reads writeCounts of the control plane (key "cp:<resource>")
// and every member ("memberN:<resource>").
func (h *harness) allWrites() map[string]float64 {
	out := map[string]float64{}
	add := func(prefix string, c kubernetes.Interface) {
		// A busy API server (30,000 status reports) may time a scrape
		// out: try again for a minute before giving up the run.
		var w map[string]float64
		var err error
		for deadline := time.Now().Add(time.Minute); ; time.Sleep(2 * time.Second) {
			if w, err = writeCounts(c); err == nil || time.Now().After(deadline) {
				break
			}
		}
		if err != nil {
			h.b.Fatalf("read %s's request counts: %v", prefix, err)
		}
		for k, v := range w {
			out[prefix+":"+k] = v
		}
	}
	add("cp", h.cp)
	for i, m := range h.members {
		add(fmt.Sprintf("member%d", i+1), m)
	}
	return out
}

// diffWrites returns what each counter of before (requestCounts) grew by
// in after, as sorted "key count" lines, and the sum.
func diffWrites(before, after map[string]float64) (total float64, lines []string) {
	for k, v := range after {
		if d := v - before[k]; d > 0 {
			total += d
			lines = append(lines, fmt.Sprintf("%s %.0f", k, d))
		}
	}
	sort.Strings(lines)
	return total, lines
}

// restartControllerManager kills the stack's controller manager (SIGKILL);
// `flotilla up` starts a new one after its 1 s back-off. It returns when the
// new process exists, with the kill time and the new process's /proc dir.
func (h *harness) restartControllerManager() (killed time.Time, proc string) {
	old := h.controllerManagerProc()
	pid, _ := strconv.Atoi(filepath.Base(old))
	if pid == 0 {
		h.b.Fatal("no controller manager to restart")
	}
	killed = time.Now()
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		h.b.Fatal(err)
	}
	h.waitFor("a new controller manager", time.Minute, func() bool {
		proc = h.controllerManagerProc()
		return proc != "" && proc != old
	})
	return killed, proc
}

// ports is the stack's ports.json: each component's ports by key.
func (h *harness) ports() map[string]int {
	data, err := os.ReadFile(filepath.Join(h.dataDir, "ports.json"))
	if err != nil {
		h.b.Fatal(err)
	}
	var ports map[string]int
	if err := json.Unmarshal(data, &ports); err != nil {
		h.b.Fatalf("ports.json: %v", err)
	}
	return ports
}

// controllerManagerReadyURL is the controller manager's /readyz, from the
// stack's ports.json.
func (h *harness) controllerManagerReadyURL() string {
	ports := h.ports()
	port := ports[localstack.ControllerManagerHealthPort]
	if port == 0 {
		h.b.Fatalf("ports.json has no %s port: %v", localstack.ControllerManagerHealthPort, ports)
	}
	return fmt.Sprintf("http://127.0.0.1:%d/readyz", port)
}

// BenchmarkColdStart restarts the controller manager with BENCH_COLD
// (30,000) Deployments already propagated to 3 members, and reports how long
// the new one takes to be ready and to propagate a new template, its peak
// RSS, and the writes the restart makes (target: none, since every object's
// state is already right).
func BenchmarkColdStart(b *testing.B) {
	h := startHarness(b)
	h.stopHops()
	ctx := context.Background()
	start := time.Now()
	var made atomic.Int64
	var wg sync.WaitGroup
	work := make(chan int)
	for w := 0; w < 32; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range work {
				if _, err := h.cp.AppsV1().Deployments(ns).Create(ctx, deployment(fmt.Sprintf("cold-%05d", i)), metav1.CreateOptions{}); err != nil {
					b.Errorf("create: %v", err)
				}
				if n := made.Add(1); n%5000 == 0 {
					fmt.Fprintf(os.Stderr, "created %d templates in %s\n", n, time.Since(start).Round(time.Second))
				}
			}
		}()
	}
	// On a kept stack (BENCH_STACK) only the missing templates are made.
	have := map[string]bool{}
	if list, err := h.cp.AppsV1().Deployments(ns).List(ctx, metav1.ListOptions{}); err == nil {
		for _, d := range list.Items {
			have[d.Name] = true
		}
	}
	for i := 0; i < coldCount; i++ {
		if !have[fmt.Sprintf("cold-%05d", i)] {
			work <- i
		}
	}
	close(work)
	wg.Wait()
	h.waitFor(fmt.Sprintf("%d Deployments in 3 members", coldCount), time.Hour, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		n := 0
		for _, m := range h.arrived {
			if len(m) == 3 {
				n++
			}
		}
		return n >= coldCount
	})
	b.Logf("%d templates in every member after %s", coldCount, time.Since(start).Round(time.Second))
	fmt.Fprintf(os.Stderr, "%d templates in every member after %s; settling\n", coldCount, time.Since(start).Round(time.Second))
	// Let status reports and the like settle: no write for 15 s.
	settle := func() map[string]float64 {
		prev, quiet := h.allWrites(), time.Now()
		for time.Since(quiet) < 15*time.Second {
			time.Sleep(3 * time.Second)
			cur := h.allWrites()
			if n, _ := diffWrites(prev, cur); n > 0 {
				quiet = time.Now()
			}
			prev = cur
		}
		return prev
	}
	before := settle()
	readyURL := h.controllerManagerReadyURL()
	waitReady := func() time.Time {
		h.waitFor("the controller manager's /readyz", 10*time.Minute, func() bool {
			resp, err := http.Get(readyURL)
			if err != nil {
				return false
			}
			resp.Body.Close()
			return resp.StatusCode == http.StatusOK
		})
		return time.Now()
	}

	// 1. Restart and count writes until quiet again.
	fmt.Fprintf(os.Stderr, "settled after %s; restarting the controller manager\n", time.Since(start).Round(time.Second))
	killed, proc := h.restartControllerManager()
	spawned := time.Now()
	ready := waitReady()
	after := settle()
	rss := 0.0
	if status, err := os.ReadFile(filepath.Join(proc, "status")); err == nil {
		for _, line := range strings.Split(string(status), "\n") {
			if strings.HasPrefix(line, "VmHWM:") {
				kb, _ := strconv.ParseFloat(strings.Fields(line)[1], 64)
				rss = kb / 1024
			}
		}
	}
	writes, lines := diffWrites(before, after)
	b.Logf("restart 1: ready %s after the kill (%s after the new process started); writes until quiet: %.0f %v; peak RSS %.0f MiB",
		ready.Sub(killed).Round(100*time.Millisecond), ready.Sub(spawned).Round(100*time.Millisecond), writes, lines, rss)

	// 2. Restart again and propagate a new template as soon as it is ready.
	fmt.Fprintf(os.Stderr, "restart 1 done after %s; restarting again for the probe\n", time.Since(start).Round(time.Second))
	killed, _ = h.restartControllerManager()
	spawned = time.Now()
	ready = waitReady()
	// A name of its own per run, so a kept stack (BENCH_STACK) can run the
	// bench again.
	probe := fmt.Sprintf("cold-probe-%d", time.Now().Unix())
	h.create(probe)
	h.waitFor("the probe in 3 members", 10*time.Minute, func() bool {
		h.mu.Lock()
		defer h.mu.Unlock()
		return len(h.arrived[probe]) == 3
	})
	h.mu.Lock()
	var last time.Time
	for _, t := range h.arrived[probe] {
		if t.After(last) {
			last = t
		}
	}
	h.mu.Unlock()
	b.Logf("restart 2: ready %s after the kill (%s after the new process started); a new template in all 3 members %s after the kill (%s after ready)",
		ready.Sub(killed).Round(100*time.Millisecond), ready.Sub(spawned).Round(100*time.Millisecond),
		last.Sub(killed).Round(100*time.Millisecond), last.Sub(ready).Round(100*time.Millisecond))
	// Where the probe's time went: when each object on its path was made.
	steps := []string{fmt.Sprintf("ready +%s", ready.Sub(killed).Round(100*time.Millisecond))}
	stamp := func(what string, t metav1.Time) {
		steps = append(steps, fmt.Sprintf("%s +%s", what, t.Time.Sub(killed).Round(time.Second)))
	}
	if d, err := h.cp.AppsV1().Deployments(ns).Get(ctx, probe, metav1.GetOptions{}); err == nil {
		stamp("template", d.CreationTimestamp)
	}
	if rb, err := h.dyn.Resource(rbGVR).Namespace(ns).Get(ctx, probe+"-deployment", metav1.GetOptions{}); err == nil {
		stamp("binding", rb.GetCreationTimestamp())
	}
	for i := range h.members {
		if w, err := h.dyn.Resource(workGVR).Namespace(fmt.Sprintf("karmada-es-member%d", i+1)).List(ctx, metav1.ListOptions{}); err == nil {
			for _, it := range w.Items {
				if strings.HasPrefix(it.GetName(), probe+"-") {
					stamp(fmt.Sprintf("work member%d", i+1), it.GetCreationTimestamp())
				}
			}
		}
	}
	b.Logf("the probe's path, after the kill (object creation times, whole seconds): %s", strings.Join(steps, ", "))
	b.ReportMetric(ready.Sub(killed).Seconds(), "s-ready")
	b.ReportMetric(last.Sub(killed).Seconds(), "s-propagating")
	b.ReportMetric(writes, "restart-writes")
	b.ReportMetric(rss, "MiB-peak-RSS")
}
