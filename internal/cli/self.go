package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// self is how to run this flotilla binary again, for the commands it prints to be pasted:
// "flotilla" when that name on $PATH is this binary, else the path it was run by (bin/flotilla
// after `make build`), which runs as pasted from the same directory.
func self() string {
	invoked := os.Args[0]
	if !strings.Contains(invoked, string(filepath.Separator)) {
		return invoked // found on $PATH, so it runs as typed
	}
	if onPath, err := exec.LookPath("flotilla"); err == nil && sameFile(onPath, invoked) {
		return "flotilla"
	}
	return invoked
}

// sameFile reports whether the paths a and b name one file.
func sameFile(a, b string) bool {
	sa, err := os.Stat(a)
	if err != nil {
		return false
	}
	sb, err := os.Stat(b)
	return err == nil && os.SameFile(sa, sb)
}
