// Package queue holds the work-queue settings every Flotilla controller
// shares: how many items it reconciles at once and how it backs off.
package queue

import (
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
)

// Back-off bounds of a failing item: the first retry after BaseDelay,
// doubling up to MaxDelay (Karmada's --rate-limiter-base-delay is also 5 ms).
const (
	BaseDelay = 5 * time.Millisecond
	MaxDelay  = 30 * time.Second
)

// ConflictRetry is how soon a write that lost an optimistic-lock race (a
// Conflict) is tried again, on a fresh read: at once, in effect, since the
// cache has usually caught up by then.
const ConflictRetry = 5 * time.Millisecond

// RateLimiter is the retry back-off of one queue: per item, exponential
// from BaseDelay to MaxDelay. Unlike controller-runtime's and Karmada's
// default there is no queue-wide token bucket (10 retries/s, burst 100):
// with it, a burst of optimistic-lock conflicts on a thousand bindings
// drains at 10 per second, and status lags by minutes. A hot loop on one
// item is still slowed by its own back-off.
func RateLimiter[T comparable]() workqueue.TypedRateLimiter[T] {
	return workqueue.NewTypedItemExponentialFailureRateLimiter[T](BaseDelay, MaxDelay)
}

// StatusPriority is the priority of a re-check that only reports status
// (a member object changed): below a real change, such as a new Work to
// apply, so that under a sustained burst applying comes first; above what a
// first list finds (handler.LowPriority).
const StatusPriority = handler.LowPriority / 2

// AddStatus adds item to q after the delay at StatusPriority when q is a
// priority queue; other queues get a plain AddAfter.
func AddStatus[T comparable](q workqueue.TypedRateLimitingInterface[T], after time.Duration, item T) {
	addAt(q, StatusPriority, after, item)
}

// AddInitial adds item to q after the delay, at controller-runtime's low
// priority (handler.LowPriority) when q is a priority queue (the default for
// controller-runtime controllers): for events that only report what already
// existed when an informer started, so that after a restart real changes,
// such as a new template, are not queued behind re-checking everything that
// is already right. Other queues get a plain AddAfter.
func AddInitial[T comparable](q workqueue.TypedRateLimitingInterface[T], after time.Duration, item T) {
	addAt(q, handler.LowPriority, after, item)
}

// addAt adds item to q after the delay at priority when q is a priority
// queue, else with a plain AddAfter.
func addAt[T comparable](q workqueue.TypedRateLimitingInterface[T], priority int, after time.Duration, item T) {
	if pq, ok := q.(priorityqueue.PriorityQueue[T]); ok {
		pq.AddWithOpts(priorityqueue.AddOpts{After: after, Priority: ptr.To(priority)}, item)
		return
	}
	q.AddAfter(item, after)
}

// NotInitialList drops the Create events of an informer's first list
// (event.CreateEvent.IsInInitialList) and passes every other event. For a
// watch whose Create fans out to many items, such as a Cluster queueing
// every binding: after a restart, what the first list finds already
// existed, and each item is queued by its own first list anyway. A Cluster
// created later still fans out.
var NotInitialList = predicate.Funcs{CreateFunc: func(e event.CreateEvent) bool { return !e.IsInInitialList }}
