package queue

import (
	"sync"

	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	ctrllog "sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// running holds, process-wide, the names of the controllers built with
// Options whose workers are running: a controller's workers ask its queue
// for their first item as soon as they start, which is after every watch
// of the controller has replayed its informer's first list. The name leaves
// when the queue shuts down (the controller stopped). controller-runtime
// keeps controller names unique in a process, so the name is the key.
var running = struct {
	sync.Mutex
	names map[string]bool
}{names: map[string]bool{}}

// RunningControllers returns how many controllers built with Options have
// started their workers and not stopped since.
func RunningControllers() int {
	running.Lock()
	defer running.Unlock()
	return len(running.names)
}

// newQueue is controller-runtime's default queue (a priority queue with
// the controller's rate limiter) that marks the controller running when a
// worker first asks it for an item.
func newQueue(name string, limiter workqueue.TypedRateLimiter[reconcile.Request]) workqueue.TypedRateLimitingInterface[reconcile.Request] {
	return &markingQueue{
		PriorityQueue: priorityqueue.New(name, func(o *priorityqueue.Opts[reconcile.Request]) {
			o.RateLimiter = limiter
			o.Log = ctrllog.Log.WithValues("controller", name)
		}),
		name: name,
	}
}

// markingQueue is a priority queue whose first Get marks its controller
// running and whose ShutDown marks it stopped.
type markingQueue struct {
	priorityqueue.PriorityQueue[reconcile.Request]
	name string
	once sync.Once
	// held are the first lists' items kept back (see hold.go); guarded by
	// hold's lock.
	held map[reconcile.Request]struct{}
}

func (q *markingQueue) mark() {
	q.once.Do(func() {
		running.Lock()
		running.names[q.name] = true
		n := len(running.names)
		running.Unlock()
		started(n)
	})
}

// GetWithPriority is what controller-runtime's workers call. While the
// hold is on, items of the first lists are set aside instead of handed out.
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

// unmark marks the controller stopped.
func (q *markingQueue) unmark() {
	running.Lock()
	delete(running.names, q.name)
	running.Unlock()
}

func (q *markingQueue) ShutDown() {
	q.unmark()
	q.PriorityQueue.ShutDown()
}

func (q *markingQueue) ShutDownWithDrain() {
	q.unmark()
	q.PriorityQueue.ShutDownWithDrain()
}
