package bench

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/utils/ptr"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// scaleRow is one member count's figures in BenchmarkScale.
type scaleRow struct {
	members int
	// up is `flotilla up` to every Cluster Ready; pss the whole stack's
	// proportional memory then (GiB); idle the stack's CPU at rest (cores).
	up   time.Duration
	pss  float64
	idle float64
	// p50 and p99 of a Deployment at 1/s, create to the last member.
	p50, p99 time.Duration
	// burst is 100 templates to every member: copies a second, the
	// control plane's CPU per copy (its API server and the controller
	// manager, ms, from the first create until every copy's Work status
	// is written: a copy's status report is part of its cost, whenever
	// the status gate lets it through), and how long after the last copy
	// the last template's aggregated status was current.
	copiesPerSec, cpuPerCopyMs float64
	statusLag                  time.Duration
	// divided is 1,000 templates of 10 replicas divided over every
	// member, create to every binding FullyApplied.
	divided time.Duration
	// notReady is a paused member to its Cluster Ready=False; failover
	// from the pause until no binding is left on it.
	notReady, failover time.Duration
	cmRSS              float64
}

// burstTemplates is how many templates BenchmarkScale's burst sends to
// every member.
const burstTemplates = 100

// BenchmarkScale is the fleet-size curve: for each member count of
// BENCH_SCALE (default 3,10,30,100) it starts a stack of light members
// (`up --light-members`, Failover on, no-execute eviction) and measures the
// start, the memory and the CPU at rest, 1/s propagation to every member,
// a burst of 100 templates to every member, Divided placement of 1,000
// templates over all of them, and a member failing. It prints one table
// row per member count and, with BENCH_SCALE_PLOT=<file.svg>, plots
// latency and control-plane CPU per copy against members.
func BenchmarkScale(b *testing.B) {
	sizes := []int{3, 10, 30, 100}
	if v := os.Getenv("BENCH_SCALE"); v != "" {
		sizes = nil
		for _, f := range strings.Split(v, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(f))
			if err != nil || n < 2 {
				b.Fatalf("BENCH_SCALE=%q: a comma-separated list of member counts of 2 or more", v)
			}
			sizes = append(sizes, n)
		}
	}
	var rows []scaleRow
	for _, n := range sizes {
		b.Run(fmt.Sprintf("members=%d", n), func(b *testing.B) { rows = append(rows, benchScale(b, n)) })
	}
	ms := func(d time.Duration) string { return fmt.Sprintf("%.0f ms", float64(d.Microseconds())/1000) }
	fmt.Printf("\n| members | up | memory (PSS) | idle CPU | 1/s p50 | 1/s p99 | burst copies/s | CP CPU per copy (with its status) | status after last copy | 1,000 divided | member NotReady | failover | CM peak RSS |\n")
	fmt.Printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Printf("| %d | %.0f s | %.1f GiB | %.0f %% | %s | %s | %.0f | %.2f ms | %.1f s | %.1f s | %.1f s | %.1f s | %.0f MiB |\n",
			r.members, r.up.Seconds(), r.pss, r.idle*100, ms(r.p50), ms(r.p99), r.copiesPerSec, r.cpuPerCopyMs,
			r.statusLag.Seconds(), r.divided.Seconds(), r.notReady.Seconds(), r.failover.Seconds(), r.cmRSS)
	}
	// The burst's CPU per copy spreads each template's own cost (its
	// binding, scheduling, status and events) over its copies; the cost of
	// one more copy is the difference between two member counts.
	for i := 1; i < len(rows); i++ {
		p, r := rows[i-1], rows[i]
		extra := float64((r.members - p.members) * burstTemplates)
		fmt.Printf("control plane's CPU per added copy, %d to %d members: %.2f ms\n", p.members, r.members,
			(r.cpuPerCopyMs*float64(r.members*burstTemplates)-p.cpuPerCopyMs*float64(p.members*burstTemplates))/extra)
	}
	if path := os.Getenv("BENCH_SCALE_PLOT"); path != "" && len(rows) > 0 {
		if err := os.WriteFile(path, scalePlot(rows), 0o644); err != nil {
			b.Errorf("write the plot: %v", err)
		}
	}
}

