package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
)

// presence tracks which Deployments of one namespace a cluster has, and
// which of them carry Flotilla's work annotation (adopted).
type presence struct {
	mu      sync.Mutex
	has     map[string]bool
	adopted map[string]bool
	tmpl    map[string]string // the pod template when first seen
	changed map[string]bool   // the pod template changed since first seen
}

func watchPresence(b *testing.B, c kubernetes.Interface, namespace string) *presence {
	p := &presence{has: map[string]bool{}, adopted: map[string]bool{}, tmpl: map[string]string{}, changed: map[string]bool{}}
	f := informers.NewSharedInformerFactoryWithOptions(c, 0, informers.WithNamespace(namespace))
	inf := f.Apps().V1().Deployments().Informer()
	set := func(obj any) {
		d, ok := obj.(*appsv1.Deployment)
		if !ok {
			return
		}
		p.mu.Lock()
		defer p.mu.Unlock()
		p.has[d.Name] = true
		p.adopted[d.Name] = d.Annotations["work.karmada.io/name"] != ""
		// A Deployment's generation also moves when only its annotations
		// change (Kubernetes' deployment strategy), which adoption does;
		// pods are replaced only when the pod template changes.
		t, _ := json.Marshal(d.Spec.Template)
		if old, seen := p.tmpl[d.Name]; !seen {
			p.tmpl[d.Name] = string(t)
		} else if old != string(t) {
			p.changed[d.Name] = true
		}
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc: set, UpdateFunc: func(_, n any) { set(n) },
		DeleteFunc: func(obj any) {
			if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = t.Obj
			}
			if d, ok := obj.(*appsv1.Deployment); ok {
				p.mu.Lock()
				delete(p.has, d.Name)
				p.mu.Unlock()
			}
		},
	})
	stop := make(chan struct{})
	b.Cleanup(func() { close(stop) })
	f.Start(stop)
	f.WaitForCacheSync(stop)
	return p
}

func (p *presence) counts() (present, adopted, changed int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for n := range p.has {
		if p.adopted[n] {
			adopted++
		}
	}
	return len(p.has), adopted, len(p.changed)
}

func (h *harness) kubectlApply(yaml string) {
	cmd := exec.Command("kubectl", "--kubeconfig", filepath.Join(h.dataDir, "karmada.config"), "apply", "--server-side", "-f", "-")
	cmd.Stdin = strings.NewReader(yaml)
	if out, err := cmd.CombinedOutput(); err != nil {
		h.b.Fatalf("kubectl apply: %v\n%s", err, out)
	}
}

func inNamespace(d *appsv1.Deployment, namespace string) *appsv1.Deployment {
	d.Namespace = namespace
	return d
}

