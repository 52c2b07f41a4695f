package statusgate

import (
	"sync/atomic"
	"testing"
	"time"
)

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func TestNilGateParksNothing(t *testing.T) {
	var g *Gate
	g.Write()()
	if g.Busy() || g.Park("k", func() {}) || g.Pending("k") {
		t.Fatal("a nil gate must never defer")
	}
}

func TestGateWritesNowWhenQuiet(t *testing.T) {
	g := NewGate(time.Millisecond, time.Minute)
	if g.Park("k", func() { t.Error("released a report that was not parked") }) {
		t.Fatal("parked a report although no propagation write ever happened")
	}
	if g.Pending("k") {
		t.Fatal("a report written at once is not pending")
	}
}

func TestGateParksWhileAWriteIsInFlightAndReleasesAfterQuiet(t *testing.T) {
	g := NewGate(20*time.Millisecond, time.Minute)
	done := g.Write()
	var released atomic.Int32
	if !g.Park("a", func() { released.Add(1) }) {
		t.Fatal("a report must wait while a propagation write is in flight")
	}
	// Parking again replaces the release: it is called once.
	if !g.Park("a", func() { released.Add(1) }) {
		t.Fatal("still busy")
	}
	if !g.Pending("a") {
		t.Fatal("a parked report is pending")
	}
	// However long the write takes, the report stays parked.
	time.Sleep(3 * g.Quiet)
	if released.Load() != 0 {
		t.Fatal("released while the write was still in flight")
	}
	done()
	if !g.Busy() {
		t.Fatal("the gate stays busy for Quiet after the write")
	}
	waitFor(t, "release after Quiet", func() bool { return released.Load() == 1 })
	if !g.Pending("a") {
		t.Fatal("a released report stays pending until it is written")
	}
	if g.Park("a", func() {}) {
		t.Fatal("after the release, the report goes ahead")
	}
	if g.Pending("a") {
		t.Fatal("a written report is no longer pending")
	}
	time.Sleep(g.Quiet)
	if released.Load() != 1 {
		t.Fatalf("released %d times, want once", released.Load())
	}
}

func TestGateBoundsTheDeferral(t *testing.T) {
	g := NewGate(10*time.Millisecond, 50*time.Millisecond)
	done := g.Write() // propagation never pauses
	defer done()
	var released atomic.Bool
	start := time.Now()
	if !g.Park("a", func() { released.Store(true) }) {
		t.Fatal("busy: the report should wait")
	}
	waitFor(t, "release at MaxDefer", released.Load)
	if waited := time.Since(start); waited < g.MaxDefer {
		t.Fatalf("released after %v, before MaxDefer %v while propagation was busy", waited, g.MaxDefer)
	}
	if g.Park("a", func() {}) {
		t.Fatal("a report that has waited MaxDefer is written even while busy")
	}
}
