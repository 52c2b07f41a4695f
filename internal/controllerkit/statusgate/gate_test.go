package statusgate

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	clocktesting "k8s.io/utils/clock/testing"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
)

// guard bounds every wait for the release loop. It is a failure guard
// only: a pass arrives as soon as the loop has run, which takes
// microseconds.
const guard = 10 * time.Second

// gateRun drives one Gate on a fake clock: a test is a script of steps,
// each an action on the gate or the clock followed by what it must show.
type gateRun struct {
	t        *testing.T
	gate     *Gate
	clock    *clocktesting.FakeClock
	passed   chan struct{} // one value per pass of the release loop
	released chan string   // the names of the release functions called
	writes   []func()      // done functions of the writes in flight
}

// step is one line of a gate script.
type step func(r *gateRun)

func newGateRun(t *testing.T, quiet, maxDefer time.Duration) *gateRun {
	clk := clocktesting.NewFakeClock(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC))
	passed := make(chan struct{})
	r := &gateRun{
		t:        t,
		gate:     NewGateWithClock(quiet, maxDefer, clk),
		clock:    clk,
		passed:   passed,
		released: make(chan string, 64),
	}
	r.gate.passed = passed
	t.Cleanup(r.drain)
	return r
}

// drain ends the writes still in flight and moves the clock on until the
// release loop has released everything and ended, so that no goroutine
// outlives its test.
func (r *gateRun) drain() {
	for _, done := range r.writes {
		done()
	}
	r.writes = nil
	for r.loopRunning() {
		r.clock.Step(r.gate.Quiet)
		r.awaitPass()
	}
}

func (r *gateRun) loopRunning() bool {
	r.gate.mu.Lock()
	defer r.gate.mu.Unlock()
	return r.gate.releasing
}

func (r *gateRun) awaitPass() {
	r.t.Helper()
	select {
	case <-r.passed:
	case <-time.After(guard):
		r.t.Fatal("the release loop did not make a pass after the clock reached its tick")
	}
}

// startWrite begins a propagation write that stays in flight until
// endWrite.
func startWrite() step {
	return func(r *gateRun) { r.writes = append(r.writes, r.gate.Write()) }
}

// endWrite ends the newest propagation write still in flight.
func endWrite() step {
	return func(r *gateRun) {
		last := len(r.writes) - 1
		r.writes[last]()
		r.writes = r.writes[:last]
	}
}

// park asks the gate whether the report key waits, with a release function
// that records name when called.
func park(key, name string, wantParked bool) step {
	return func(r *gateRun) {
		r.t.Helper()
		if got := r.gate.Park(key, func() { r.released <- name }); got != wantParked {
			r.t.Fatalf("Park(%q) = %v, want %v", key, got, wantParked)
		}
	}
}

// advance moves the clock by d while no release loop runs (a tick it
// reached would make a pass that nobody waits for).
func advance(d time.Duration) step {
	return func(r *gateRun) { r.clock.Step(d) }
}

// pass moves the clock by d onto a tick of the release loop and waits
// until the loop has made that pass and called the releases it decided on.
func pass(d time.Duration) step {
	return func(r *gateRun) {
		r.t.Helper()
		r.clock.Step(d)
		r.awaitPass()
	}
}

// released expects exactly the named release functions to have been called
// since the last check, in any order.
func released(names ...string) step {
	return func(r *gateRun) {
		r.t.Helper()
		var got []string
		for more := true; more; {
			select {
			case name := <-r.released:
				got = append(got, name)
			default:
				more = false
			}
		}
		slices.Sort(got)
		slices.Sort(names)
		if diff := cmp.Diff(names, got, cmpopts.EquateEmpty()); diff != "" {
			r.t.Fatalf("released (-want +got):\n%s", diff)
		}
	}
}

func pending(key string, want bool) step {
	return func(r *gateRun) {
		r.t.Helper()
		if got := r.gate.Pending(key); got != want {
			r.t.Fatalf("Pending(%q) = %v, want %v", key, got, want)
		}
	}
}

func busy(want bool) step {
	return func(r *gateRun) {
		r.t.Helper()
		if got := r.gate.Busy(); got != want {
			r.t.Fatalf("Busy() = %v, want %v", got, want)
		}
	}
}

func loopRunning(want bool) step {
	return func(r *gateRun) {
		r.t.Helper()
		if got := r.loopRunning(); got != want {
			r.t.Fatalf("release loop running = %v, want %v", got, want)
		}
	}
}

