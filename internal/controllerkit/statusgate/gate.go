// Package statusgate puts propagation before status reporting: the Gate
// that holds status writes back while propagation writes are in flight, the
// Wakeup that turns its releases into reconcile requests, and the Board
// through which status aggregation reads the Work reports the Gate holds
// back. Controllers share one Gate and one Board per process; see Gate.
package statusgate

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// Gate puts propagation before status reporting. Flotilla writes two kinds
// of things to the API servers: propagation (template claims, bindings and
// their placement, Works, member objects), which decides how soon a user's
// object reaches its member clusters, and status reports (Work status,
// binding status, the template's aggregated status), which describe it.
// Both compete for the same API server CPU. Propagation writes are wrapped
// in Write; a status report asks Park first and, while a propagation write
// is in flight or ended within the last Quiet, is parked instead of written: its release function is called
// once propagation has been quiet for Quiet, or once the report has waited
// MaxDefer, so a report is delayed by at most MaxDefer (plus one Quiet).
// Parked reports are not polled: a burst of thousands costs nothing while
// it waits. A nil *Gate parks nothing. All of the gate's time (the end of
// the last write, when a report was first parked, the release loop's
// ticks) is read from its clock, so a fake clock drives it in tests.
type Gate struct {
	// Quiet is how long after the last propagation write status reports
	// may go ahead. It must exceed the gap between the consecutive writes
	// of one object's propagation (a watch delivery, a few milliseconds),
	// or reports slip in between them.
	Quiet time.Duration
	// MaxDefer bounds how long one report waits, so that status still
	// moves under propagation that never pauses.
	MaxDefer time.Duration

	// clock is where every reading of time and the release loop's ticker
	// come from: clock.RealClock{} from NewGate, a fake one in tests
	// (NewGateWithClock). Reading it through the interface on the hot path
	// (Write, Busy) allocates nothing: RealClock is a zero-size value.
	clock clock.WithTicker
	// passed, if set (by tests only), receives a value after each pass of
	// the release loop, once that pass's releases have been called.
	passed chan<- struct{}

	last     atomic.Int64 // unix nanoseconds of the last write's end
	inflight atomic.Int64 // propagation writes in flight

	mu        sync.Mutex
	since     map[string]time.Time // key -> when its report was first parked
	parked    map[string]func()    // key -> release, until released
	releasing bool                 // the release loop is running
}

// NewGate returns a gate with the given Quiet and MaxDefer that runs on
// the real clock.
func NewGate(quiet, maxDefer time.Duration) *Gate {
	return NewGateWithClock(quiet, maxDefer, clock.RealClock{})
}

// NewGateWithClock returns a gate with the given Quiet and MaxDefer that
// reads time from clk and ticks its release loop with clk's tickers, such
// as a k8s.io/utils/clock/testing FakeClock whose Step moves the gate on.
// clk must read a time after 1970 (the gate keeps the last write's end in
// unix nanoseconds, where 0 means never).
func NewGateWithClock(quiet, maxDefer time.Duration, clk clock.WithTicker) *Gate {
	return &Gate{Quiet: quiet, MaxDefer: maxDefer, clock: clk, since: map[string]time.Time{}, parked: map[string]func(){}}
}

// Write marks a propagation write as in flight until the returned function
// is called (once, when the write has returned).
func (g *Gate) Write() (done func()) {
	if g == nil {
		return func() {}
	}
	g.inflight.Add(1)
	return func() {
		g.last.Store(g.clock.Now().UnixNano())
		g.inflight.Add(-1)
	}
}

// Busy reports whether a propagation write is in flight or ended within the
// last Quiet.
func (g *Gate) Busy() bool {
	return g != nil && (g.inflight.Load() > 0 || g.clock.Since(time.Unix(0, g.last.Load())) < g.Quiet)
}

