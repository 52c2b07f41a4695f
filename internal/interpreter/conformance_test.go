package interpreter

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/interpreter/lua"
	"github.com/flotilla-io/flotilla/internal/interpreter/thirdparty"
	"github.com/flotilla-io/flotilla/internal/test/reftest"
)

// upstreamDir returns Karmada's interpreter bundles with their test cases (../shared beside the
// checkout); without them the test is skipped (and fails under CI).
func upstreamDir(t *testing.T) string {
	return reftest.Shared(t, "reference", "interpreter-customizations")
}

type kindDir struct {
	dir   string // relative: group/version/Kind
	cases map[string][]Case
}

func readKindDirs(t *testing.T, fsys fs.FS) []kindDir {
	t.Helper()
	var out []kindDir
	err := fs.WalkDir(fsys, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.IsDir() || d.Name() != "testdata" {
			return err
		}
		kd := kindDir{dir: filepath.Dir(p), cases: map[string][]Case{}}
		files, _ := fs.ReadDir(fsys, p)
		for _, f := range files {
			data, err := fs.ReadFile(fsys, filepath.Join(p, f.Name()))
			if err != nil {
				return err
			}
			cases, err := ReadCases(data)
			if err != nil {
				t.Errorf("%s/%s: %v", p, f.Name(), err)
				continue
			}
			kd.cases[f.Name()] = cases
		}
		out = append(out, kd)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func runCases(t *testing.T, in *Interpreter, kd kindDir) {
	t.Helper()
	for file, cases := range kd.cases {
		for _, c := range cases {
			t.Run(strings.TrimSuffix(file, ".yaml")+"/"+c.Name, func(t *testing.T) {
				got, err := in.Run(context.Background(), c)
				if err != nil {
					t.Fatalf("%s: %v", c.Operation, err)
				}
				if d := Compare(c, got); d != "" {
					t.Errorf("%s:\n%s", c.Operation, d)
				}
			})
		}
	}
}

// TestBundledCustomizations runs the repository's own cases for every bundled kind.
func TestBundledCustomizations(t *testing.T) {
	if len(thirdparty.Customizations()) == 0 {
		t.Skip("no bundled customizations yet")
	}
	sub, err := fs.Sub(thirdparty.Files(), "customizations")
	if err != nil {
		t.Fatal(err)
	}
	in := New(nil)
	for _, kd := range readKindDirs(t, sub) {
		t.Run(kd.dir, func(t *testing.T) { runCases(t, in, kd) })
	}
}

// TestUpstreamCasesWithBundledCustomizations runs Karmada's test cases against Flotilla's own
// bundled scripts: every kind Karmada bundles must be covered, with the same results.
func TestUpstreamCasesWithBundledCustomizations(t *testing.T) {
	upstream := upstreamDir(t)
	in := New(nil)
	for _, kd := range readKindDirs(t, os.DirFS(upstream)) {
		t.Run(kd.dir, func(t *testing.T) { runCases(t, in, kd) })
	}
}

// TestUpstreamScriptsRunUnchanged runs Karmada's own scripts on Flotilla's Lua engine and
// helper library against their test cases: scripts users bring from Karmada must work.
func TestUpstreamScriptsRunUnchanged(t *testing.T) {
	upstream := upstreamDir(t)
	for _, kd := range readKindDirs(t, os.DirFS(upstream)) {
		t.Run(kd.dir, func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(upstream, kd.dir, "customizations.yaml"))
			if err != nil {
				t.Fatal(err)
			}
			var c configv1alpha1.ResourceInterpreterCustomization
			if err := yaml.Unmarshal(data, &c); err != nil {
				t.Fatal(err)
			}
			if errs := ValidateCustomization(&c); len(errs) > 0 {
				t.Errorf("Karmada's script is refused at admission: %v", errs)
			}
			in := New(nil)
			in.SetCustomizations([]configv1alpha1.ResourceInterpreterCustomization{c})
			runCases(t, in, kd)
		})
	}
}

// TestBundledScriptsPassTheAdmissionCheck holds the bundled scripts to what a user's
// customization must pass when it is applied.
func TestBundledScriptsPassTheAdmissionCheck(t *testing.T) {
	for _, c := range thirdparty.Customizations() {
		for op, fn := range lua.FunctionName {
			if s := lua.Script(&c.Spec.Customizations, op); s != "" {
				if err := lua.Check(s, fn); err != nil {
					t.Errorf("%s %s: %v", c.Name, op, err)
				}
			}
		}
		if c.Spec.Target.APIVersion == "" || c.Spec.Target.Kind == "" || c.Name == "" {
			t.Errorf("%s: needs a name and a target apiVersion and kind", c.Name)
		}
	}
}
