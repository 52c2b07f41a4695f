package bench

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	metricsclient "k8s.io/metrics/pkg/client/clientset/versioned"
	"k8s.io/utils/ptr"
)

var fhpaGVR = schema.GroupVersionResource{Group: "autoscaling.karmada.io", Version: "v1alpha1", Resource: "federatedhpas"}

// procOf is the /proc directory of the stack's process whose command line
// holds the argument arg ("" when none runs).
func (h *harness) procOf(arg string) string {
	entries, _ := os.ReadDir("/proc")
	for _, e := range entries {
		cmdline, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(cmdline, []byte("\x00"+arg+"\x00")) && bytes.Contains(cmdline, []byte(h.dataDir)) {
			return filepath.Join("/proc", e.Name())
		}
	}
	return ""
}

// applyIn applies yaml with kubectl in member cluster ("" for the control plane).
func (h *harness) applyIn(member, yaml string) {
	kc, ctx := filepath.Join(h.dataDir, "karmada.config"), "karmada-apiserver"
	if member != "" {
		kc, ctx = filepath.Join(h.dataDir, "members.config"), member
	}
	cmd := exec.Command("kubectl", "--kubeconfig", kc, "--context", ctx, "apply", "-f", "-")
	cmd.Stdin = strings.NewReader(yaml)
	if out, err := cmd.CombinedOutput(); err != nil {
		h.b.Fatalf("apply in %q: %v\n%s", member, err, out)
	}
}

// reconcileTime scrapes the controller manager's controller-runtime
// reconcile time histogram for the FederatedHPA controller: seconds summed
// and count.
func reconcileTime(addr string) (float64, float64) {
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		return 0, 0
	}
	defer resp.Body.Close()
	var sum, count float64
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, `controller="federatedHorizontalPodAutoscaler"`) {
			continue
		}
		v, _ := strconv.ParseFloat(l[strings.LastIndexByte(l, ' ')+1:], 64)
		switch {
		case strings.HasPrefix(l, "controller_runtime_reconcile_time_seconds_sum"):
			sum = v
		case strings.HasPrefix(l, "controller_runtime_reconcile_time_seconds_count"):
			count = v
		}
	}
	return sum, count
}

