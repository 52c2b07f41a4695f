package controller

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// module is this repository's module path.
const module = "github.com/flotilla-io/flotilla"

// TestNoControllerImportsAnother parses every Go file (tests included) of
// every package under internal/controller and fails when one imports
// another controller package: shared vocabulary belongs in a domain
// package, so that each controller can be read, changed and tested alone.
func TestNoControllerImportsAnother(t *testing.T) {
	entries, err := os.ReadDir(".")
	if err != nil {
		t.Fatal(err)
	}
	prefix := module + "/internal/controller/"
	checked := 0
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		own := prefix + e.Name()
		files, err := filepath.Glob(filepath.Join(e.Name(), "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			parsed, err := parser.ParseFile(token.NewFileSet(), f, nil, parser.ImportsOnly)
			if err != nil {
				t.Fatalf("parse %s: %v", f, err)
			}
			checked++
			for _, imp := range parsed.Imports {
				path, err := strconv.Unquote(imp.Path.Value)
				if err != nil {
					t.Fatalf("%s: bad import %s", f, imp.Path.Value)
				}
				if (strings.HasPrefix(path, prefix) || path == strings.TrimSuffix(prefix, "/")) && path != own {
					t.Errorf("%s imports %s: controllers must not import each other; move what they share to a domain package (internal/binding, internal/template, ...)", f, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no controller sources found: run from internal/controller")
	}
}

// TestEveryControllerUsesTheSharedQueueOptions fails when a controller is
// built without reconcilequeue.Options: the controller manager's /readyz
// counts the controllers whose workers have started through the queue
// those options make, and would never pass.
func TestEveryControllerUsesTheSharedQueueOptions(t *testing.T) {
	files, err := filepath.Glob("*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		built := strings.Count(string(src), "NewControllerManagedBy(") + strings.Count(string(src), "controller.New(")
		if opts := strings.Count(string(src), "reconcilequeue.Options("); opts < built {
			t.Errorf("%s builds %d controllers with %d reconcilequeue.Options: give each WithOptions(reconcilequeue.Options(workers))", f, built, opts)
		}
	}
}
