package bench

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	crclient "sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
)

// BenchmarkWriteBody measures the control plane's API server CPU per Work
// write when the body carries the whole Work and when it carries only what
// the API server reads (reconciler.UpdateStatus: identity and status;
// reconciler.UpdateSpec: no status), on BENCH_WRITES Works (default 1,000)
// in a namespace no controller acts on, each holding a Deployment-sized
// manifest (about 2 KiB) and a status of one manifest.
func BenchmarkWriteBody(b *testing.B) {
	h := startHarness(b)
	h.stopHops()
	n := 1000
	if v, err := strconv.Atoi(os.Getenv("BENCH_WRITES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	s := runtime.NewScheme()
	_ = corev1.AddToScheme(s)
	_ = workv1alpha1.AddToScheme(s)
	c, err := crclient.New(restConfig(b, h.kubeconfig, h.context), crclient.Options{Scheme: s})
	if err != nil {
		b.Fatal(err)
	}
	const wns = "write-body"
	if err := c.Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: wns}}); err != nil {
		b.Fatal(err)
	}
	manifest := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"d","namespace":"default","labels":{"app":"d"},"annotations":{"a":"` +
		strings.Repeat("x", 1500) + `"}},"spec":{"replicas":2,"selector":{"matchLabels":{"app":"d"}},"template":{"metadata":{"labels":{"app":"d"}},"spec":{"containers":[{"name":"c","image":"nginx"}]}}}}`
	works := make([]*workv1alpha1.Work, n)
	names := make([]string, n)
	for i := range n {
		names[i] = fmt.Sprintf("w-%05d", i)
	}
	idx := map[string]int{}
	for i, nm := range names {
		idx[nm] = i
	}
	parallel(names, func(nm string) {
		w := &workv1alpha1.Work{ObjectMeta: metav1.ObjectMeta{Name: nm, Namespace: wns, Labels: map[string]string{"l": "1"}},
			Spec: workv1alpha1.WorkSpec{Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: []byte(manifest)}}}}}}
		if err := c.Create(ctx, w); err != nil {
			b.Errorf("create %s: %v", nm, err)
		}
		works[idx[nm]] = w
	})
	round := 0
	measure := func(what string, write func(w *workv1alpha1.Work) error, change func(w *workv1alpha1.Work)) float64 {
		round++
		time.Sleep(3 * time.Second) // the previous round's watch events drained
		before := h.processCPU()
		parallel(names, func(nm string) {
			w := works[idx[nm]]
			change(w)
			if err := write(w); err != nil {
				b.Errorf("%s %s: %v", what, nm, err)
			}
		})
		after := h.processCPU()
		cp := (after["flotilla component control-plane"] - before["flotilla component control-plane"]).Seconds()
		perWrite := cp / float64(n) * 1000
		fmt.Printf("| %s | %.2f ms |\n", what, perWrite)
		return perWrite
	}
	status := func(w *workv1alpha1.Work) {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue,
			Reason: "AppliedSuccessful", Message: fmt.Sprintf("round %d", round)})
		w.Status.ManifestStatuses = []workv1alpha1.ManifestStatus{{Identifier: workv1alpha1.ResourceIdentifier{Group: "apps", Version: "v1", Kind: "Deployment", Resource: "deployments", Namespace: "default", Name: "d"}}}
	}
	label := func(w *workv1alpha1.Work) { w.Labels["l"] = fmt.Sprint(round) }
	fmt.Printf("\nThe control plane's API server CPU per Work write (%d Works, 32 writers):\n\n| write | CPU per write |\n|---|---|\n", n)
	for range b.N {
		full := measure("status update, whole Work", func(w *workv1alpha1.Work) error { return c.Status().Update(ctx, w) }, status)
		lean := measure("status update, identity and status (reconciler.UpdateStatus)", func(w *workv1alpha1.Work) error { return reconciler.UpdateStatus(ctx, c, w) }, status)
		fullSpec := measure("update, whole Work", func(w *workv1alpha1.Work) error { return c.Update(ctx, w) }, label)
		leanSpec := measure("update without status (reconciler.UpdateSpec)", func(w *workv1alpha1.Work) error { return reconciler.UpdateSpec(ctx, c, w) }, label)
		b.ReportMetric(full, "status-full-ms")
		b.ReportMetric(lean, "status-lean-ms")
		b.ReportMetric(fullSpec, "spec-full-ms")
		b.ReportMetric(leanSpec, "spec-lean-ms")
	}
}