func freePort(b *testing.B) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// BenchmarkFederatedHPA measures the autoscaling path on simulated members
// (3 members, kwok usage, metrics-server, the metrics adapter):
//   - the adapter: latency of a pod metrics list on the control plane
//     matching 300 pods spread over the 3 members;
//   - the control loop: BENCH_FHPA (default 500) FederatedHPAs on as many
//     Deployments, synced every 15 s: the controller manager's and the
//     adapter's CPU, and the FederatedHPA controller's busy time per round;
//   - reaction: from raising the usage of a Deployment's pods in the
//     members to the template's new replica count, with the time the
//     control plane's metrics API first showed the new usage.
func BenchmarkFederatedHPA(b *testing.B) {
	if bare {
		b.Skip("FederatedHPA needs simulated members (unset BENCH_BARE)")
	}
	metricsAddr := freePort(b)
	h := startHarness(b, "--controller-manager-arg=--metrics-bind-address="+metricsAddr)
	h.stopHops()
	n := 500
	if v, err := strconv.Atoi(os.Getenv("BENCH_FHPA")); err == nil {
		n = v
	}
	ctx := context.Background()
	kc := restConfig(b, filepath.Join(h.dataDir, "karmada.config"), "karmada-apiserver")
	mc := metricsclient.NewForConfigOrDie(kc)
	for _, m := range []string{"member1", "member2", "member3"} {
		h.applyIn(m, `apiVersion: kwok.x-k8s.io/v1alpha1
kind: ClusterResourceUsage
metadata: {name: bench}
spec:
  selector: {matchNamespaces: [bench]}
  usages:
  - usage: {cpu: {value: 50m}, memory: {value: 20Mi}}
`)
	}
	for range b.N {
		// The adapter: 100 replicas duplicated to 3 members = 300 pods.
		load := deployment("adapter-load")
		load.Spec.Replicas = ptr.To[int32](100)
		if _, err := h.cp.AppsV1().Deployments(ns).Create(ctx, load, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		list := func() (int, error) {
			l, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=adapter-load"})
			if err != nil {
				return 0, err
			}
			return len(l.Items), nil
		}
		h.waitFor("metrics of the 300 adapter-load pods on the control plane", 5*time.Minute, func() bool {
			got, err := list()
			return err == nil && got == 300
		})
		var lat []time.Duration
		for range 300 {
			start := time.Now()
			if got, err := list(); err != nil || got != 300 {
				b.Fatalf("pod metrics list: %d items, %v", got, err)
			}
			lat = append(lat, time.Since(start))
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		fmt.Printf("adapter: pod metrics list, 300 pods over 3 members, 300 sequential calls: p50 %.1f ms, p99 %.1f ms, max %.1f ms\n",
			ms(pct(lat, 0.5)), ms(pct(lat, 0.99)), ms(lat[len(lat)-1]))
		if err := h.cp.AppsV1().Deployments(ns).Delete(ctx, "adapter-load", metav1.DeleteOptions{}); err != nil {
			b.Fatal(err)
		}

		// The control loop.
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("fhpa-%04d", i))
		}
		parallel(names, h.create)
		h.latencies(names, 10*time.Minute)
		parallel(names, func(name string) {
			obj := &unstructured.Unstructured{Object: map[string]any{
				"apiVersion": "autoscaling.karmada.io/v1alpha1", "kind": "FederatedHPA",
				"metadata": map[string]any{"name": name, "namespace": ns},
				"spec": map[string]any{
					"scaleTargetRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": name},
					"minReplicas":    int64(1), "maxReplicas": int64(10),
					"metrics": []any{map[string]any{"type": "Resource", "resource": map[string]any{
						"name": "cpu", "target": map[string]any{"type": "AverageValue", "averageValue": "100m"}}}},
				},
			}}
			if _, err := h.dyn.Resource(fhpaGVR).Namespace(ns).Create(ctx, obj, metav1.CreateOptions{}); err != nil {
				b.Errorf("create FederatedHPA %s: %v", name, err)
			}
		})
		h.waitFor(fmt.Sprintf("%d FederatedHPAs with current metrics", n), 10*time.Minute, func() bool {
			l, err := h.dyn.Resource(fhpaGVR).Namespace(ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				return false
			}
			done := 0
			for _, it := range l.Items {
				if m, _, _ := unstructured.NestedSlice(it.Object, "status", "currentMetrics"); len(m) > 0 {
					done++
				}
			}
			return done == n
		})
		cm, adapter := h.controllerManagerProc(), h.procOf("metrics-adapter")
		const window = 60 * time.Second
		cm0, ad0 := cpuSeconds(cm), cpuSeconds(adapter)
		sum0, count0 := reconcileTime(metricsAddr)
		time.Sleep(window)
		cm1, ad1 := cpuSeconds(cm), cpuSeconds(adapter)
		sum1, count1 := reconcileTime(metricsAddr)
		rounds := window.Seconds() / 15
		syncs := count1 - count0
		fmt.Printf("control loop: %d FederatedHPAs, sync period 15s, %.0f s window: controller manager CPU %.1f%% of a core, metrics adapter %.1f%%; %.0f syncs (%.0f per round), mean sync %.1f ms, FederatedHPA controller busy %.1f s per round (4 workers: a round takes about %.1f s)\n",
			n, window.Seconds(), 100*(cm1-cm0)/window.Seconds(), 100*(ad1-ad0)/window.Seconds(), syncs, syncs/rounds,
			1000*(sum1-sum0)/max(syncs, 1), (sum1-sum0)/rounds, (sum1-sum0)/rounds/4)

		// Reaction: raise the usage of one Deployment's 3 pods (one per
		// member) from 50m to 400m against a 100m target.
		var reactions, visible []time.Duration
		for i := range 5 {
			name := names[i]
			time.Sleep(time.Duration(rand.IntN(15000)) * time.Millisecond) // a random phase of the sync period
			var pods []string
			for j, m := range h.members {
				pl, err := m.CoreV1().Pods(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name})
				if err != nil || len(pl.Items) == 0 {
					b.Fatalf("pods of %s in member%d: %v", name, j+1, err)
				}
				for _, p := range pl.Items {
					pods = append(pods, p.Name)
					h.applyIn(fmt.Sprintf("member%d", j+1), fmt.Sprintf(`apiVersion: kwok.x-k8s.io/v1alpha1
kind: ResourceUsage
metadata: {name: %s, namespace: bench}
spec:
  usages:
  - usage: {cpu: {value: 400m}, memory: {value: 20Mi}}
`, p.Name))
				}
			}
			changed := time.Now()
			var seen time.Duration
			h.waitFor(name+" to scale up", 2*time.Minute, func() bool {
				if seen == 0 {
					if l, err := mc.MetricsV1beta1().PodMetricses(ns).List(ctx, metav1.ListOptions{LabelSelector: "app=" + name}); err == nil {
						high := 0
						for _, pm := range l.Items {
							for _, c := range pm.Containers {
								if c.Usage.Cpu().MilliValue() >= 300 {
									high++
								}
							}
						}
						if high == len(pods) {
							seen = time.Since(changed)
						}
					}
				}
				d, err := h.cp.AppsV1().Deployments(ns).Get(ctx, name, metav1.GetOptions{})
				return err == nil && d.Spec.Replicas != nil && *d.Spec.Replicas > 1
			})
			reactions = append(reactions, time.Since(changed))
			visible = append(visible, seen)
		}
		sort.Slice(reactions, func(i, j int) bool { return reactions[i] < reactions[j] })
		var parts []string
		for i := range reactions {
			parts = append(parts, fmt.Sprintf("%.1f s", reactions[i].Seconds()))
		}
		sort.Slice(visible, func(i, j int) bool { return visible[i] < visible[j] })
		fmt.Printf("reaction: usage raised in the members -> template rescaled, 5 samples: %s (median %.1f s, max %.1f s); the control plane's metrics API showed the new usage after a median %.1f s (max %.1f s)\n",
			strings.Join(parts, ", "), reactions[2].Seconds(), reactions[4].Seconds(), visible[2].Seconds(), visible[4].Seconds())
	}
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