func TestGate(t *testing.T) {
	// Quiet 20ms ticks the release loop every 10ms; MaxDefer is 100ms.
	const (
		quiet    = 20 * time.Millisecond
		tick     = quiet / 2
		maxDefer = 100 * time.Millisecond
	)
	tests := []struct {
		name  string
		steps []step
	}{{
		name: "a report goes ahead at once when no propagation write ever happened",
		steps: []step{
			busy(false),
			park("a", "a", false),
			pending("a", false),
			loopRunning(false),
		},
	}, {
		name: "a report waits however long a write is in flight, then Quiet after it ends, and is released once",
		steps: []step{
			startWrite(),
			busy(true),
			park("a", "a", true),
			pending("a", true),
			loopRunning(true),
			pass(tick), pass(tick), pass(tick), pass(tick),
			released(),
			endWrite(),
			busy(true), // for Quiet after the write
			pass(tick),
			released(),
			busy(true),
			pass(tick), // Quiet has passed since the write ended
			busy(false),
			released("a"),
			loopRunning(false),
			pending("a", true), // released, on its way, not written yet
			park("a", "a again", false),
			pending("a", false),
			advance(maxDefer),
			released(),
		},
	}, {
		name: "a report that comes within Quiet after a write waits for the rest of Quiet",
		steps: []step{
			startWrite(),
			advance(time.Hour), // how long the write took does not matter
			endWrite(),
			advance(quiet / 4),
			park("a", "a", true),
			pass(tick),
			released(),
			pass(tick), // 5/4 Quiet after the write
			released("a"),
		},
	}, {
		name: "a report is released at MaxDefer while propagation never pauses, and then goes ahead while busy",
		steps: []step{
			startWrite(),
			park("a", "a", true),
			pass(maxDefer - tick),
			released(),
			startWrite(), endWrite(), // another write comes and goes
			pass(tick),
			released("a"),
			busy(true),
			pending("a", true),
			park("a", "a again", false),
			pending("a", false),
		},
	}, {
		name: "a report parked again keeps its first time and only its newest release is called",
		steps: []step{
			startWrite(),
			park("a", "first", true),
			pass(maxDefer / 2),
			park("a", "second", true),
			pass(maxDefer/2 - tick),
			released(),
			pass(tick), // MaxDefer after the first Park, not the second
			released("second"),
		},
	}, {
		name: "reports parked at different times are each released at their own MaxDefer",
		steps: []step{
			startWrite(),
			park("a", "a", true),
			pass(maxDefer / 2),
			park("b", "b", true),
			pass(maxDefer / 2),
			released("a"),
			pending("a", true),
			pending("b", true),
			loopRunning(true),
			pass(maxDefer / 2),
			released("b"),
			loopRunning(false),
		},
	}, {
		name: "a report released but never written is forgotten once more than 2*MaxDefer has passed since it was parked",
		steps: []step{
			startWrite(),
			park("gone", "gone", true),
			pass(maxDefer),
			released("gone"),
			loopRunning(false), // forgetting happens only while the loop runs
			advance(maxDefer / 2),
			park("other", "other", true),
			pass(maxDefer / 2), // exactly 2*MaxDefer: not yet forgotten
			pending("gone", true),
			pass(tick),
			pending("gone", false),
			pending("other", true),
			released(),
		},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := newGateRun(t, quiet, maxDefer)
			for _, s := range tt.steps {
				s(r)
			}
		})
	}
}

func TestGateOnTheRealClockReleasesThroughItsTicker(t *testing.T) {
	g := NewGate(time.Millisecond, time.Minute)
	done := g.Write()
	released := make(chan struct{})
	if !g.Park("a", func() { close(released) }) {
		t.Fatal("Park() = false while a write is in flight, want true")
	}
	done()
	select {
	case <-released:
	case <-time.After(guard):
		t.Fatal("the report was not released after propagation went quiet")
	}
}

func TestNilGateParksNothing(t *testing.T) {
	var g *Gate
	tests := []struct {
		name string
		got  func() bool
	}{
		{"a write through a nil gate leaves it idle", func() bool { g.Write()(); return g.Busy() }},
		{"a report goes ahead", func() bool { return g.Park("k", func() { t.Error("a nil gate released a report") }) }},
		{"no report is pending", func() bool { return g.Pending("k") }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got() {
				t.Fatal("a nil gate must never defer")
			}
		})
	}
}

func TestGateHotPathAllocatesOnlyTheDoneFunction(t *testing.T) {
	g := NewGate(StatusQuiet, StatusMaxDefer)
	tests := []struct {
		name string
		run  func()
		want float64
	}{
		{"Busy allocates nothing", func() { g.Busy() }, 0},
		{"Write allocates its done function and nothing else", func() { g.Write()() }, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := testing.AllocsPerRun(100, tt.run); got > tt.want {
				t.Fatalf("allocations per run = %v, want at most %v", got, tt.want)
			}
		})
	}
}

func BenchmarkGateWrite(b *testing.B) {
	g := NewGate(StatusQuiet, StatusMaxDefer)
	b.ReportAllocs()
	for b.Loop() {
		g.Write()()
	}
}

func BenchmarkGateBusy(b *testing.B) {
	g := NewGate(StatusQuiet, StatusMaxDefer)
	b.ReportAllocs()
	for b.Loop() {
		g.Busy()
	}
}

// A released report reaches a priority queue below a real change.
func TestWakeupEnqueuesAtStatusPriority(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := priorityqueue.New[reconcile.Request]("wakeup-test")
	defer q.ShutDown()
	w := NewWakeup()
	if err := w.Source().Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	obj := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Namespace: "ns", Name: "released"}}
	w.Release(obj)()
	req, priority, _ := q.GetWithPriority()
	if req.Name != "released" || priority != queue.StatusPriority {
		t.Errorf("got %v at priority %d, want ns/released at %d", req, priority, queue.StatusPriority)
	}
}
