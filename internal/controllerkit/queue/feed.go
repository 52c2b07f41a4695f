package queue

import (
	"context"
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"
)

// Feed lets events that controller-runtime does not watch (a member
// cluster's informers, the detector's template events) add requests to a
// controller's queue. Register Source with the controller
// (WatchesRawSource); Add does nothing until the controller has started,
// whose first list of its own watches covers that time.
type Feed struct {
	mu    sync.Mutex
	queue workqueue.TypedRateLimitingInterface[reconcile.Request]
}

// Source captures the controller's queue when the controller starts.
func (f *Feed) Source() source.Source {
	return source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[reconcile.Request]) error {
		f.mu.Lock()
		f.queue = q
		f.mu.Unlock()
		return nil
	})
}

// Add queues req, once the controller has started.
func (f *Feed) Add(req reconcile.Request) {
	f.mu.Lock()
	q := f.queue
	f.mu.Unlock()
	if q != nil {
		q.Add(req)
	}
}

// Len is how many requests the controller's queue has ready now; 0 until the controller
// has started.
func (f *Feed) Len() int {
	f.mu.Lock()
	q := f.queue
	f.mu.Unlock()
	if q == nil {
		return 0
	}
	return q.Len()
}
