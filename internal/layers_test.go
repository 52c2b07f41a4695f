package internal

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/flotilla-io/flotilla"

// goFile is one parsed Go source file of the tree under internal/.
type goFile struct {
	path    string   // relative to internal/, e.g. "controller/propagation/detector/detector.go"
	pkg     string   // the package's directory relative to internal/
	test    bool     // a _test.go file
	imports []string // import paths; this module's have the module prefix cut ("internal/...")
}

// sources parses every Go file under internal/ for its imports.
func sources(t *testing.T) []goFile {
	t.Helper()
	var out []goFile
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && d.Name() == "testdata" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(p, ".go") {
			return nil
		}
		parsed, err := parser.ParseFile(token.NewFileSet(), p, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		f := goFile{path: p, pkg: filepath.ToSlash(filepath.Dir(p)), test: strings.HasSuffix(p, "_test.go")}
		for _, imp := range parsed.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				return err
			}
			if rest, ok := strings.CutPrefix(path, module+"/"); ok {
				path = rest
			}
			f.imports = append(f.imports, path)
		}
		out = append(out, f)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(out) < 100 {
		t.Fatalf("found %d sources: run from internal/", len(out))
	}
	return out
}

// under reports whether the import path imp lies in the tree internal/dir.
func under(imp, dir string) bool {
	p := "internal/" + dir
	return imp == p || strings.HasPrefix(imp, p+"/")
}

// controllerOf returns "group/name" for a package at or below
// controller/<group>/<name>, or "" for any other.
func controllerOf(pkg string) string {
	parts := strings.Split(pkg, "/")
	if len(parts) < 3 || parts[0] != "controller" {
		return ""
	}
	return parts[1] + "/" + parts[2]
}

// libraries are the packages under controller/ that run no controller of
// their own and serve several: controllers may import them.
var libraries = map[string]bool{"networking/loadbalancer": true}

// TestLayers fails when an import crosses the layers docs/architecture.md
// draws: controllers do not import each other (shared vocabulary lives in
// internal/model or internal/core), the pure cores in internal/core stay free
// of client-go and of the rest of the tree, the helpers in internal/test are
// imported by tests only, the processes in internal/app are assembled by
// internal/cli only, and internal/controllerkit (what every controller is
// built from) imports no controller, process, CLI or admission plugin.
func TestLayers(t *testing.T) {
	for _, f := range sources(t) {
		own := controllerOf(f.pkg)
		top := strings.Split(f.pkg, "/")[0]
		for _, imp := range f.imports {
			rel, inModule := strings.CutPrefix(imp, "internal/")
			other := ""
			if inModule {
				other = controllerOf(rel)
			}
			switch {
			case own != "" && other != "" && other != own && !libraries[other]:
				t.Errorf("%s imports %s: controllers must not import each other; move what they share to internal/model or internal/core", f.path, imp)
			case top == "core" && !coreMayImport(imp):
				t.Errorf("%s imports %s: the pure cores under internal/core stay free of client-go, controller-runtime and the rest of the tree (internal/model, internal/interpreter/native and internal/core only)", f.path, imp)
			case !f.test && top != "test" && under(imp, "test"):
				t.Errorf("%s imports %s: internal/test holds helpers for tests only", f.path, imp)
			case top != "app" && top != "cli" && under(imp, "app"):
				t.Errorf("%s imports %s: the processes under internal/app are assembled by internal/cli only", f.path, imp)
			case top == "controllerkit" && (under(imp, "controller") || under(imp, "app") || under(imp, "cli") || under(imp, "admission")):
				t.Errorf("%s imports %s: internal/controllerkit is what controllers are built from and must not depend on them", f.path, imp)
			}
		}
	}
}

// coreMayImport reports whether a package under internal/core may import
// imp: nothing that talks to an API server (client-go, controller-runtime)
// and, of this tree, only internal/model, internal/interpreter/native (the
// built-in interpreter is pure too) and, from tests, internal/test.
func coreMayImport(imp string) bool {
	switch {
	case strings.HasPrefix(imp, "k8s.io/client-go"), strings.HasPrefix(imp, "sigs.k8s.io/controller-runtime"):
		return false
	case strings.HasPrefix(imp, "internal/"):
		return under(imp, "core") || under(imp, "model") || under(imp, "interpreter/native") || under(imp, "test")
	}
	return true
}

// TestEveryControllerUsesTheSharedQueueOptions fails when a controller is
// built without queue.Options: the controller manager's /readyz counts the
// controllers whose workers have started through the queue those options
// make, and would never pass.
func TestEveryControllerUsesTheSharedQueueOptions(t *testing.T) {
	for _, f := range sources(t) {
		if f.test || controllerOf(f.pkg) == "" {
			continue
		}
		src, err := os.ReadFile(f.path)
		if err != nil {
			t.Fatal(err)
		}
		built := strings.Count(string(src), "NewControllerManagedBy(") + strings.Count(string(src), "controller.New(")
		if opts := strings.Count(string(src), "queue.Options("); opts < built {
			t.Errorf("%s builds %d controllers with %d queue.Options: give each WithOptions(queue.Options(mgr, workers))", f.path, built, opts)
		}
	}
}
