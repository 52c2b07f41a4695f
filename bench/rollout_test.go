package bench

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"

	"github.com/flotilla-io/flotilla/internal/localstack"
)

// imageTracker records, per Deployment of one namespace in one member,
// when it first ran each image, and when it was first Healthy on it (by
// Karmada's rule for Deployments: observed generation current, every
// replica updated and available).
type imageTracker struct {
	mu      sync.Mutex
	first   map[string]map[string]time.Time // name -> image -> first seen
	healthy map[string]map[string]time.Time // name -> image -> first Healthy
}

func trackImages(b *testing.B, c kubernetes.Interface, namespace string) *imageTracker {
	t := &imageTracker{first: map[string]map[string]time.Time{}, healthy: map[string]map[string]time.Time{}}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(namespace))
	inf := f.Apps().V1().Deployments().Informer()
	set := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		img := d.Spec.Template.Spec.Containers[0].Image
		t.mu.Lock()
		defer t.mu.Unlock()
		if t.first[d.Name] == nil {
			t.first[d.Name] = map[string]time.Time{}
		}
		if _, seen := t.first[d.Name][img]; !seen {
			t.first[d.Name][img] = time.Now()
		}
		want := int32(1)
		if d.Spec.Replicas != nil {
			want = *d.Spec.Replicas
		}
		st := d.Status
		if st.ObservedGeneration == d.Generation && st.UpdatedReplicas >= want && st.AvailableReplicas >= st.UpdatedReplicas {
			if t.healthy[d.Name] == nil {
				t.healthy[d.Name] = map[string]time.Time{}
			}
			if _, seen := t.healthy[d.Name][img]; !seen {
				t.healthy[d.Name][img] = time.Now()
			}
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: set, UpdateFunc: func(_, n any) { set(n) }})
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
	return t
}

// running counts the Deployments that have run image.
func (t *imageTracker) running(image string) int {
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, imgs := range t.first {
		if _, ok := imgs[image]; ok {
			n++
		}
	}
	return n
}

// at is when name first ran image.
func (t *imageTracker) at(name, image string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.first[name][image]
}

// healthyAt is when name was first Healthy on image.
func (t *imageTracker) healthyAt(name, image string) time.Time {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.healthy[name][image]
}

// rolloutRun is one image change to every Deployment of a namespace.
type rolloutRun struct {
	took        time.Duration   // the change to the last member copy
	canaryDone  time.Duration   // the change to the last canary copy
	beyondSoak  []time.Duration // prod's first copy after the canary's, beyond the soak
	canaryReady []time.Duration // the canary's copy changed to Healthy in the member
	admitAfter  []time.Duration // the canary Healthy in the member to prod's first copy, beyond the soak
	// From the bindings' status.rollout (second resolution): the canary
	// Healthy in the member to the rollout controller's healthySince
	// (the report); healthySince + soak to prod's admittedTime (the
	// planner's timer); admittedTime to prod's first copy (the Work
	// written and applied).
	reported, timer, written []time.Duration
	writes                   float64
	writesByKind             []string
	rolloutsDone             time.Duration // the change to every binding RolloutSucceeded
	cmCPU                    float64
}

