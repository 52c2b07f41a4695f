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

// lanes holds one token per test running a stack.
var lanes = make(chan struct{}, laneCount())

// laneCount is FLOTILLA_E2E_LANES, else 2.
func laneCount() int {
	if n, err := strconv.Atoi(os.Getenv("FLOTILLA_E2E_LANES")); err == nil && n > 0 {
		return n
	}
	return 2
}

// inLane runs t in parallel with the other tests that run stacks, once a
// lane is free; the lane is held until t ends. Call it first thing in a
// top-level test (after t.Skip decisions), before anything that
// t.Parallel forbids (t.Setenv).
func inLane(t *testing.T) {
	t.Helper()
	t.Parallel()
	lanes <- struct{}{}
	t.Cleanup(func() { <-lanes })
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
