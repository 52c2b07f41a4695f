package cluster

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/test/fakeevents"
)

// Karmada's CreateExecutionSpaceSucceed is raised when the namespace is
// created, not when it is found; TaintClusterSucceed on each change of the
// condition taints, naming them, and nothing while they stay.
func TestExecutionSpaceAndTaintEvents(t *testing.T) {
	s := runtime.NewScheme()
	_ = clientgoscheme.AddToScheme(s)
	_ = clusterv1alpha1.AddToScheme(s)
	cl := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1", UID: types.UID("m1-uid")}}
	c := fake.NewClientBuilder().WithScheme(s).WithObjects(cl).Build()
	fakeEvents := record.NewFakeRecorder(10)
	r := &Reconciler{Client: c, Events: &eventrecord.Recorder{Events: fakeEvents}}
	ctx := context.Background()
	for range 2 {
		if err := r.ensureExecutionSpace(ctx, cl, "karmada-es-m1"); err != nil {
			t.Fatal(err)
		}
	}
	status := func(ready metav1.ConditionStatus) *clusterv1alpha1.ClusterStatus {
		return &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: ready}}}
	}
	for _, ready := range []metav1.ConditionStatus{metav1.ConditionFalse, metav1.ConditionFalse, metav1.ConditionTrue} {
		if err := c.Get(ctx, types.NamespacedName{Name: "m1"}, cl); err != nil {
			t.Fatal(err)
		}
		if err := r.taint(ctx, cl, status(ready)); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{
		"Normal CreateExecutionSpaceSucceed Execution namespace karmada-es-m1 of cluster m1 is created.",
		"Normal TaintClusterSucceed Taints of cluster m1 follow its Ready condition (False); they are now: cluster.karmada.io/not-ready:NoSchedule.",
		"Normal TaintClusterSucceed Taints of cluster m1 follow its Ready condition (True); they are now: none.",
	}
	if diff := cmp.Diff(want, fakeevents.Drain(fakeEvents)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if err := c.Get(ctx, types.NamespacedName{Name: "karmada-es-m1"}, &corev1.Namespace{}); err != nil {
		t.Errorf("the execution namespace: %v", err)
	}
}
