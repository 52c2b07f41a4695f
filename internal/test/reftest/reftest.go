// Package reftest locates the upstream reference material for tests that
// compare Flotilla with Karmada's own files: its CRD schemas, samples and
// interpreter bundles, and the seed release notes. They live in ../shared,
// beside the repository checkout, and are never copied into the repository.
package reftest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// ModuleRoot returns the repository root: the nearest directory at or above
// the working directory that holds a go.mod. It fails the test when there is
// none.
func ModuleRoot(t testing.TB) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		if filepath.Dir(dir) == dir {
			t.Fatalf("no go.mod at or above %s: run the tests inside the repository", dir)
		}
		dir = filepath.Dir(dir)
	}
}

// Shared returns the path of parts under ../shared (for example
// Shared(t, "reference", "karmada-samples")). When that path does not exist,
// the test is skipped with a message naming it; under CI (CI=true), where
// ../shared is always provided, it fails instead, so CI cannot pass on
// comparisons it skipped.
func Shared(t testing.TB, parts ...string) string {
	t.Helper()
	path := filepath.Join(append([]string{ModuleRoot(t), "..", "shared"}, parts...)...)
	path = filepath.Clean(path)
	if _, err := os.Stat(path); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the upstream reference material is missing at %s (CI provides ../shared beside the checkout): %v", path, err)
		}
		t.Skipf("skipped: compares with upstream reference material at %s, which is not there (put Karmada's reference material in ../shared beside the checkout to run it)", path)
	}
	return path
}

// SeedYAMLBlocks returns the six YAML examples of the seed release notes
// (Shared(t, "seed", ...)): each starts at an `apiVersion:` line and runs to
// the next blank line. It fails the test when the notes hold another number
// of examples.
func SeedYAMLBlocks(t testing.TB) []string {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(Shared(t, "seed"), "000_c8bfd764a9009bb5.txt"))
	if err != nil {
		t.Fatal(err)
	}
	var blocks []string
	var cur []string
	for _, line := range strings.Split(string(data), "\n") {
		switch {
		case strings.HasPrefix(line, "apiVersion:"):
			cur = []string{line}
		case cur != nil && strings.TrimSpace(line) == "":
			blocks = append(blocks, strings.Join(cur, "\n")+"\n")
			cur = nil
		case cur != nil:
			cur = append(cur, line)
		}
	}
	if len(blocks) != 6 {
		t.Fatalf("found %d YAML examples in the seed, want 6", len(blocks))
	}
	return blocks
}
