package scheduling

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/util/workqueue"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// Karmada's scheduling queue timings (its scheduler's defaults, not flags).
const (
	// InitialBackoff and MaxBackoff bound the wait before a binding whose attempt failed
	// with an error (the API server's, not the placement's) is tried again.
	InitialBackoff = time.Second
	MaxBackoff     = 10 * time.Second
	// MaxInUnschedulable is the longest a binding that found no placement waits before it
	// is tried again; a change of the binding or of a cluster tries it at once.
	MaxInUnschedulable = 5 * time.Minute
)

// queues keeps Karmada's three scheduling queues for one Reconciler on top of
// controller-runtime's priority queue: active is what the queue has ready, ordered by
// priority, then arrival; backoff holds the bindings whose last attempt returned an error,
// requeued by the rate limiter after InitialBackoff to MaxBackoff; unschedulable holds the
// bindings whose last attempt found no placement, requeued after MaxInUnschedulable unless
// an event queues them sooner. It reports them in scheduler_pending_bindings. Safe for
// concurrent use.
type queues struct {
	// active is the controller's queue, captured when the controller starts (source).
	active        queue.Feed
	mu            sync.Mutex
	backoff       map[reconcile.Request]struct{}
	unschedulable map[reconcile.Request]struct{}
}

// newQueues returns the queues of a scheduler that mgr runs; they are counted in
// scheduler_pending_bindings while mgr runs.
func newQueues(mgr ctrl.Manager) (*queues, error) {
	q := &queues{backoff: map[reconcile.Request]struct{}{}, unschedulable: map[reconcile.Request]struct{}{}}
	return q, mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		remove := metrics.AddPendingBindingsSource(q.pending)
		<-ctx.Done()
		remove()
		return nil
	}))
}

// source captures the controller's queue when the controller starts, for the active count.
func (q *queues) source() source.Source { return q.active.Source() }

// rateLimiter is the backoff queue's: per binding, InitialBackoff doubling up to MaxBackoff.
func rateLimiter() workqueue.TypedRateLimiter[reconcile.Request] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[reconcile.Request](InitialBackoff, MaxBackoff)
}

// taken records that req left whichever queue held it: it is being scheduled.
func (q *queues) taken(req reconcile.Request) {
	q.mu.Lock()
	defer q.mu.Unlock()
	delete(q.backoff, req)
	delete(q.unschedulable, req)
}

// settle files req after an attempt that returned res and err, where unschedulable says the
// attempt found no placement, and returns the result for controller-runtime: an error goes
// to backoff (controller-runtime requeues it rate-limited); no placement, with nothing
// requeued sooner, goes to unschedulable, requeued after MaxInUnschedulable.
func (q *queues) settle(req reconcile.Request, res ctrl.Result, err error, unschedulable bool) ctrl.Result {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case err != nil:
		q.backoff[req] = struct{}{}
	case unschedulable && res.RequeueAfter == 0:
		q.unschedulable[req] = struct{}{}
		res.RequeueAfter = MaxInUnschedulable
	}
	return res
}

// pending reports the three queues' lengths.
func (q *queues) pending() metrics.PendingBindings {
	q.mu.Lock()
	defer q.mu.Unlock()
	return metrics.PendingBindings{Active: q.active.Len(), Backoff: len(q.backoff), Unschedulable: len(q.unschedulable)}
}

// unschedulableRequests are the bindings in the unschedulable queue now.
func (q *queues) unschedulableRequests() []reconcile.Request {
	q.mu.Lock()
	defer q.mu.Unlock()
	out := make([]reconcile.Request, 0, len(q.unschedulable))
	for req := range q.unschedulable {
		out = append(out, req)
	}
	return out
}
