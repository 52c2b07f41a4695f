// Package e2e drives the flotilla binary the way a user does: `flotilla up`,
// kubectl, YAML. Tests run against real processes and real API servers.
//
// Tests marked extended (slow, or breaking what they run on) run only with
// FLOTILLA_E2E=extended (make test-extended); the rest are the baseline.
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
