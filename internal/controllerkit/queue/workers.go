package queue

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// newQueue is controller-runtime's default queue (a priority queue with the controller's rate
// limiter) that marks the controller running in g when a worker first asks it for an item: a
// controller's workers do so as soon as they start, which is after every watch of the
// controller has replayed its informer's first list. It marks the controller stopped when it
// shuts down.
func (g *Group) newQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return &markingQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.RateLimiter = limiter
			o.Log = ctrllog.Log.WithValues("controller", name)
		}),
		name:  name,
		group: g,
	}
}

// markingQueue is a priority queue whose first Get marks its controller running and whose
// ShutDown marks it stopped.
type markingQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	name  string
	group *Group
	once  sync.Once
	// held are the first lists' items kept back (see Group); guarded by group.mu.
	held map[reconcile.Request]struct{}
}

func (q *markingQueue) mark() {
	q.once.Do(func() { q.group.started(q.name) })
}

// GetWithPriority is what controller-runtime's workers call. While the hold is on, items of
// the first lists are set aside instead of handed out.
func (q *markingQueue) GetWithPriority() (reconcile.Request, int, bool) {
	q.mark()
	for {
		item, priority, shutdown := q.PriorityQueue.GetWithPriority()
		if shutdown || priority > handler.LowPriority || !q.keep(item) {
			return item, priority, shutdown
		}
		q.PriorityQueue.Done(item)
	}
}

func (q *markingQueue) Get() (reconcile.Request, bool) {
	item, _, shutdown := q.GetWithPriority()
	return item, shutdown
}

func (q *markingQueue) ShutDown() {
	q.group.stopped(q.name)
	q.PriorityQueue.ShutDown()
}

func (q *markingQueue) ShutDownWithDrain() {
	q.group.stopped(q.name)
	q.PriorityQueue.ShutDownWithDrain()
}