// BenchmarkStagedRollout: 300 Deployments across three full simulated
// members, then one image change to all 300: once without a strategy, once
// under one RolloutStrategy (waves by the label env: member1 canary, then
// member2 and member3 prod; minSuccessTime 10 s). Reports how long each
// takes, how long each template's prod wave starts after its canary beyond
// minSuccessTime (the cost of a wave: the canary becoming Healthy, the
// soak's detection, the admission), and the control plane's writes per
// template against the change without a strategy.
func BenchmarkStagedRollout(b *testing.B) {
	if bare {
		b.Skip("a staged rollout waits for health, which bare members never report: run without BENCH_BARE")
	}
	h := startHarness(b)
	h.stopHops()
	const n = 300
	const minSuccess = 10 * time.Second
	kubectl := func(args ...string) {
		out, err := exec.Command("kubectl", append([]string{"--kubeconfig", filepath.Join(h.dataDir, "karmada.config")}, args...)...).CombinedOutput()
		if err != nil {
			b.Fatalf("kubectl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	kubectl("label", "cluster", "member1", "env=canary", "--overwrite")
	kubectl("label", "cluster", "member2", "member3", "env=prod", "--overwrite")
	for range b.N {
		plain := h.imageChange("plain", n, "", 0)
		staged := h.imageChange("staged", n, fmt.Sprintf(`apiVersion: rollout.flotilla.io/v1alpha1
kind: RolloutStrategy
metadata: {name: canary-first, namespace: staged}
spec:
  type: ProgressivePerGroup
  groupBy: {clusterLabel: env}
  groups: [canary, prod]
  minSuccessTime: %s
  progressDeadline: 10m
`, minSuccess), minSuccess)
		slices.Sort(staged.beyondSoak)
		slices.Sort(staged.canaryReady)
		slices.Sort(staged.admitAfter)
		fmt.Printf("\nstaged rollout: %d Deployments, 3 full simulated members, one image change to all\n", n)
		fmt.Printf("without a strategy: every member copy changed in %.1fs; control-plane writes %.0f (%.1f per template); controller-manager %.1f CPU-s\n",
			plain.took.Seconds(), plain.writes, plain.writes/n, plain.cmCPU)
		fmt.Printf("  %s\n", strings.Join(plain.writesByKind, "; "))
		fmt.Printf("canary-first (minSuccessTime %s): canary wave done in %.1fs, every member copy in %.1fs, every binding RolloutSucceeded in %.1fs; control-plane writes %.0f (%.1f per template); controller-manager %.1f CPU-s\n",
			minSuccess, staged.canaryDone.Seconds(), staged.took.Seconds(), staged.rolloutsDone.Seconds(), staged.writes, staged.writes/n, staged.cmCPU)
		fmt.Printf("  %s\n", strings.Join(staged.writesByKind, "; "))
		fmt.Printf("prod wave start after the template's canary, beyond minSuccessTime: p50 %s, p90 %s, p99 %s, max %s\n",
			pct(staged.beyondSoak, 0.5).Round(time.Millisecond), pct(staged.beyondSoak, 0.9).Round(time.Millisecond),
			pct(staged.beyondSoak, 0.99).Round(time.Millisecond), staged.beyondSoak[len(staged.beyondSoak)-1].Round(time.Millisecond))
		fmt.Printf("  of which the canary's copy becoming Healthy in member1 (the member's own rollout of the pods): p50 %s, p90 %s, max %s\n",
			pct(staged.canaryReady, 0.5).Round(time.Millisecond), pct(staged.canaryReady, 0.9).Round(time.Millisecond), staged.canaryReady[len(staged.canaryReady)-1].Round(time.Millisecond))
		fmt.Printf("  and from Healthy in member1 to prod's first copy, beyond minSuccessTime (health reported, soak timed, prod admitted and written): p50 %s, p90 %s, max %s\n",
			pct(staged.admitAfter, 0.5).Round(time.Millisecond), pct(staged.admitAfter, 0.9).Round(time.Millisecond), staged.admitAfter[len(staged.admitAfter)-1].Round(time.Millisecond))
		for _, d := range [][]time.Duration{staged.reported, staged.timer, staged.written} {
			slices.Sort(d)
		}
		if len(staged.reported) > 0 {
			fmt.Printf("  split from the bindings' status.rollout (1 s resolution), p50 / p90 / max: health reported %s / %s / %s; soak timer beyond minSuccessTime %s / %s / %s; prod admitted to its first copy %s / %s / %s\n",
				pct(staged.reported, 0.5), pct(staged.reported, 0.9), staged.reported[len(staged.reported)-1],
				pct(staged.timer, 0.5), pct(staged.timer, 0.9), staged.timer[len(staged.timer)-1],
				pct(staged.written, 0.5).Round(time.Millisecond), pct(staged.written, 0.9).Round(time.Millisecond), staged.written[len(staged.written)-1].Round(time.Millisecond))
		}
		waits := h.queueWaits("rollout", "execution", "binding", "status")
		var keys []string
		for k := range waits {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		for _, k := range keys {
			w := waits[k]
			fmt.Printf("  queue %s: %.0f items, mean wait %.3fs, mean reconcile %.3fs (both runs)\n", k, w[0], w[1], w[2])
		}
		b.ReportMetric(plain.writes/n, "plain-writes/template")
		b.ReportMetric(staged.writes/n, "staged-writes/template")
		b.ReportMetric(pct(staged.beyondSoak, 0.5).Seconds(), "wave-beyond-soak-p50-s")
		b.ReportMetric(staged.took.Seconds(), "staged-total-s")
	}
}

// imageChange creates namespace with n Deployments (image nginx), a
// PropagationPolicy placing them on every member (naming the strategy of
// strategyYAML, when given, whose minSuccessTime is soak), waits until they run and their status settled,
// then changes every image to nginx:2 and measures until every member runs
// it (and, staged, every binding reports RolloutSucceeded) and the status
// reports of the change went out.
func (h *harness) imageChange(namespace string, n int, strategyYAML string, soak time.Duration) rolloutRun {
	b := h.b
	ctx := context.Background()
	if _, err := h.cp.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: namespace}}, metav1.CreateOptions{}); err != nil {
		b.Fatal(err)
	}
	annotation := ""
	if strategyYAML != "" {
		h.kubectlApply(strategyYAML)
		annotation = "\n  annotations: {rollout.flotilla.io/strategy: canary-first}"
	}
	h.kubectlApply(fmt.Sprintf(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: all
  namespace: %s%s
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`, namespace, annotation))
	trackers := make([]*imageTracker, len(h.members))
	for i, m := range h.members {
		trackers[i] = trackImages(b, m, namespace)
	}
	h.createDeployments(namespace, "web", n, func(*appsv1.Deployment) {})
	h.waitFor(fmt.Sprintf("%d Deployments of %s in 3 members", n, namespace), 10*time.Minute, func() bool {
		for _, t := range trackers {
			if t.running("nginx") < n {
				return false
			}
		}
		return true
	})
	time.Sleep(40 * time.Second) // the setup's status reports go out (statusgate.StatusMaxDefer)
	var names []string
	for i := range n {
		names = append(names, fmt.Sprintf("web-%04d", i))
	}
	before := h.allWrites()
	cpu0 := h.controllerManagerCPU()
	start := time.Now()
	patch := []byte(`{"spec":{"template":{"spec":{"containers":[{"name":"app","image":"nginx:2"}]}}}}`)
	parallel(names, func(name string) {
		if _, err := h.cp.AppsV1().Deployments(namespace).Patch(ctx, name, types.StrategicMergePatchType, patch, metav1.PatchOptions{}); err != nil {
			b.Errorf("patch %s: %v", name, err)
		}
	})
	h.waitFor(fmt.Sprintf("nginx:2 in every member copy of %s", namespace), 20*time.Minute, func() bool {
		for _, t := range trackers {
			if t.running("nginx:2") < n {
				return false
			}
		}
		return true
	})
	r := rolloutRun{}
	last := func(t *imageTracker) (out time.Time) {
		for _, name := range names {
			if at := t.at(name, "nginx:2"); at.After(out) {
				out = at
			}
		}
		return out
	}
	for _, t := range trackers {
		r.took = max(r.took, last(t).Sub(start))
	}
	r.canaryDone = last(trackers[0]).Sub(start)
	if strategyYAML != "" {
		for _, name := range names {
			canary := trackers[0].at(name, "nginx:2")
			prod := trackers[1].at(name, "nginx:2")
			if p3 := trackers[2].at(name, "nginx:2"); p3.Before(prod) {
				prod = p3
			}
			r.beyondSoak = append(r.beyondSoak, prod.Sub(canary)-soak)
			ready := trackers[0].healthyAt(name, "nginx:2")
			r.canaryReady = append(r.canaryReady, ready.Sub(canary))
			r.admitAfter = append(r.admitAfter, prod.Sub(ready)-soak)
		}
		h.waitFor("every binding RolloutSucceeded", 10*time.Minute, func() bool {
			l, err := h.dyn.Resource(rbGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
			if err != nil || len(l.Items) < n {
				return false
			}
			for i := range l.Items {
				if !rolloutSucceeded(&l.Items[i]) {
					return false
				}
			}
			return true
		})
		r.rolloutsDone = time.Since(start)
		l, err := h.dyn.Resource(rbGVR).Namespace(namespace).List(ctx, metav1.ListOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range l.Items {
			name, _, _ := unstructured.NestedString(l.Items[i].Object, "spec", "resource", "name")
			clusters, _, _ := unstructured.NestedSlice(l.Items[i].Object, "status", "rollout", "clusters")
			times := map[string]map[string]time.Time{}
			for _, c := range clusters {
				m, _ := c.(map[string]any)
				cn, _ := m["name"].(string)
				times[cn] = map[string]time.Time{}
				for _, k := range []string{"admittedTime", "healthySince"} {
					if v, ok := m[k].(string); ok {
						times[cn][k], _ = time.Parse(time.RFC3339, v)
					}
				}
			}
			ready := trackers[0].healthyAt(name, "nginx:2")
			since := times["member1"]["healthySince"]
			admitted := times["member2"]["admittedTime"]
			if times["member3"]["admittedTime"].Before(admitted) {
				admitted = times["member3"]["admittedTime"]
			}
			prod := trackers[1].at(name, "nginx:2")
			if p3 := trackers[2].at(name, "nginx:2"); p3.Before(prod) {
				prod = p3
			}
			if since.IsZero() || admitted.IsZero() || ready.IsZero() {
				continue
			}
			r.reported = append(r.reported, since.Sub(ready.Truncate(time.Second)))
			r.timer = append(r.timer, admitted.Sub(since)-soak)
			r.written = append(r.written, prod.Sub(admitted))
		}
	}
	time.Sleep(40 * time.Second) // the change's status reports go out
	r.cmCPU = h.controllerManagerCPU() - cpu0
	after := h.allWrites()
	_, lines := diffWrites(before, after)
	for _, l := range lines {
		if strings.HasPrefix(l, "cp:") {
			r.writesByKind = append(r.writesByKind, strings.TrimPrefix(l, "cp:"))
			var v float64
			_, _ = fmt.Sscanf(l[strings.LastIndexByte(l, ' ')+1:], "%f", &v)
			r.writes += v
		}
	}
	return r
}

// queueWaits reads the controller manager's workqueue metrics: per
// controller whose name contains one of names, the items queued and their
// mean wait in the queue and mean reconcile time (seconds), as counted
// since it started.
func (h *harness) queueWaits(names ...string) map[string][3]float64 {
	port := h.ports()[localstack.ControllerManagerMetricsPort]
	resp, err := http.Get(fmt.Sprintf("http://127.0.0.1:%d/metrics", port))
	if err != nil {
		h.b.Logf("controller manager metrics: %v", err)
		return nil
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	sums := map[string]map[string]float64{}
	for _, line := range strings.Split(string(raw), "\n") {
		for _, metric := range []string{"workqueue_queue_duration_seconds_sum", "workqueue_queue_duration_seconds_count", "workqueue_work_duration_seconds_sum"} {
			if !strings.HasPrefix(line, metric+"{") {
				continue
			}
			i := strings.Index(line, `name="`)
			if i < 0 {
				continue
			}
			name := line[i+6:]
			name = name[:strings.IndexByte(name, '"')]
			if !slices.ContainsFunc(names, func(n string) bool { return strings.Contains(name, n) }) {
				continue
			}
			v, _ := strconv.ParseFloat(line[strings.LastIndexByte(line, ' ')+1:], 64)
			if sums[name] == nil {
				sums[name] = map[string]float64{}
			}
			sums[name][metric] += v
		}
	}
	out := map[string][3]float64{}
	for name, m := range sums {
		n := m["workqueue_queue_duration_seconds_count"]
		if n == 0 {
			continue
		}
		out[name] = [3]float64{n, m["workqueue_queue_duration_seconds_sum"] / n, m["workqueue_work_duration_seconds_sum"] / n}
	}
	return out
}

// rolloutSucceeded says a binding's Progressing condition is RolloutSucceeded.
func rolloutSucceeded(u *unstructured.Unstructured) bool {
	conds, _, _ := unstructured.NestedSlice(u.Object, "status", "conditions")
	for _, c := range conds {
		m, _ := c.(map[string]any)
		if m["type"] == "Progressing" {
			return m["reason"] == "RolloutSucceeded"
		}
	}
	return false
}
