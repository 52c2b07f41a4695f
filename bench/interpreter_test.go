package bench

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	k8sruntime "k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter"
)

// cloneSet is an OpenKruise CloneSet: the bundled customization interprets it.
func cloneSet(name string, replicas int64) *unstructured.Unstructured {
	return &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "apps.kruise.io/v1alpha1", "kind": "CloneSet",
		"metadata": map[string]any{"name": name, "namespace": ns, "labels": map[string]any{"app": name}},
		"spec": map[string]any{
			"replicas": replicas,
			"selector": map[string]any{"matchLabels": map[string]any{"app": name}},
			"template": map[string]any{
				"metadata": map[string]any{"labels": map[string]any{"app": name}},
				"spec": map[string]any{"containers": []any{map[string]any{"name": "app", "image": "nginx",
					"resources": map[string]any{"requests": map[string]any{"cpu": "100m", "memory": "128Mi"}}}}},
			},
		},
	}}
}

// BenchmarkLuaInterpreter measures the bundled CloneSet customization through the interpreter
// the controllers use, on one goroutine (per core), with the Lua pool warm: calls per second
// and allocations per call for GetReplicas, ReviseReplica and AggregateStatus. It needs no
// stack.
func BenchmarkLuaInterpreter(b *testing.B) {
	in := interpreter.New(nil)
	ctx := context.Background()
	obj := cloneSet("web", 6)
	status := func(n int) []byte {
		return []byte(fmt.Sprintf(`{"replicas":%d,"readyReplicas":%d,"availableReplicas":%d,"updatedReplicas":%d,"updatedReadyReplicas":%d,"observedGeneration":1,"generation":1,"resourceTemplateGeneration":1}`, n, n, n, n, n))
	}
	var items []workv1alpha2.AggregatedStatusItem
	for i, n := range []int{2, 2, 2} {
		items = append(items, workv1alpha2.AggregatedStatusItem{ClusterName: fmt.Sprintf("member%d", i+1), Applied: true, Health: "Healthy"})
		items[i].Status = &k8sruntime.RawExtension{Raw: status(n)}
	}
	target := workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}
	ops := []struct {
		name string
		call func() error
	}{
		{"GetReplicas", func() error {
			_, _, ok, err := in.GetReplicas(ctx, obj)
			if err == nil && !ok {
				err = fmt.Errorf("no replicas")
			}
			return err
		}},
		{"ReviseReplica", func() error {
			_, err := in.ReviseReplica(ctx, obj, []workv1alpha2.TargetCluster{target}, target)
			return err
		}},
		{"AggregateStatus", func() error {
			_, err := in.AggregateStatus(ctx, obj, items)
			return err
		}},
	}
	const calls = 20000
	for _, op := range ops {
		b.Run(op.name, func(b *testing.B) {
			for range 200 { // warm the pool and the compiled script
				if err := op.call(); err != nil {
					b.Fatal(err)
				}
			}
			for range b.N {
				var before, after runtime.MemStats
				runtime.GC()
				runtime.ReadMemStats(&before)
				start := time.Now()
				for range calls {
					if err := op.call(); err != nil {
						b.Fatal(err)
					}
				}
				d := time.Since(start)
				runtime.ReadMemStats(&after)
				b.ReportMetric(calls/d.Seconds(), "calls/s")
				b.ReportMetric(float64(d.Microseconds())/calls, "µs/call")
				b.ReportMetric(float64(after.Mallocs-before.Mallocs)/calls, "allocs/call")
				b.ReportMetric(float64(after.TotalAlloc-before.TotalAlloc)/calls, "B/call")
			}
		})
	}
}

// kruiseCRD is a minimal CloneSet CRD (the schema preserves unknown fields).
const kruiseCRD = `apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: clonesets.apps.kruise.io}
spec:
  group: apps.kruise.io
  names: {kind: CloneSet, plural: clonesets, singular: cloneset, listKind: CloneSetList}
  scope: Namespaced
  versions:
  - name: v1alpha1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
`

var cloneSetGVR = schema.GroupVersionResource{Group: "apps.kruise.io", Version: "v1alpha1", Resource: "clonesets"}