func benchScale(b *testing.B, n int) scaleRow {
	row := scaleRow{members: n}
	start := time.Now()
	h := startHarnessN(b, n, nil, "--light-members", "--feature-gates=Failover=true",
		"--controller-manager-arg=--enable-no-execute-taint-eviction=true",
		"--controller-manager-arg=--resource-eviction-rate=100000",
		"--controller-manager-arg=--cluster-failure-threshold=10s")
	row.up = time.Since(start)
	row.pss = stackPSS(h.dataDir)

	// At rest: after the first status reports, over a window longer than
	// the light members' host takes between two garbage collections of its
	// heap (about a minute at 100 members), the costliest thing it does at
	// rest.
	time.Sleep(30 * time.Second)
	before := h.processCPU()
	const window = 60 * time.Second
	time.Sleep(window)
	row.idle = stackCPU(before, h.processCPU()).Seconds() / window.Seconds()

	h.steady("warm", 10, 5)
	time.Sleep(5 * time.Second)
	one := h.steady("s1", 60, 1)
	row.p50, row.p99 = pct(one, .5), pct(one, .99)
	h.stopHops()

	// A burst of burstTemplates templates to every member.
	var names []string
	for i := range burstTemplates {
		names = append(names, fmt.Sprintf("burst-%04d", i))
	}
	rbs := h.watchObjects(restConfig(b, h.kubeconfig, h.context), rbGVR, ns)
	writesBefore := h.workStatusWrites()
	cpuStart := h.processCPU()
	burstStart := time.Now()
	parallel(names, h.create)
	_, last := h.latencies(names, 15*time.Minute)
	copies := float64(len(names) * n)
	row.copiesPerSec = copies / last.Sub(burstStart).Seconds()
	h.waitFor("aggregated status of every burst template", 15*time.Minute, func() bool {
		return rbs(func(rb *unstructured.Unstructured) bool {
			return strings.HasPrefix(rb.GetName(), "burst-") && fullyApplied(rb)
		}) == len(names)
	})
	row.statusLag = time.Since(last)
	// Read once a second: the API server's metrics page costs it several
	// milliseconds, which ten reads a second would add to the cost measured.
	for deadline := time.Now().Add(15 * time.Minute); h.workStatusWrites()-writesBefore < int(copies); time.Sleep(time.Second) {
		if time.Now().After(deadline) {
			b.Fatal("timed out after 15m waiting for a status write for every burst Work")
		}
	}
	row.cpuPerCopyMs = float64(controlPlaneCPU(cpuStart, h.processCPU()).Milliseconds()) / copies

	// 1,000 templates divided over every member, in a namespace of their own.
	ctx := context.Background()
	const divNS = "divided"
	if _, err := h.cp.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: divNS}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	var clusters []string
	for i := 1; i <= n; i++ {
		clusters = append(clusters, fmt.Sprintf("member%d", i))
	}
	h.kubectlApply(notReadyEvicts + `---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: divided, namespace: ` + divNS + `}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [` + strings.Join(clusters, ", ") + `]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList: [{targetCluster: {clusterNames: [` + strings.Join(clusters, ", ") + `]}, weight: 1}]
  failover: {cluster: {purgeMode: Directly}}
`)
	divided := h.watchObjects(restConfig(b, h.kubeconfig, h.context), rbGVR, divNS)
	const count = 1000
	divStart := time.Now()
	h.createDeployments(divNS, "div", count, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](10) })
	h.waitFor("every divided binding fully applied", 20*time.Minute, func() bool {
		return divided(fullyApplied) == count
	})
	row.divided = time.Since(divStart)

	// The last member fails.
	failing := clusters[n-1]
	onFailing := func(rb *unstructured.Unstructured) bool {
		targets, _, _ := unstructured.NestedSlice(rb.Object, "spec", "clusters")
		for _, t := range targets {
			if m, ok := t.(map[string]any); ok && m["name"] == failing {
				return true
			}
		}
		return false
	}
	if divided(onFailing) == 0 {
		b.Fatalf("no divided binding is on %s to fail over", failing)
	}
	if err := localstack.PauseLightMember(ctx, h.dataDir, failing, true); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = localstack.PauseLightMember(context.Background(), h.dataDir, failing, false) })
	paused := time.Now()
	h.waitFor(failing+" NotReady", 5*time.Minute, func() bool {
		c, err := h.dyn.Resource(clusterGVR).Get(ctx, failing, metav1.GetOptions{})
		if err != nil {
			return false
		}
		conds, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
		for _, c := range conds {
			if m, ok := c.(map[string]any); ok && m["type"] == "Ready" {
				return m["status"] != "True"
			}
		}
		return false
	})
	row.notReady = time.Since(paused)
	h.waitFor("no binding left on "+failing, 10*time.Minute, func() bool { return divided(onFailing) == 0 })
	row.failover = time.Since(paused)
	row.cmRSS = h.controllerManagerRSS()
	fmt.Printf("members=%d: up %.0fs, PSS %.1f GiB, idle %.0f%% of a core; 1/s p50 %s p99 %s; burst %.0f copies/s, %.2f ms CP CPU per copy, status %.1fs after the last copy; 1,000 divided in %.1fs; %s NotReady after %.1fs, bindings off it after %.1fs; CM peak RSS %.0f MiB\n",
		n, row.up.Seconds(), row.pss, row.idle*100, row.p50, row.p99, row.copiesPerSec, row.cpuPerCopyMs, row.statusLag.Seconds(),
		row.divided.Seconds(), failing, row.notReady.Seconds(), row.failover.Seconds(), row.cmRSS)
	fmt.Printf("CPU used per component (user+system, whole run):\n%s", h.cpuByComponent())
	return row
}

