package bench

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/ptr"
)

var (
	rbGVR      = schema.GroupVersionResource{Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"}
	clusterGVR = schema.GroupVersionResource{Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"}
)

// notReadyEvicts is a ClusterTaintPolicy tainting a cluster NoExecute
// while it is not Ready, as the failover guide sets it up.
const notReadyEvicts = `apiVersion: policy.karmada.io/v1alpha1
kind: ClusterTaintPolicy
metadata: {name: not-ready-evicts}
spec:
  addOnConditions: [{conditionType: Ready, operator: In, statusValues: ["False", "Unknown"]}]
  removeOnConditions: [{conditionType: Ready, operator: In, statusValues: ["True"]}]
  taints: [{key: cluster.karmada.io/not-ready, effect: NoExecute}]
`

// BenchmarkFailover divides BENCH_FAILOVER (default 1,000) Deployments of 2 replicas 1:1
// between member1 and member2 with Failover on (the taint manager evicting on NoExecute, a
// ClusterTaintPolicy turning NotReady into NoExecute), stops member1's API server, and reports
// the time from the failure to member1 being NotReady, to the NoExecute taint, to every
// binding rescheduled off member1, and to every member2 copy running both replicas (with pods
// on kwok nodes, to every replica ready). Evictions are not paced
// (--resource-eviction-rate=0 would stop them; a rate far above the
// controllers' own pace leaves them unpaced), so the figure is the
// controllers' speed, comparable with earlier reports; Karmada's default
// pace of 0.5 a second would take over half an hour for 1,000 bindings.
func BenchmarkFailover(b *testing.B) {
	count := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_FAILOVER")); err == nil {
		count = v
	}
	h := startHarness(b, "--feature-gates=Failover=true", "--controller-manager-arg=--enable-no-execute-taint-eviction=true",
		"--controller-manager-arg=--resource-eviction-rate=100000")
	const fns = "failover"
	h.applyIn("", `apiVersion: v1
kind: Namespace
metadata: {name: failover}
---
`+notReadyEvicts+`---
apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: halves, namespace: failover}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment}]
  placement:
    clusterAffinity: {clusterNames: [member1, member2]}
    replicaScheduling:
      replicaSchedulingType: Divided
      replicaDivisionPreference: Weighted
      weightPreference:
        staticWeightList:
        - {targetCluster: {clusterNames: [member1]}, weight: 1}
        - {targetCluster: {clusterNames: [member2]}, weight: 1}
`)
	ctx := context.Background()
	for range b.N {
		h.createDeployments(fns, "fo", count, func(d *appsv1.Deployment) { d.Spec.Replicas = ptr.To[int32](2) })
		// Watches, not lists: listing 1,000 bindings every 100 ms would load
		// the control plane the bench measures.
		bindings := h.watchObjects(restConfig(b, h.kubeconfig, h.context), rbGVR, fns)
		placed := func(want string) int {
			return bindings(func(rb *unstructured.Unstructured) bool {
				clusters, _, _ := unstructured.NestedSlice(rb.Object, "spec", "clusters")
				var parts []string
				for _, c := range clusters {
					m := c.(map[string]any)
					parts = append(parts, fmt.Sprintf("%s=%v", m["name"], m["replicas"]))
				}
				return strings.Join(parts, " ") == want
			})
		}
		h.waitFor("every binding on member1 and member2", 10*time.Minute, func() bool { return placed("member1=1 member2=1") == count })
		member2 := h.watchObjects(restConfig(b, filepath.Join(h.dataDir, "members.config"), "member2"),
			schema.GroupVersionResource{Group: "apps", Version: "v1", Resource: "deployments"}, fns)
		onMember2 := func(replicas int64, ready bool) int {
			return member2(func(d *unstructured.Unstructured) bool {
				spec, _, _ := unstructured.NestedInt64(d.Object, "spec", "replicas")
				readyReplicas, _, _ := unstructured.NestedInt64(d.Object, "status", "readyReplicas")
				return spec == replicas && (!ready || bare || readyReplicas == replicas)
			})
		}
		h.waitFor("every copy in member2", 10*time.Minute, func() bool { return onMember2(1, true) == count })
		time.Sleep(10 * time.Second) // status reports settle

		proc := h.procOf("--etcd-name=member1")
		if proc == "" {
			b.Fatal("no member1 API server")
		}
		pid, _ := strconv.Atoi(filepath.Base(proc))
		if err := syscall.Kill(pid, syscall.SIGSTOP); err != nil {
			b.Fatal(err)
		}
		stopped := true
		defer func() {
			if stopped {
				_ = syscall.Kill(pid, syscall.SIGCONT)
			}
		}()
		failed := time.Now()
		cluster := func() *unstructured.Unstructured {
			c, err := h.dyn.Resource(clusterGVR).Get(ctx, "member1", metav1.GetOptions{})
			if err != nil {
				return nil
			}
			return c
		}
		h.waitFor("member1 NotReady", 5*time.Minute, func() bool {
			c := cluster()
			if c == nil {
				return false
			}
			var conds []metav1.Condition
			raw, _, _ := unstructured.NestedSlice(c.Object, "status", "conditions")
			for _, r := range raw {
				m := r.(map[string]any)
				conds = append(conds, metav1.Condition{Type: fmt.Sprint(m["type"]), Status: metav1.ConditionStatus(fmt.Sprint(m["status"]))})
			}
			return !meta.IsStatusConditionTrue(conds, "Ready")
		})
		notReady := time.Since(failed)
		h.waitFor("the NoExecute taint", time.Minute, func() bool {
			c := cluster()
			if c == nil {
				return false
			}
			taints, _, _ := unstructured.NestedSlice(c.Object, "spec", "taints")
			for _, t := range taints {
				if m := t.(map[string]any); m["effect"] == string(corev1.TaintEffectNoExecute) {
					return true
				}
			}
			return false
		})
		tainted := time.Since(failed)
		before, err := requestCounts(h.cp, true)
		if err != nil {
			b.Logf("control-plane request counts before the window: %v (the requests below are totals)", err)
		}
		cpuBefore := h.processCPU()
		h.profileWindow("failover", 8)
		// How many bindings were off member1 at each second after the
		// taint: a slow start and a slow tail look different.
		var progress []string
		next := time.Now().Add(time.Second)
		h.waitFor("every binding off member1", 10*time.Minute, func() bool {
			n := placed("member2=2")
			if time.Now().After(next) {
				progress = append(progress, strconv.Itoa(n))
				next = next.Add(time.Second)
			}
			return n == count
		})
		rescheduled := time.Since(failed)
		cpuAfter := h.processCPU()
		after, err := requestCounts(h.cp, true)
		if err != nil {
			b.Logf("control-plane request counts after the window: %v", err)
		}
		_, requests := diffWrites(before, after)
		b.Logf("bindings off member1 at each second after the taint: %s", strings.Join(progress, " "))
		b.Logf("control-plane requests from the taint to the last binding (reads start with their verb): %s", strings.Join(requests, ", "))
		b.Logf("CPU used from the taint to the last binding: %s", cpuDiff(cpuBefore, cpuAfter))
		h.waitFor("every copy in member2 at 2 replicas", 10*time.Minute, func() bool { return onMember2(2, false) == count })
		copies := time.Since(failed)
		h.waitFor("every replica ready in member2", 10*time.Minute, func() bool { return onMember2(2, true) == count })
		ready := time.Since(failed)
		_ = syscall.Kill(pid, syscall.SIGCONT)
		stopped = false

		b.ReportMetric(notReady.Seconds(), "notready-s")
		b.ReportMetric((rescheduled - tainted).Seconds(), "rescheduled-after-taint-s")
		fmt.Printf("\n| %d Deployments, member1 fails | seconds after the failure |\n|---|---|\n", count)
		fmt.Printf("| member1 NotReady | %.1f |\n| NoExecute taint (ClusterTaintPolicy) | %.1f |\n| every binding rescheduled | %.1f (%.1f after the taint) |\n| every member2 copy at 2 replicas | %.1f |\n| every replica ready elsewhere | %.1f |\n",
			notReady.Seconds(), tainted.Seconds(), rescheduled.Seconds(), (rescheduled - tainted).Seconds(), copies.Seconds(), ready.Seconds())
	}
}

// watchObjects keeps the objects of gvr in namespace from a watch, until the
// bench ends, and returns a function counting those that match.
func (h *harness) watchObjects(cfg *rest.Config, gvr schema.GroupVersionResource, namespace string) func(match func(*unstructured.Unstructured) bool) int {
	var mu sync.Mutex
	objs := map[string]*unstructured.Unstructured{}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dynamic.NewForConfigOrDie(cfg), 0, namespace, nil)
	inf := f.ForResource(gvr).Informer()
	set := func(obj any) {
		if u, ok := obj.(*unstructured.Unstructured); ok {
			mu.Lock()
			objs[u.GetName()] = u
			mu.Unlock()
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    set,
		UpdateFunc: func(_, n any) { set(n) },
		DeleteFunc: func(obj any) {
			if u, ok := obj.(*unstructured.Unstructured); ok {
				mu.Lock()
				delete(objs, u.GetName())
				mu.Unlock()
			}
		},
	})
	stop := make(chan struct{})
	h.b.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
	return func(match func(*unstructured.Unstructured) bool) int {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, o := range objs {
			if match(o) {
				n++
			}
		}
		return n
	}
}
