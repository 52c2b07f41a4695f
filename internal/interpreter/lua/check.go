package lua

import (
	"fmt"
	"reflect"
	"sort"
	"strings"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/ast"
	"github.com/yuin/gopher-lua/parse"
)

// Check validates a script before it is stored: it must parse, define the global function fn,
// and call no function that is neither defined in the script nor provided (Lua's libraries as
// opened by the Engine). Errors name the line, as "line N: ...". It does not run the script.
func Check(script, fn string) error {
	chunk, err := parse.Parse(strings.NewReader(script), "script")
	if err != nil {
		return syntaxError(err, script)
	}
	if _, err := glua.Compile(chunk, "script"); err != nil {
		return syntaxError(err, script)
	}
	w := &walker{defined: map[string]bool{}}
	w.stmts(chunk)
	if !w.globals[fn] {
		return fmt.Errorf("the script does not define the global function %s", fn)
	}
	sort.Slice(w.calls, func(i, j int) bool { return w.calls[i].line < w.calls[j].line })
	for _, c := range w.calls {
		if c.module != "" && c.module != "kube" {
			return fmt.Errorf("line %d: module %q is not available; scripts may require only \"kube\"", c.line, c.module)
		}
		if c.table != "" {
			switch {
			case w.kube[c.table]:
				if !kubeFunctions[c.name] {
					return fmt.Errorf("line %d: the kube library has no function %s", c.line, c.name)
				}
			case !w.defined[c.table] && !w.globals[c.table] && !provided[c.table]:
				return fmt.Errorf("line %d: call to %s.%s, but %s is not defined (the io, debug and file functions are not available)", c.line, c.table, c.name, c.table)
			}
			continue
		}
		if !w.defined[c.name] && !w.globals[c.name] && !provided[c.name] {
			return fmt.Errorf("line %d: call to undefined function %s", c.line, c.name)
		}
	}
	return nil
}

// kubeFunctions are the functions of the kube library.
var kubeFunctions = map[string]bool{"accuratePodRequirements": true, "getPodDependencies": true, "getResourceQuantity": true, "resourceAdd": true}

// provided are the global names the Engine's Lua states define.
var provided = func() map[string]bool {
	L := glua.NewState(glua.Options{SkipOpenLibs: true})
	defer L.Close()
	openLibs(L)
	out := map[string]bool{}
	L.G.Global.ForEach(func(k, v glua.LValue) {
		if v != glua.LNil {
			out[k.String()] = true
		}
	})
	return out
}()

// namedCall is a call of a plain name, of table.name, or require(module).
type namedCall struct {
	name, table, module string
	line                int
}

// walker collects the names a script declares (locals, parameters, loop variables: scope is
// ignored, which errs on the side of accepting) and assigns as globals, and the calls of plain
// names.
type walker struct {
	defined map[string]bool
	globals map[string]bool
	// kube are the locals bound to require("kube").
	kube  map[string]bool
	calls []namedCall
}

func (w *walker) global(e ast.Expr) {
	if id, ok := e.(*ast.IdentExpr); ok {
		if w.globals == nil {
			w.globals = map[string]bool{}
		}
		w.globals[id.Value] = true
	}
}

func (w *walker) stmts(list []ast.Stmt) {
	for _, s := range list {
		w.node(reflect.ValueOf(s))
	}
}

func (w *walker) node(v reflect.Value) {
	if !v.IsValid() {
		return
	}
	switch v.Kind() {
	case reflect.Interface, reflect.Pointer:
		if v.IsNil() {
			return
		}
		switch n := v.Interface().(type) {
		case *ast.LocalAssignStmt:
			for i, name := range n.Names {
				w.defined[name] = true
				if i < len(n.Exprs) && requires(n.Exprs[i]) == "kube" {
					if w.kube == nil {
						w.kube = map[string]bool{}
					}
					w.kube[name] = true
				}
			}
		case *ast.GenericForStmt:
			for _, name := range n.Names {
				w.defined[name] = true
			}
		case *ast.NumberForStmt:
			w.defined[n.Name] = true
		case *ast.ParList:
			for _, name := range n.Names {
				w.defined[name] = true
			}
		case *ast.AssignStmt:
			for _, l := range n.Lhs {
				w.global(l)
			}
		case *ast.FuncDefStmt:
			if n.Name != nil && n.Name.Method == "" {
				w.global(n.Name.Func)
			}
		case *ast.FuncCallExpr:
			if id, ok := n.Func.(*ast.IdentExpr); ok && n.Receiver == nil {
				w.calls = append(w.calls, namedCall{name: id.Value, line: n.Line(), module: requires(n)})
			}
			if attr, ok := n.Func.(*ast.AttrGetExpr); ok && n.Receiver == nil {
				obj, ok1 := attr.Object.(*ast.IdentExpr)
				key, ok2 := attr.Key.(*ast.StringExpr)
				if ok1 && ok2 {
					w.calls = append(w.calls, namedCall{table: obj.Value, name: key.Value, line: n.Line()})
				}
			}
		}
		w.node(v.Elem())
	case reflect.Struct:
		for i := range v.NumField() {
			if v.Type().Field(i).IsExported() {
				w.node(v.Field(i))
			}
		}
	case reflect.Slice:
		for i := range v.Len() {
			w.node(v.Index(i))
		}
	}
}

// requires returns the module of a require("module") call, "" for anything else.
func requires(e ast.Expr) string {
	call, ok := e.(*ast.FuncCallExpr)
	if !ok || call.Receiver != nil || len(call.Args) != 1 {
		return ""
	}
	if id, ok := call.Func.(*ast.IdentExpr); !ok || id.Value != "require" {
		return ""
	}
	if s, ok := call.Args[0].(*ast.StringExpr); ok {
		return s.Value
	}
	return ""
}
