package integration

import (
	"context"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/controller/member/cluster"
)

// eventOn is what an awaited event must be: on the object of kind and name
// in namespace ns (events of cluster-scoped objects are in "default"), of
// reason, from source, its message containing every one of parts.
type eventOn struct {
	ns, kind, name, reason, source string
	parts                          []string
}

// find lists the events of ns in c and reports whether one is as want
// says, with the ones of its object and reason that were seen otherwise.
func (want eventOn) find(ctx context.Context, c client.Client) (bool, string) {
	list := &corev1.EventList{}
	if err := c.List(ctx, list, client.InNamespace(want.ns)); err != nil {
		return false, err.Error()
	}
	var seen []string
	for i := range list.Items {
		ev := &list.Items[i]
		if ev.InvolvedObject.Kind != want.kind || ev.InvolvedObject.Name != want.name || ev.Reason != want.reason {
			continue
		}
		seen = append(seen, ev.Source.Component+" "+ev.Type+": "+ev.Message)
		all := ev.Source.Component == want.source
		for _, p := range want.parts {
			all = all && strings.Contains(ev.Message, p)
		}
		if all {
			return true, ""
		}
	}
	return false, describe(seen)
}

// waitEventOn waits for an event as want says.
func (e *env) waitEventOn(want eventOn) {
	e.Helper()
	e.eventually(want.reason+" on "+want.kind+" "+want.ns+"/"+want.name, func() (bool, string) {
		return want.find(e.ctx, e.controlPlane)
	})
}

// pollEvent waits, without controllers of the test's own, for an event as
// want says, failing t after waitTimeout.
func pollEvent(t *testing.T, want eventOn) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for {
		ok, seen := want.find(t.Context(), theStack.controlPlane)
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s on Cluster %s; seen: %s", waitTimeout, want.reason, want.name, seen)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestClusterExecutionSpaceEvents checks the events the stack's cluster
// controller raises over a Cluster's life (Karmada's cluster controller):
// its execution namespace created, the not-ready taint of a member that
// cannot be reached, and the namespace removed once the Cluster is deleted.
// The Cluster is one of its own, reachable by nobody, so it runs outside
// TestControllers: no case there sees a third cluster.
func TestClusterExecutionSpaceEvents(t *testing.T) {
	if theStack == nil {
		t.Skip("integration: skipped with -short")
	}
	c := theStack.controlPlane
	ghost := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "unreachable"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, APIEndpoint: "https://127.0.0.1:1"}}
	if err := c.Create(t.Context(), ghost); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := c.Delete(context.Background(), ghost); client.IgnoreNotFound(err) != nil {
			t.Errorf("delete Cluster %s: %v", ghost.Name, err)
		}
	})
	on := func(reason string, parts ...string) eventOn {
		return eventOn{ns: metav1.NamespaceDefault, kind: "Cluster", name: ghost.Name, reason: reason, source: cluster.ControllerName, parts: parts}
	}
	es := clusterv1alpha1.ExecutionNamespace(ghost.Name)
	pollEvent(t, on(events.CreateExecutionSpaceSucceed, es))
	pollEvent(t, on(events.TaintClusterSucceed, clusterv1alpha1.TaintClusterNotReady+":NoSchedule"))
	if err := c.Delete(t.Context(), ghost); err != nil {
		t.Fatal(err)
	}
	pollEvent(t, on(events.RemoveExecutionSpaceSucceed, es))
	deadline := time.Now().Add(waitTimeout)
	for {
		err := c.Get(t.Context(), client.ObjectKeyFromObject(ghost), &clusterv1alpha1.Cluster{})
		if apierrors.IsNotFound(err) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("Cluster %s not gone after %s: %v", ghost.Name, waitTimeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