// stackPSS is the proportional set size of every process of the stack in
// dataDir, in GiB (shared pages counted once, split between sharers).
func stackPSS(dataDir string) float64 {
	var kib float64
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err != nil || !bytes.Contains(cmdline, []byte(dataDir)) {
			continue
		}
		rollup, err := os.ReadFile(filepath.Join("/proc", e.Name(), "smaps_rollup"))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(rollup), "\n") {
			if v, ok := strings.CutPrefix(line, "Pss:"); ok {
				n, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
				kib += n
			}
		}
	}
	return kib / (1 << 20)
}

// stackCPU is the CPU every process of the stack used between two
// processCPU readings.
func stackCPU(before, after map[string]time.Duration) time.Duration {
	var total time.Duration
	for k, v := range after {
		if k != "machine" {
			total += v - before[k]
		}
	}
	return total
}

// workStatusWrites is how many Work status writes the control plane's API
// server has served since it started (writeCounts' "works/status"): a count
// that costs the API server one metrics page, where watching ten thousand
// Works would add a watcher to what is measured.
func (h *harness) workStatusWrites() int {
	counts, err := writeCounts(h.cp)
	if err != nil {
		h.b.Fatalf("read the control plane's metrics: %v", err)
	}
	return int(counts["works/status"])
}

// controlPlaneCPU is the CPU the control plane's API server and the
// controller manager used between two processCPU readings.
func controlPlaneCPU(before, after map[string]time.Duration) time.Duration {
	var total time.Duration
	for k, v := range after {
		if strings.Contains(k, localstack.ControlPlaneName) && strings.Contains(k, "component") || strings.HasSuffix(k, " controller-manager") {
			total += v - before[k]
		}
	}
	return total
}

// scalePlot draws, against the member count (log scale), the 1/s p99
// (ms, left axis) and the control plane's CPU per copy (ms, right axis),
// as an SVG.
func scalePlot(rows []scaleRow) []byte {
	const w, hgt, left, right, top, bottom = 640.0, 360.0, 60.0, 60.0, 30.0, 50.0
	maxLat, maxCPU := 1.0, 0.01
	for _, r := range rows {
		maxLat = max(maxLat, float64(r.p99.Milliseconds()))
		maxCPU = max(maxCPU, r.cpuPerCopyMs)
	}
	maxLat, maxCPU = maxLat*1.15, maxCPU*1.15
	minM, maxM := float64(rows[0].members), float64(rows[len(rows)-1].members)
	x := func(m int) float64 {
		if maxM == minM {
			return left
		}
		return left + (w-left-right)*(math.Log(float64(m))-math.Log(minM))/(math.Log(maxM)-math.Log(minM))
	}
	y := func(v, top2 float64) float64 { return hgt - bottom - (hgt-top-bottom)*v/top2 }
	var s strings.Builder
	fmt.Fprintf(&s, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" font-family="sans-serif" font-size="12">`+"\n", w, hgt)
	fmt.Fprintf(&s, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&s, `<text x="%.0f" y="18" text-anchor="middle" font-size="14">Light members: 1/s p99 and control-plane CPU per copy</text>`+"\n", w/2)
	fmt.Fprintf(&s, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="black"/>`+"\n", left, hgt-bottom, w-right, hgt-bottom)
	fmt.Fprintf(&s, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#1f77b4"/>`+"\n", left, top, left, hgt-bottom)
	fmt.Fprintf(&s, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f" stroke="#d62728"/>`+"\n", w-right, top, w-right, hgt-bottom)
	for i := 0; i <= 4; i++ {
		f := float64(i) / 4
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="end" fill="#1f77b4">%.0f</text>`+"\n", left-4, y(f*maxLat, maxLat)+4, f*maxLat)
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" fill="#d62728">%.2f</text>`+"\n", w-right+4, y(f*maxCPU, maxCPU)+4, f*maxCPU)
	}
	var lat, cpu []string
	for _, r := range rows {
		fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="middle">%d</text>`+"\n", x(r.members), hgt-bottom+16, r.members)
		lat = append(lat, fmt.Sprintf("%.1f,%.1f", x(r.members), y(float64(r.p99.Milliseconds()), maxLat)))
		cpu = append(cpu, fmt.Sprintf("%.1f,%.1f", x(r.members), y(r.cpuPerCopyMs, maxCPU)))
	}
	fmt.Fprintf(&s, `<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>`+"\n", strings.Join(lat, " "))
	fmt.Fprintf(&s, `<polyline points="%s" fill="none" stroke="#d62728" stroke-width="2" stroke-dasharray="6 3"/>`+"\n", strings.Join(cpu, " "))
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" text-anchor="middle">member clusters (log scale)</text>`+"\n", w/2, hgt-12)
	fmt.Fprintf(&s, `<text x="14" y="%.0f" fill="#1f77b4" transform="rotate(-90 14 %.0f)" text-anchor="middle">1/s p99 to the last member (ms)</text>`+"\n", hgt/2, hgt/2)
	fmt.Fprintf(&s, `<text x="%.0f" y="%.0f" fill="#d62728" transform="rotate(90 %.0f %.0f)" text-anchor="middle">control-plane CPU per copy (ms)</text>`+"\n", w-14, hgt/2, w-14, hgt/2)
	s.WriteString("</svg>\n")
	return []byte(s.String())
}
