package internal

import (
	"go/ast"
	"go/parser"
	"go/printer"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneReconcileShape checks, in every controller's production code, the parts of the one
// reconcile shape (docs/architecture.md) that the source shows:
//   - the time is told through controllerkit/reconciler (a Clock field, reconciler.Now or
//     reconciler.Clock): no nil check of a clock of its own, no metav1.Now();
//   - a result that asks for a re-check is never returned together with an error, which
//     controller-runtime would drop (reconciler.Result sorts the two);
//   - no package-level mutable state: no package variable that is a map or holds a lock or
//     an atomic (such state belongs to a Reconciler, which the manager owns).
func TestOneReconcileShape(t *testing.T) {
	fset := token.NewFileSet()
	checked := 0
	err := filepath.WalkDir("controller", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, p, nil, 0)
		if err != nil {
			return err
		}
		checked++
		for _, problem := range shapeProblems(fset, f) {
			t.Errorf("%s: %s", problem.pos, problem.what)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 30 {
		t.Fatalf("only %d controller files found under internal/controller", checked)
	}
}

type shapeProblem struct {
	pos  token.Position
	what string
}

// shapeProblems lists where f departs from the reconcile shape.
func shapeProblems(fset *token.FileSet, f *ast.File) []shapeProblem {
	var out []shapeProblem
	add := func(n ast.Node, what string) { out = append(out, shapeProblem{fset.Position(n.Pos()), what}) }
	text := func(n ast.Node) string {
		var b strings.Builder
		_ = printer.Fprint(&b, fset, n)
		return b.String()
	}
	for _, decl := range f.Decls {
		g, ok := decl.(*ast.GenDecl)
		if !ok || g.Tok != token.VAR {
			continue
		}
		for _, spec := range g.Specs {
			vs := spec.(*ast.ValueSpec)
			var parts []string
			if vs.Type != nil {
				parts = append(parts, text(vs.Type))
			}
			for _, v := range vs.Values {
				if _, isFunc := v.(*ast.CallExpr); !isFunc {
					parts = append(parts, text(v))
				}
			}
			kind := strings.Join(parts, " ")
			if strings.HasPrefix(kind, "map[") || strings.Contains(kind, "sync.") || strings.Contains(kind, "atomic.") {
				add(vs, "package-level mutable state "+vs.Names[0].Name+": keep it in the Reconciler")
			}
		}
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CallExpr:
			if text(n.Fun) == "metav1.Now" {
				add(n, "metav1.Now(): tell the time with reconciler.Now(r.Clock)")
			}
		case *ast.BinaryExpr:
			if (n.Op == token.EQL || n.Op == token.NEQ) && strings.HasSuffix(text(n.X), "Clock") && text(n.Y) == "nil" {
				add(n, "a clock's own nil check: use reconciler.Clock or reconciler.Now")
			}
		case *ast.ReturnStmt:
			if len(n.Results) != 2 {
				return true
			}
			lit, ok := n.Results[0].(*ast.CompositeLit)
			if ok && strings.HasSuffix(text(lit.Type), "Result") && len(lit.Elts) > 0 && text(n.Results[1]) != "nil" {
				add(n, "a re-check returned with an error, which controller-runtime drops: return reconciler.Result(res, err)")
			}
		}
		return true
	})
	return out
}

// TestShapeProblemsAreFound shows that the checks of TestOneReconcileShape catch what they
// are for.
func TestShapeProblemsAreFound(t *testing.T) {
	src := `package x
var cache = map[string]int{}
var guarded struct{ sync.Mutex; n int }
var op = eventrecord.Operation{Succeed: "A"}
func (r *R) Reconcile() (ctrl.Result, error) {
	now := metav1.Now()
	if r.Clock == nil {
		return ctrl.Result{}, nil
	}
	return ctrl.Result{RequeueAfter: time.Second}, err
}`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "x.go", src, 0)
	if err != nil {
		t.Fatal(err)
	}
	got := shapeProblems(fset, f)
	if len(got) != 5 {
		t.Errorf("found %d problems, want 5 (two globals, metav1.Now, a clock nil check, a re-check with an error): %v", len(got), got)
	}
}
