package queue

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// Group is the queues of one controller-runtime manager's controllers. It counts the
// controllers whose workers run (for the manager's readiness), and can hold back what their
// informers' first lists found until all of them run.
//
// Why the hold: a restart with many objects queues a re-check of every one of them (what the
// first lists find, at handler.LowPriority). Those re-checks used to start the moment the first
// controller ran, and then shared the cores with the controllers still starting: a controller
// starts its workers only once each of its watches has replayed its informer's store through
// its handler (at 30,000 templates, 90,000 Works), and the replays came last. Holding the
// re-checks until every controller runs makes the process ready sooner; real changes (a new
// template) are never held.
//
// A Group belongs to one manager (health.Counting makes it); it is safe for concurrent use.
type Group struct {
	mu sync.Mutex
	// running holds the names of the controllers whose workers have asked their queue for
	// an item and whose queue has not shut down; controller-runtime keeps controller names
	// unique in a manager, so the name is the key.
	running map[string]bool
	want    int
	atMost  time.Duration
	timer   *time.Timer
	// open is closed once nothing is held (or never was).
	open   chan struct{}
	queues map[*markingQueue]struct{}
}

// NewGroup returns a Group that holds nothing until HoldFirstListsUntilRunning is called.
func NewGroup() *Group {
	return &Group{running: map[string]bool{}, open: closedChan(), queues: map[*markingQueue]struct{}{}}
}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// Grouped is a manager that owns a Group (health.Manager).
type Grouped interface {
	Queues() *Group
}

// Options gives a controller set up through mgr `workers` parallel reconcilers, RateLimiter,
// and controller-runtime's priority queue, counted in mgr's Group when mgr owns one (Grouped:
// the controller manager's and the agent's readiness count on that), else in a Group of its
// own. Every Flotilla controller is built with it.
func Options(mgr manager.Manager, workers int) controller.Options {
	g, ok := mgr.(Grouped)
	if !ok {
		return NewGroup().Options(workers)
	}
	return g.Queues().Options(workers)
}

// Options gives a controller `workers` parallel reconcilers, RateLimiter, and
// controller-runtime's priority queue, whose first use by a worker counts the controller in
// Running.
func (g *Group) Options(workers int) controller.Options {
	return controller.Options{MaxConcurrentReconciles: workers, RateLimiter: RateLimiter[reconcile.Request](), NewQueue: g.newQueue}
}

// Running returns how many controllers built with g's Options have started their workers and
// not stopped since.
func (g *Group) Running() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.running)
}

// HoldFirstListsUntilRunning holds, in every queue built with g's Options, the items at
// handler.LowPriority or below (what informers' first lists found) until want controllers have
// started their workers (Running), or at most atMost after the first of them started,
// whichever comes first; then they are queued again at that priority. Items above it are
// handed out as usual. want <= 0 holds nothing. Call it once the controllers are set up,
// before they start; a hold still on from an earlier call first hands back what it kept.
func (g *Group) HoldFirstListsUntilRunning(want int, atMost time.Duration) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if want <= 0 {
		return
	}
	g.releaseLocked()
	g.want, g.atMost, g.open, g.timer = want, atMost, make(chan struct{}), nil
	g.queues = map[*markingQueue]struct{}{}
}

// FirstListsHoldMax bounds how long the first lists' re-checks are held after the first
// controller started its workers: should a controller never start, the re-checks still run.
const FirstListsHoldMax = 30 * time.Second

// FirstListsReleased is closed once the hold no longer holds anything (at once when there was
// none): for re-checks that are not queued through g's Options, such as the detector's
// backlog of templates.
func (g *Group) FirstListsReleased() <-chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.open
}

// started records that the controller name has started its workers: it releases the hold once
// enough run, and starts the hold's bound with the first.
func (g *Group) started(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.running[name] = true
	if !g.holding() {
		return
	}
	if len(g.running) >= g.want {
		g.releaseLocked()
		return
	}
	if g.timer == nil {
		g.timer = time.AfterFunc(g.atMost, func() {
			g.mu.Lock()
			defer g.mu.Unlock()
			g.releaseLocked()
		})
	}
}

// stopped records that the controller name has stopped.
func (g *Group) stopped(name string) {
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.running, name)
}

// holding reports whether items are being held; g.mu is held.
func (g *Group) holding() bool {
	select {
	case <-g.open:
		return false
	default:
		return true
	}
}

// releaseLocked queues every held item again at low priority and ends the hold; g.mu is held.
func (g *Group) releaseLocked() {
	if !g.holding() {
		return
	}
	close(g.open)
	if g.timer != nil {
		g.timer.Stop()
	}
	for q := range g.queues {
		for item := range q.held {
			addAt(q.PriorityQueue, handler.LowPriority, 0, item)
		}
		q.held = nil
	}
	g.queues = nil
}

// keep holds item when the hold is on and reports whether it did.
func (q *markingQueue) keep(item reconcile.Request) bool {
	g := q.group
	g.mu.Lock()
	defer g.mu.Unlock()
	if !g.holding() {
		return false
	}
	if q.held == nil {
		q.held = map[reconcile.Request]struct{}{}
	}
	q.held[item] = struct{}{}
	g.queues[q] = struct{}{}
	return true
}
