package scheduling

import (
	"context"
	"fmt"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
)

// A high-priority binding queued behind a backlog of 200 is handed out first.
func TestHighPriorityBindingOvertakesTheBacklog(t *testing.T) {
	q := priorityqueue.New[reconcile.Request]("scheduler-test")
	defer q.ShutDown()
	rb := func(name string, priority int32) *workv1alpha2.ResourceBinding {
		b := &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}}
		if priority != 0 {
			b.Spec.SchedulePriority = &workv1alpha2.SchedulePriority{Priority: priority}
		}
		return b
	}
	for i := range 200 {
		byPriority{}.Create(context.Background(), event.CreateEvent{Object: rb(fmt.Sprintf("low-%d", i), 0)}, q)
	}
	byPriority{}.Create(context.Background(), event.CreateEvent{Object: rb("high", 1000)}, q)
	first, _ := q.Get()
	if first.Name != "high" {
		t.Fatalf("the queue handed out %s first, want the high-priority binding", first.Name)
	}
	second, _ := q.Get()
	if second.Name != "low-0" {
		t.Errorf("then %s, want the backlog in arrival order, low-0 first", second.Name)
	}
}

func TestQueuesFileAttemptsAsKarmadasScheduler(t *testing.T) {
	q := &queues{backoff: map[reconcile.Request]struct{}{}, unschedulable: map[reconcile.Request]struct{}{}}
	req := func(n string) reconcile.Request {
		return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: "ns", Name: n}}
	}

	if res := q.settle(req("failed"), ctrl.Result{}, fmt.Errorf("conflict"), false); !res.IsZero() {
		t.Errorf("an error: result %+v, want none (controller-runtime backs off)", res)
	}
	if res := q.settle(req("nofit"), ctrl.Result{}, nil, true); res.RequeueAfter != MaxInUnschedulable {
		t.Errorf("no placement: requeued after %s, want %s", res.RequeueAfter, MaxInUnschedulable)
	}
	if res := q.settle(req("born"), ctrl.Result{RequeueAfter: time.Second}, nil, true); res.RequeueAfter != time.Second {
		t.Errorf("a sooner requeue was replaced: %s", res.RequeueAfter)
	}
	if res := q.settle(req("fine"), ctrl.Result{}, nil, false); !res.IsZero() {
		t.Errorf("a success: result %+v, want none", res)
	}
	if got, want := q.pending(), (metrics.PendingBindings{Backoff: 1, Unschedulable: 1}); got != want {
		t.Errorf("pending %+v, want %+v", got, want)
	}
	if got := q.unschedulableRequests(); len(got) != 1 || got[0] != req("nofit") {
		t.Errorf("unschedulable requests %v, want nofit only", got)
	}
	q.taken(req("failed"))
	q.taken(req("nofit"))
	if got := q.pending(); got != (metrics.PendingBindings{}) {
		t.Errorf("pending once both are taken again: %+v, want none", got)
	}
	backoff := rateLimiter()
	if d := backoff.When(req("x")); d != InitialBackoff {
		t.Errorf("first back-off %s, want %s", d, InitialBackoff)
	}
	for range 10 {
		backoff.When(req("x"))
	}
	if d := backoff.When(req("x")); d != MaxBackoff {
		t.Errorf("back-off after many failures %s, want at most %s", d, MaxBackoff)
	}
}