// BenchmarkPreemption: 1,000 Deployments claimed by a
// ClusterPropagationPolicy on member1; one PropagationPolicy naming all
// 1,000 (priority 10, preemption: Always) places them on member2. Reports
// the time until all 1,000 are on member2 and gone from member1, and the
// controller manager's CPU meanwhile.
func BenchmarkPreemption(b *testing.B) {
	h := startHarness(b, "--feature-gates=PropagationPolicyPreemption=true")
	h.stopHops()
	const storm = "storm"
	n := 1000
	ctx := context.Background()
	for range b.N {
		if _, err := h.cp.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: storm}}, metav1.CreateOptions{}); err != nil {
			b.Fatal(err)
		}
		h.kubectlApply(`apiVersion: policy.karmada.io/v1alpha1
kind: ClusterPropagationPolicy
metadata: {name: storm-base}
spec:
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: storm}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
		m1, m2 := watchPresence(b, h.members[0], storm), watchPresence(b, h.members[1], storm)
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("web-%04d", i))
		}
		parallel(names, func(name string) {
			if _, err := h.cp.AppsV1().Deployments(storm).Create(ctx, inNamespace(deployment(name), storm), metav1.CreateOptions{}); err != nil {
				b.Errorf("create %s: %v", name, err)
			}
		})
		h.waitFor("1,000 Deployments in member1", 10*time.Minute, func() bool { c, _, _ := m1.counts(); return c == n })
		time.Sleep(35 * time.Second) // let the status reports of the setup go out (statusgate.StatusMaxDefer)

		var sel strings.Builder
		for _, name := range names {
			fmt.Fprintf(&sel, "  - {apiVersion: apps/v1, kind: Deployment, name: %s}\n", name)
		}
		cpu0 := h.controllerManagerCPU()
		start := time.Now()
		h.kubectlApply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: storm-pp, namespace: storm}
spec:
  priority: 10
  preemption: Always
  placement: {clusterAffinity: {clusterNames: [member2]}}
  resourceSelectors:
` + sel.String())
		h.waitFor("every Deployment moved to member2", 10*time.Minute, func() bool {
			a, _, _ := m1.counts()
			c, _, _ := m2.counts()
			return a == 0 && c == n
		})
		took := time.Since(start)
		cpu := h.controllerManagerCPU() - cpu0
		b.ReportMetric(took.Seconds(), "preemption-storm-s")
		fmt.Printf("\npreemption storm: %d Deployments from a ClusterPropagationPolicy on member1 to a preempting PropagationPolicy on member2 in %.1fs; controller-manager %.1f CPU-s meanwhile (%.0f%% of a core)\n",
			n, took.Seconds(), cpu, 100*cpu/took.Seconds())
	}
}

// BenchmarkBatchMigration: 1,000 Deployments already run in member1; the
// same YAML is applied to the control plane, and a PropagationPolicy with
// conflictResolution Overwrite places them on member1. Reports the time
// until every member copy is adopted, and how many member Deployments had
// their pod template changed (which would mean a new ReplicaSet and
// replaced pods).
func BenchmarkBatchMigration(b *testing.B) {
	h := startHarness(b)
	h.stopHops()
	const mig = "migrate"
	n := 1000
	ctx := context.Background()
	for range b.N {
		for _, c := range []kubernetes.Interface{h.cp, h.members[0]} {
			if _, err := c.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: mig}}, metav1.CreateOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		m1 := watchPresence(b, h.members[0], mig)
		var names []string
		for i := range n {
			names = append(names, fmt.Sprintf("app-%04d", i))
		}
		parallel(names, func(name string) {
			if _, err := h.members[0].AppsV1().Deployments(mig).Create(ctx, inNamespace(deployment(name), mig), metav1.CreateOptions{}); err != nil {
				b.Errorf("create %s in member1: %v", name, err)
			}
		})
		h.waitFor("1,000 Deployments running in member1", 10*time.Minute, func() bool { c, _, _ := m1.counts(); return c == n })
		parallel(names, func(name string) {
			if _, err := h.cp.AppsV1().Deployments(mig).Create(ctx, inNamespace(deployment(name), mig), metav1.CreateOptions{}); err != nil {
				b.Errorf("create %s: %v", name, err)
			}
		})
		cpu0 := h.controllerManagerCPU()
		start := time.Now()
		h.kubectlApply(`apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: take-over, namespace: migrate}
spec:
  conflictResolution: Overwrite
  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, namespace: migrate}]
  placement: {clusterAffinity: {clusterNames: [member1]}}
`)
		h.waitFor("every Deployment adopted", 10*time.Minute, func() bool { _, a, _ := m1.counts(); return a == n })
		took := time.Since(start)
		cpu := h.controllerManagerCPU() - cpu0
		_, _, changed := m1.counts()
		b.ReportMetric(took.Seconds(), "migration-s")
		b.ReportMetric(float64(changed), "pod-templates-changed")
		fmt.Printf("\nbatch migration: %d Deployments already in member1 adopted with Overwrite in %.1fs; %d had their pod template changed (pods replaced); controller-manager %.1f CPU-s meanwhile\n",
			n, took.Seconds(), changed, cpu)
	}
}
