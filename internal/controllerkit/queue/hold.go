package queue

import (
	"sync"
	"time"

	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
)

// A restart with many objects queues a re-check of every one of them
// (what the informers' first lists find, at handler.LowPriority). Those
// re-checks used to start the moment the first controller ran, and then
// shared the cores with the controllers still starting: a controller starts
// its workers only once each of its watches has replayed its informer's
// store through its handler (at 30,000 templates, 90,000 Works), and the
// replays came last. The hold keeps the first lists' re-checks back until
// every controller of the process runs, so the process is ready sooner;
// real changes (a new template) are never held.
var hold = struct {
	sync.Mutex
	want   int
	atMost time.Duration
	timer  *time.Timer
	// open is closed once nothing is held (or never was).
	open   chan struct{}
	queues map[*markingQueue]struct{}
}{open: closedChan(), queues: map[*markingQueue]struct{}{}}

func closedChan() chan struct{} {
	c := make(chan struct{})
	close(c)
	return c
}

// HoldFirstListsUntilRunning holds, in every queue built with Options, the
// items at handler.LowPriority or below (what informers' first lists found)
// until want controllers built with Options have started their workers
// (RunningControllers), or at most atMost after the first of them started,
// whichever comes first; then they are queued again at that priority. Items
// above it are handed out as usual. want <= 0 holds nothing. Call it once,
// before the controllers start.
func HoldFirstListsUntilRunning(want int, atMost time.Duration) {
	hold.Lock()
	defer hold.Unlock()
	if want <= 0 {
		return
	}
	// A hold still on from an earlier call hands back what it kept first.
	releaseLocked()
	hold.want, hold.atMost, hold.open, hold.timer = want, atMost, make(chan struct{}), nil
	hold.queues = map[*markingQueue]struct{}{}
}

// FirstListsHoldMax bounds how long the first lists' re-checks are held
// after the first controller started its workers: should a controller
// never start, the re-checks still run.
const FirstListsHoldMax = 30 * time.Second

// FirstListsReleased is closed once HoldFirstListsUntilRunning no longer
// holds anything (at once when it was never called): for re-checks that are
// not queued through Options, such as the detector's backlog of templates.
func FirstListsReleased() <-chan struct{} {
	hold.Lock()
	defer hold.Unlock()
	return hold.open
}

// started is called when a controller has started its workers, with the
// number running: it releases the hold once enough are, and starts the
// hold's bound with the first.
func started(n int) {
	hold.Lock()
	defer hold.Unlock()
	if holding() && n >= hold.want {
		releaseLocked()
		return
	}
	if holding() && hold.timer == nil {
		hold.timer = time.AfterFunc(hold.atMost, func() {
			hold.Lock()
			defer hold.Unlock()
			releaseLocked()
		})
	}
}

// holding reports whether items are being held; hold's lock is held.
func holding() bool {
	select {
	case <-hold.open:
		return false
	default:
		return true
	}
}

// releaseLocked queues every held item again at low priority and ends the
// hold; hold's lock is held.
func releaseLocked() {
	if !holding() {
		return
	}
	close(hold.open)
	if hold.timer != nil {
		hold.timer.Stop()
	}
	for q := range hold.queues {
		for item := range q.held {
			addAt(q.PriorityQueue, handler.LowPriority, 0, item)
		}
		q.held = nil
	}
	hold.queues = nil
}

// keep holds item when the hold is on and reports whether it did.
func (q *markingQueue) keep(item reconcile.Request) bool {
	hold.Lock()
	defer hold.Unlock()
	if !holding() {
		return false
	}
	if q.held == nil {
		q.held = map[reconcile.Request]struct{}{}
	}
	q.held[item] = struct{}{}
	hold.queues[q] = struct{}{}
	return true
}