// Park decides whether the status report identified by key (any string
// unique across the gate's users, such as "work/<ns>/<name>") waits. It
// returns false when the report should be written now: propagation is
// quiet, or the report has waited MaxDefer since it was first parked.
// Otherwise it keeps release (replacing an earlier one for the same key),
// calls it later from another goroutine, and returns true; release should
// only enqueue (see Wakeup).
func (g *Gate) Park(key string, release func()) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	now := g.clock.Now()
	first, seen := g.since[key]
	if !seen {
		first = now
	}
	if !g.Busy() || now.Sub(first) >= g.MaxDefer {
		delete(g.since, key)
		delete(g.parked, key)
		return false
	}
	g.since[key] = first
	g.parked[key] = release
	if !g.releasing {
		g.releasing = true
		// The ticker starts here, under the lock, rather than in the
		// goroutine: its first tick is then due Quiet/2 after this Park
		// whenever the goroutine gets to run, and a fake clock stepped
		// right after Park returns already drives it. A ticker needs a
		// positive period; a Quiet under 2ns ticks as fast as it can,
		// as the loop did with a zero sleep.
		go g.releaseLoop(g.clock.NewTicker(max(g.Quiet/2, 1)))
	}
	return true
}

// Pending reports whether the report identified by key has been parked and
// not written since (it may have been released and be on its way).
func (g *Gate) Pending(key string) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.since[key]
	return ok
}

// releaseLoop releases parked reports once propagation is quiet, and the
// ones that reached MaxDefer before that, looking at each tick of ticker
// (every Quiet/2); it stops ticker and ends when nothing is parked.
func (g *Gate) releaseLoop(ticker clock.Ticker) {
	defer ticker.Stop()
	for {
		<-ticker.C()
		g.mu.Lock()
		quiet := !g.Busy()
		now := g.clock.Now()
		var due []func()
		for key, release := range g.parked {
			if quiet || now.Sub(g.since[key]) >= g.MaxDefer {
				due = append(due, release)
				delete(g.parked, key)
			}
		}
		for key, first := range g.since {
			// A released report whose object vanished never comes back
			// to Park; forget it once it is well past its deadline.
			if _, parked := g.parked[key]; !parked && now.Sub(first) > 2*g.MaxDefer {
				delete(g.since, key)
			}
		}
		done := len(g.parked) == 0
		if done {
			g.releasing = false
		}
		g.mu.Unlock()
		for _, release := range due {
			release()
		}
		if g.passed != nil {
			g.passed <- struct{}{}
		}
		if done {
			return
		}
	}
}

// WorkReportKey identifies a Work's status report in the Gate: the
// execution controller parks it under this key, and the status controller
// asks whether it is pending.
func WorkReportKey(namespace, name string) string { return "work/" + namespace + "/" + name }

// Default gate settings of the controller manager. StatusQuiet is several
// times the gap between one object's consecutive propagation writes on a
// loaded machine; StatusMaxDefer lets a burst of a thousand templates reach
// its members before their status reports compete with it.
const (
	StatusQuiet    = 25 * time.Millisecond
	StatusMaxDefer = 30 * time.Second
)

// AgentStatusQuiet is the Quiet of a Pull-mode agent's gate. The agent
// sees only its own member writes, one per Work as the control plane's
// Works reach it by watch; in a burst they arrive tens of milliseconds
// apart, so StatusQuiet would release the agent's Work status reports in
// the gaps and they would compete on the control plane with the Works
// still being created (measured: all copies of a burst of 1,000 in 55-60 s
// instead of 39 s). Half a second covers those gaps; under a sustained
// stream of more than about two Works a second to one member, reports
// then wait up to StatusMaxDefer.
const AgentStatusQuiet = 500 * time.Millisecond

// Wakeup turns Gate releases into reconcile requests of one controller:
// register Source with the controller and pass Release(obj) to Park.
type Wakeup chan event.GenericEvent

// NewWakeup returns a Wakeup with room for a burst of releases.
func NewWakeup() Wakeup { return make(Wakeup, 1024) }

// Source enqueues each released object's namespace/name, at once and at
// queue.StatusPriority: a released report is still a status
// report, so in a priority queue it waits behind real changes (a new Work
// to apply) rather than beside them.
func (w Wakeup) Source() source.Source {
	return source.Channel((<-chan event.GenericEvent)(w), handler.Funcs{
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			queue.AddStatus(q, 0, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
		},
	})
}

// Release returns a release function for Gate.Park that enqueues obj's key.
// obj must not be modified afterwards.
func (w Wakeup) Release(obj client.Object) func() {
	return func() { w <- event.GenericEvent{Object: obj} }
}
