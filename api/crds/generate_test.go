package crds_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// TestGeneratedCRDsAreCurrent regenerates the Karmada CRDs from the Go types with the pinned
// controller-gen and compares them with the embedded YAML, so that a change to the types
// without `go generate ./api/...` fails here rather than in a running control plane.
// Skipped with -short (it builds controller-gen on first use).
func TestGeneratedCRDsAreCurrent(t *testing.T) {
	if testing.Short() {
		t.Skip("regenerating CRDs with controller-gen is skipped in -short mode")
	}
	apiDir := filepath.Join(moduleRoot(t), "api")
	out := t.TempDir()
	cmd := exec.Command("go", "tool", "controller-gen", "crd:crdVersions=v1", "paths=./...", "output:crd:artifacts:config="+out)
	cmd.Dir = apiDir
	if output, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("controller-gen failed: %v\n%s", err, output)
	}
	generated, err := filepath.Glob(filepath.Join(out, "*.yaml"))
	if err != nil || len(generated) == 0 {
		t.Fatalf("controller-gen wrote no CRDs to %s (%v)", out, err)
	}
	for _, file := range generated {
		name := filepath.Base(file)
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		got, err := os.ReadFile(filepath.Join(apiDir, "crds", "bases", name))
		if err != nil {
			t.Errorf("%s is not in api/crds/bases; run go generate ./api/...", name)
			continue
		}
		if !bytes.Equal(got, want) {
			t.Errorf("api/crds/bases/%s is out of date with the Go types; run go generate ./api/...", name)
		}
	}
}
