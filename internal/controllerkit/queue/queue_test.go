package queue

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/client/fake"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A priority queue hands out real changes first, then status re-checks,
// then what a first list found, whatever order they were added in.
func TestStatusAndInitialItemsWaitBehindChanges(t *testing.T) {
	q := priorityqueue.New[string]("test")
	defer q.ShutDown()
	AddInitial(q, 0, "listed")
	AddStatus(q, 0, "status")
	q.Add("change")
	var got []string
	for range 3 {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	if want := []string{"change", "status", "listed"}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("order %v, want %v", got, want)
	}
}

func TestNotInitialListDropsOnlyFirstListCreates(t *testing.T) {
	obj := &corev1.ConfigMap{}
	if NotInitialList.Create(event.CreateEvent{Object: obj, IsInInitialList: true}) {
		t.Error("a Create from the first list passed")
	}
	if !NotInitialList.Create(event.CreateEvent{Object: obj}) {
		t.Error("a Create after the first list was dropped")
	}
	if !NotInitialList.Update(event.UpdateEvent{ObjectOld: obj, ObjectNew: obj}) || !NotInitialList.Delete(event.DeleteEvent{Object: obj}) {
		t.Error("an Update or Delete was dropped")
	}
}

// A controller counts as running from its workers' first Get to its queue's
// shutdown.
func TestRunningFromFirstGetToShutDown(t *testing.T) {
	g := NewGroup()
	q := g.newQueue("running-test", RateLimiter[reconcile.Request]())
	q.Add(reconcile.Request{})
	if got := g.Running(); got != 0 {
		t.Fatalf("running before any Get: %d, want 0", got)
	}
	pq := q.(priorityqueue.PriorityQueue[reconcile.Request])
	if _, _, shutdown := pq.GetWithPriority(); shutdown {
		t.Fatal("queue shut down")
	}
	if got := g.Running(); got != 1 {
		t.Errorf("running after the first Get: %d, want 1", got)
	}
	if other := NewGroup(); other.Running() != 0 {
		t.Errorf("another Group counts %d running, want 0: a Group is one manager's", other.Running())
	}
	q.ShutDown()
	if got := g.Running(); got != 0 {
		t.Errorf("running after ShutDown: %d, want 0", got)
	}
}

// While the hold is on, what first lists found waits and real changes do
// not; once every controller runs, the held items come out.
func TestHoldKeepsFirstListsUntilEveryControllerRuns(t *testing.T) {
	g := NewGroup()
	g.HoldFirstListsUntilRunning(2, time.Minute)
	a := g.newQueue("hold-a", RateLimiter[reconcile.Request]()).(*markingQueue)
	b := g.newQueue("hold-b", RateLimiter[reconcile.Request]()).(*markingQueue)
	defer a.ShutDown()
	defer b.ShutDown()
	listed := reconcile.Request{NamespacedName: types.NamespacedName{Name: "listed"}}
	change := reconcile.Request{NamespacedName: types.NamespacedName{Name: "change"}}
	AddInitial(a, 0, listed)
	a.Add(change)
	got := make(chan reconcile.Request, 2)
	go func() {
		for {
			item, shutdown := a.Get()
			if shutdown {
				return
			}
			got <- item
			a.Done(item)
		}
	}()
	if item := <-got; item != change {
		t.Fatalf("first item %v, want the change", item)
	}
	select {
	case item := <-got:
		t.Fatalf("%v handed out while a controller had not started", item)
	case <-time.After(200 * time.Millisecond):
	}
	select {
	case <-g.FirstListsReleased():
		t.Fatal("released before every controller runs")
	default:
	}
	go b.Get() // the second controller's workers start
	select {
	case item := <-got:
		if item != listed {
			t.Fatalf("got %v, want the held item", item)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the held item did not come out once every controller ran")
	}
	<-g.FirstListsReleased()
}

// Should a controller never start, the hold ends after its bound.
func TestHoldEndsAfterItsBound(t *testing.T) {
	g := NewGroup()
	g.HoldFirstListsUntilRunning(2, 100*time.Millisecond)
	a := g.newQueue("hold-bound", RateLimiter[reconcile.Request]())
	defer a.ShutDown()
	listed := reconcile.Request{NamespacedName: types.NamespacedName{Name: "listed"}}
	AddInitial(a, 0, listed)
	done := make(chan reconcile.Request)
	go func() { item, _ := a.Get(); done <- item }()
	select {
	case item := <-done:
		if item != listed {
			t.Fatalf("got %v", item)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the hold did not end after its bound")
	}
}

// A second hold first hands back what the one before it kept: nothing held
// is lost.
func TestHoldCalledAgainLosesNothing(t *testing.T) {
	g := NewGroup()
	g.HoldFirstListsUntilRunning(5, time.Minute)
	a := g.newQueue("hold-again", RateLimiter[reconcile.Request]())
	defer a.ShutDown()
	listed := reconcile.Request{NamespacedName: types.NamespacedName{Name: "listed"}}
	AddInitial(a, 0, listed)
	done := make(chan reconcile.Request, 1)
	go func() { item, _ := a.Get(); done <- item }()
	select {
	case item := <-done:
		t.Fatalf("%v handed out during the first hold", item)
	case <-time.After(200 * time.Millisecond):
	}
	g.HoldFirstListsUntilRunning(2, time.Minute)
	b := g.newQueue("hold-again-b", RateLimiter[reconcile.Request]())
	defer b.ShutDown()
	go b.Get() // enough controllers run for the second hold
	select {
	case item := <-done:
		if item != listed {
			t.Fatalf("got %v, want the item the first hold kept", item)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the item the first hold kept was lost")
	}
}

func TestAll(t *testing.T) {
	c := fake.NewClientBuilder().WithObjects(
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "a"}},
		&corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: "b"}}).Build()
	got := All(c, func() client.ObjectList { return &corev1.NamespaceList{} })(context.Background(), nil)
	if len(got) != 2 || got[0].Name != "a" || got[1].Name != "b" {
		t.Errorf("All = %v, want requests for namespaces a and b", got)
	}
}
