// Package e2e drives the flotilla binary the way a user does: `flotilla up`,
// kubectl, YAML. Tests run against real processes and real API servers.
//
// Tests marked extended (slow, or breaking what they run on) run only with
// FLOTILLA_E2E=extended (make test-extended); the rest are the baseline.
//
// Tests that run a stack run in lanes: at most FLOTILLA_E2E_LANES (2 by
// default) at a time, in parallel, since most of an end-to-end test is
// waiting for controllers. A shared stack serves one test at a time (a test
// takes an idle one of its size or starts one), and stacks start one at a
// time (two starting at once could pick the same free port).
//
// The binary comes from $FLOTILLA_BIN (make test builds it once for every
// package); without it TestMain builds one.
package e2e

import (
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
	"time"
)

// flotillaBin is the binary under test.
var flotillaBin string

// extended skips a slow or destructive test unless FLOTILLA_E2E=extended.
func extended(t *testing.T) {
	t.Helper()
	if os.Getenv("FLOTILLA_E2E") != "extended" {
		t.Skip("extended e2e: runs with FLOTILLA_E2E=extended (make test-extended)")
	}
}

// lanes hands out one lane per test running a stack.
var lanes = &laneQueue{free: laneCount()}

// laneCount is FLOTILLA_E2E_LANES, else 3: on two cores most of a test's time is spent waiting
// for its stack to converge, and three lanes keep the cores busier than two.
func laneCount() int {
	if n, err := strconv.Atoi(os.Getenv("FLOTILLA_E2E_LANES")); err == nil && n > 0 {
		return n
	}
	return 3
}

// Lane classes, served in this order: tests that start a stack of their own are the longest
// (they pay for their start, and most break their stack on purpose), then the longest tests
// on a shared stack (longSharedTests), then the rest, so that the run does not end with one
// long test alone in a lane.
const (
	laneOwnStack = iota
	laneSharedLong
	laneSharedStack
	laneClasses
)

// longSharedTests are the tests on a shared stack that run longest (over 80 s each on two
// cores, as `make e2e` prints them in its "lane: ... ran" lines).
var longSharedTests = map[string]bool{
	"TestMemberMetrics":              true,
	"TestPolicyFieldsActAsInKarmada": true,
	"TestServiceExportImport":        true,
	"TestPropagation":                true,
}

// laneQueue is a counting semaphore that serves waiting tests by class: laneOwnStack
// first, then laneSharedLong, then laneSharedStack.
type laneQueue struct {
	mu      sync.Mutex
	free    int
	first   time.Time // the first request
	waiting [laneClasses][]chan struct{}
}

// laneSettle is how long after the first request a test on a shared stack waits before it asks:
// every parallel test resumes at once, and the laneOwnStack ones must be queued first.
const laneSettle = time.Second

func (q *laneQueue) acquire(class int) {
	q.mu.Lock()
	if q.first.IsZero() {
		q.first = time.Now()
	}
	first := q.first
	q.mu.Unlock()
	if class != laneOwnStack {
		time.Sleep(time.Until(first.Add(laneSettle)))
	}
	q.mu.Lock()
	ahead := 0
	for c := range class {
		ahead += len(q.waiting[c])
	}
	if q.free > 0 && ahead == 0 {
		q.free--
		q.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	q.waiting[class] = append(q.waiting[class], ch)
	q.mu.Unlock()
	<-ch
}

func (q *laneQueue) release() {
	q.mu.Lock()
	defer q.mu.Unlock()
	for c := range q.waiting {
		if len(q.waiting[c]) > 0 {
			ch := q.waiting[c][0]
			q.waiting[c] = q.waiting[c][1:]
			close(ch) // the lane passes to it
			return
		}
	}
	q.free++
}

// inLane runs t in parallel with the other tests that run stacks, once a
// lane is free for its class (laneOwnStack, laneSharedLong or laneSharedStack); the lane is held
// until t ends. Call it first thing in a top-level test (after t.Skip
// decisions), before anything that t.Parallel forbids (t.Setenv).
func inLane(t *testing.T, class int) {
	t.Helper()
	t.Parallel()
	asked := time.Now()
	lanes.acquire(class)
	got := time.Now()
	t.Cleanup(func() {
		lanes.release()
		t.Logf("lane: waited %s, ran %s", got.Sub(asked).Round(time.Second), time.Since(got).Round(time.Second))
	})
}

// starting is held while a stack starts: ports are chosen free when it
// starts, and only bound once its processes run.
var starting sync.Mutex

func TestMain(m *testing.M) {
	flag.Parse() // testing.Short needs the flags parsed
	flotillaBin = os.Getenv("FLOTILLA_BIN")
	cleanup := func() {}
	if flotillaBin == "" && !testing.Short() {
		dir, err := os.MkdirTemp("", "flotilla-e2e-bin")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		cleanup = func() { os.RemoveAll(dir) }
		flotillaBin = filepath.Join(dir, "flotilla")
		fmt.Fprintln(os.Stderr, "e2e: FLOTILLA_BIN not set; building it with make (set it to skip this)")
		build := exec.Command("make", "-C", "../..", "build", "BIN="+flotillaBin)
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "e2e: build failed:", err)
			cleanup()
			os.Exit(1)
		}
	}
	code := m.Run()
	stopSharedStacks()
	cleanup()
	os.Exit(code)
}