// BenchmarkInterpreterPropagation propagates 100 CloneSets at 1/s, Duplicated to the 3 members
// and interpreted by the bundled Lua customization, and reports their p99 beside 100
// Deployments at 1/s (the built-in interpreter) on the same stack.
func BenchmarkInterpreterPropagation(b *testing.B) {
	h := startHarness(b)
	kubectl := func(kubeconfig, context, yaml string) {
		args := []string{"--kubeconfig", kubeconfig, "apply", "-f", "-"}
		if context != "" {
			args = append(args, "--context", context)
		}
		cmd := exec.Command("kubectl", args...)
		cmd.Stdin = strings.NewReader(yaml)
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("%v: %s", err, out)
		}
	}
	kubectl(filepath.Join(h.dataDir, "karmada.config"), "", kruiseCRD)
	for i := 1; i <= 3; i++ {
		kubectl(filepath.Join(h.dataDir, "members.config"), fmt.Sprintf("member%d", i), kruiseCRD)
	}
	kubectl(filepath.Join(h.dataDir, "karmada.config"), "", `apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: clonesets, namespace: bench}
spec:
  resourceSelectors: [{apiVersion: apps.kruise.io/v1alpha1, kind: CloneSet}]
  placement: {clusterAffinity: {clusterNames: [member1, member2, member3]}}
`)
	for i := 1; i <= 3; i++ {
		m := dynamic.NewForConfigOrDie(restConfig(b, filepath.Join(h.dataDir, "members.config"), fmt.Sprintf("member%d", i)))
		h.waitFor("the CloneSet API in member", time.Minute, func() bool {
			_, err := m.Resource(cloneSetGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
			return err == nil
		})
		idx := i - 1
		f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(m, 0, ns, nil)
		inf := f.ForResource(cloneSetGVR).Informer()
		_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: func(obj any) {
			now := time.Now()
			u := obj.(*unstructured.Unstructured)
			h.mu.Lock()
			if h.arrived[u.GetName()] == nil {
				h.arrived[u.GetName()] = map[int]time.Time{}
			}
			if _, seen := h.arrived[u.GetName()][idx]; !seen {
				h.arrived[u.GetName()][idx] = now
			}
			h.mu.Unlock()
		}})
		stop := make(chan struct{})
		b.Cleanup(func() { close(stop) })
		f.Start(stop)
		f.WaitForCacheSync(stop)
	}
	h.waitFor("the CloneSet API on the control plane", time.Minute, func() bool {
		_, err := h.dyn.Resource(cloneSetGVR).Namespace(ns).List(context.Background(), metav1.ListOptions{})
		return err == nil
	})
	steadyCR := func(prefix string, count int) []time.Duration {
		var names []string
		tick := time.NewTicker(time.Second)
		defer tick.Stop()
		for i := range count {
			<-tick.C
			n := fmt.Sprintf("%s-%04d", prefix, i)
			names = append(names, n)
			h.mu.Lock()
			h.sent[n] = time.Now()
			h.mu.Unlock()
			if _, err := h.dyn.Resource(cloneSetGVR).Namespace(ns).Create(context.Background(), cloneSet(n, int64(replicas)), metav1.CreateOptions{}); err != nil {
				b.Fatalf("create %s: %v", n, err)
			}
		}
		lat, _ := h.latencies(names, 5*time.Minute)
		return lat
	}
	for range b.N {
		h.steady("warm", 20, 10)
		steadyCR("cswarm", 10)
		time.Sleep(5 * time.Second)
		deploys := h.steady("d1", 100, 1)
		h.stopHops()
		crs := steadyCR("cs1", 100)
		b.ReportMetric(float64(pct(deploys, 0.99).Milliseconds()), "deploy-p99-ms")
		b.ReportMetric(float64(pct(crs, 0.99).Milliseconds()), "cloneset-lua-p99-ms")
		fmt.Printf("\n| 100 at 1/s | p50 | p99 |\n|---|---|---|\n| Deployment (built-in) | %d ms | %d ms |\n| CloneSet (bundled Lua) | %d ms | %d ms |\n",
			pct(deploys, 0.5).Milliseconds(), pct(deploys, 0.99).Milliseconds(), pct(crs, 0.5).Milliseconds(), pct(crs, 0.99).Milliseconds())
	}
}
