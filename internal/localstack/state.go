package localstack

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// State is what a running `flotilla up` records in <data-dir>/state.json so
// that `up --detach` can follow it and `flotilla down` can stop it.
type State struct {
	// PID is the process id of the supervising `flotilla up`.
	PID int `json:"pid"`
	// Phase is Starting, Ready, Failed or Stopped.
	Phase string `json:"phase"`
	// Message explains a Failed phase.
	Message string `json:"message,omitempty"`
}

// Phases of State.
const (
	PhaseStarting = "Starting"
	PhaseReady    = "Ready"
	PhaseFailed   = "Failed"
	PhaseStopped  = "Stopped"
)

func statePath(dataDir string) string { return filepath.Join(dataDir, "state.json") }

// ReadState reads the recorded state; a missing file gives a zero State and no error.
func ReadState(dataDir string) (State, error) {
	var st State
	data, err := os.ReadFile(statePath(dataDir))
	if errors.Is(err, os.ErrNotExist) {
		return st, nil
	}
	if err != nil {
		return st, err
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return st, fmt.Errorf("parse %s: %w", statePath(dataDir), err)
	}
	return st, nil
}

// WriteState records st atomically.
func WriteState(dataDir string, st State) error {
	data, err := json.Marshal(st)
	if err != nil {
		return err
	}
	tmp := statePath(dataDir) + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, statePath(dataDir))
}

// Running returns the pid of a live `flotilla up` that owns dataDir, or 0.
func Running(dataDir string) int {
	st, err := ReadState(dataDir)
	if err != nil || st.PID == 0 || st.Phase == PhaseStopped {
		return 0
	}
	if !isFlotilla(st.PID) {
		return 0
	}
	return st.PID
}

// isFlotilla reports whether pid is alive and runs a flotilla binary, so a
// recycled pid is not mistaken for the stack.
func isFlotilla(pid int) bool {
	if err := syscall.Kill(pid, 0); err != nil {
		return false
	}
	cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
	if err != nil {
		return true // no procfs: trust the signal check
	}
	args := strings.Split(string(cmdline), "\x00")
	return len(args) > 1 && strings.Contains(filepath.Base(args[0]), "flotilla") && args[1] == "up"
}

// Down stops the stack running from dataDir: SIGTERM to its `flotilla up`,
// which stops its children in order. It waits up to timeout for the process
// to exit. It returns false if no stack was running.
func Down(dataDir string, timeout time.Duration) (bool, error) {
	pid := Running(dataDir)
	if pid == 0 {
		return false, nil
	}
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil {
		return false, fmt.Errorf("signal flotilla up (pid %d): %w", pid, err)
	}
	deadline := time.Now().Add(timeout)
	for time.Now().Before(deadline) {
		if syscall.Kill(pid, 0) != nil {
			return true, nil
		}
		time.Sleep(100 * time.Millisecond)
	}
	// Its children die with it (parent-death signal).
	_ = syscall.Kill(pid, syscall.SIGKILL)
	return true, fmt.Errorf("flotilla up (pid %d) did not stop within %s and was killed", pid, timeout)
}
