// Package lua runs the Lua scripts of Karmada's ResourceInterpreterCustomization
// (config.karmada.io/v1alpha1) with github.com/yuin/gopher-lua.
//
// Each customization rule is one script defining one global function, named as in Karmada:
//
//	rule (spec.customizations.*)   operation             function
//	replicaResource                InterpretReplica      GetReplicas(obj) -> replicas, requirements
//	replicaRevision                ReviseReplica         ReviseReplica(obj, replicas) -> obj
//	retention                      Retain                Retain(desiredObj, observedObj) -> obj
//	statusReflection               InterpretStatus       ReflectStatus(observedObj) -> status
//	statusAggregation              AggregateStatus       AggregateStatus(desiredObj, statusItems) -> obj
//	healthInterpretation           InterpretHealth       InterpretHealth(observedObj) -> bool
//	dependencyInterpretation       InterpretDependency   GetDependencies(desiredObj) -> {dependency}
//	componentResource              InterpretComponent    GetComponents(desiredObj) -> {component}
//
// Scripts may `require("kube")` for the helper library Karmada provides (see kube.go), and use
// Lua's base, table, string and math libraries and os.date/os.time/os.clock/os.difftime.
//
// An Engine compiles each distinct script once and runs it on a pool of Lua states (a state is
// not safe for concurrent use). Every call has a time budget and an allocation budget: a script
// that loops forever or allocates without bound fails that call with ErrBudget and never stalls
// the caller beyond the budget.
package lua

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"time"

	glua "github.com/yuin/gopher-lua"
	"github.com/yuin/gopher-lua/parse"
)

// Defaults of Options.
const (
	// DefaultTimeout bounds one script call.
	DefaultTimeout = 500 * time.Millisecond
	// DefaultMemoryBudget bounds what one script call may allocate, in bytes.
	DefaultMemoryBudget = 256 << 20
)

// ErrBudget is wrapped by the error of a call that ran out of its time or memory budget.
var ErrBudget = errors.New("script exceeded its budget")

// Options tune an Engine. Zero values take the defaults.
type Options struct {
	// Timeout bounds one call (DefaultTimeout).
	Timeout time.Duration
	// MemoryBudget bounds the bytes one call may allocate (DefaultMemoryBudget). It is measured
	// as the process's heap allocation while the call runs, sampled every few milliseconds, so
	// it is approximate; normal calls finish long before the first sample.
	MemoryBudget uint64
	// PoolSize is how many idle Lua states are kept (2 × GOMAXPROCS).
	PoolSize int
}

// Engine compiles and runs customization scripts. It is safe for concurrent use.
type Engine struct {
	opts  Options
	idle  chan *state
	mu    sync.Mutex
	progs map[string]*program // by script text

	watchMu sync.Mutex
	running map[*call]struct{}
	watchOn bool
}

// program is one compiled script.
type program struct {
	proto *glua.FunctionProto
	err   error
}

// state is a pooled Lua state with one environment per program, so that scripts defining the
// same global names never see each other's.
type state struct {
	L    *glua.LState
	envs map[*glua.FunctionProto]*glua.LTable
}

// call is one running script call, watched for its budget.
type call struct {
	cancel  context.CancelFunc
	started time.Time
	allocs  uint64
	over    bool
}

// New returns an Engine.
func New(opts Options) *Engine {
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.MemoryBudget == 0 {
		opts.MemoryBudget = DefaultMemoryBudget
	}
	if opts.PoolSize <= 0 {
		opts.PoolSize = 2 * runtime.GOMAXPROCS(0)
	}
	return &Engine{opts: opts, idle: make(chan *state, opts.PoolSize), progs: map[string]*program{}, running: map[*call]struct{}{}}
}

// compile returns script's program, compiling it the first time it is seen. The cache is keyed
// by the script text, so an edited customization compiles once and old texts age out with
// forget.
func (e *Engine) compile(script string) (*program, error) {
	e.mu.Lock()
	p, ok := e.progs[script]
	e.mu.Unlock()
	if ok {
		return p, p.err
	}
	proto, err := Compile(script)
	p = &program{proto: proto, err: err}
	e.mu.Lock()
	if len(e.progs) > 4096 { // customizations are few; a runaway cache is a bug elsewhere
		clear(e.progs)
	}
	e.progs[script] = p
	e.mu.Unlock()
	return p, err
}

// Compile parses and compiles one script. Its error names the line, as "line N: ...".
func Compile(script string) (*glua.FunctionProto, error) {
	chunk, err := parse.Parse(strings.NewReader(script), "script")
	if err != nil {
		return nil, syntaxError(err, script)
	}
	proto, err := glua.Compile(chunk, "script")
	if err != nil {
		return nil, syntaxError(err, script)
	}
	return proto, nil
}

// syntaxError rewrites gopher-lua's "script line:N(column:M) near 'x': msg" as
// "line N: near 'x': msg", and "script at EOF: msg" as "line N: at the end of the script: msg"
// with N the script's last line.
func syntaxError(err error, script string) error {
	msg := err.Error()
	if rest, ok := strings.CutPrefix(msg, "script at EOF:"); ok {
		last := strings.Count(strings.TrimRight(script, "\n"), "\n") + 1
		return fmt.Errorf("line %d: at the end of the script: %s", last, strings.Join(strings.Fields(rest), " "))
	}
	if i := strings.Index(msg, "line:"); i >= 0 {
		rest := msg[i+len("line:"):]
		n := strings.IndexFunc(rest, func(r rune) bool { return r < '0' || r > '9' })
		if n > 0 {
			line := rest[:n]
			rest = rest[n:]
			if j := strings.Index(rest, ")"); strings.HasPrefix(rest, "(") && j >= 0 {
				rest = rest[j+1:]
			}
			return fmt.Errorf("line %s: %s", line, strings.Join(strings.Fields(rest), " "))
		}
	}
	return errors.New(strings.TrimSpace(msg))
}

func (e *Engine) get() *state {
	select {
	case s := <-e.idle:
		return s
	default:
	}
	L := glua.NewState(glua.Options{SkipOpenLibs: true, CallStackSize: 256, RegistrySize: 1024, RegistryMaxSize: 64 * 1024})
	openLibs(L)
	return &state{L: L, envs: map[*glua.FunctionProto]*glua.LTable{}}
}

func (e *Engine) put(s *state) {
	select {
	case e.idle <- s:
	default:
		s.L.Close()
	}
}

// openLibs opens the libraries scripts may use: base, package (for require), table, string,
// math, and the harmless part of os. io, debug, channel and coroutine are left out, and so are
// the base functions that read files. string.rep and the pattern functions (find, match, gmatch,
// gsub; pattern.go) are replaced by versions that keep to the call's budget.
func openLibs(L *glua.LState) {
	for _, lib := range []struct {
		name string
		open glua.LGFunction
	}{
		{glua.LoadLibName, glua.OpenPackage},
		{glua.BaseLibName, glua.OpenBase},
		{glua.TabLibName, glua.OpenTable},
		{glua.StringLibName, glua.OpenString},
		{glua.MathLibName, glua.OpenMath},
		{glua.OsLibName, glua.OpenOs},
	} {
		L.Push(L.NewFunction(lib.open))
		L.Push(glua.LString(lib.name))
		L.Call(1, 0)
	}
	for _, name := range []string{"dofile", "loadfile", "load", "loadstring"} {
		L.SetGlobal(name, glua.LNil)
	}
	if os, ok := L.GetGlobal("os").(*glua.LTable); ok {
		keep := map[string]bool{"date": true, "time": true, "clock": true, "difftime": true}
		os.ForEach(func(k, _ glua.LValue) {
			if !keep[k.String()] {
				os.RawSetString(k.String(), glua.LNil)
			}
		})
	}
	if str, ok := L.GetGlobal("string").(*glua.LTable); ok {
		str.RawSetString("rep", L.NewFunction(stringRep))
		if find, ok := str.RawGetString("find").(*glua.LFunction); ok && find.IsG {
			for name, fn := range patternFunctions(find.GFunction) {
				str.RawSetString(name, L.NewFunction(fn))
			}
			str.RawSetString("gfind", str.RawGetString("gmatch"))
		}
	}
	L.PreloadModule("kube", openKube)
}

// maxString bounds what string.rep may build, so that one call cannot allocate gigabytes before
// the watchdog samples.
const maxString = 16 << 20

// stringRep is string.rep(s, n) with its result bounded by maxString.
func stringRep(L *glua.LState) int {
	s := L.CheckString(1)
	n := L.CheckInt(2)
	if n <= 0 {
		L.Push(glua.LString(""))
		return 1
	}
	if len(s) > 0 && n > maxString/len(s) {
		L.RaiseError("string.rep: the result would exceed %d MiB", maxString>>20)
	}
	L.Push(glua.LString(strings.Repeat(s, n)))
	return 1
}

// env runs the program's top level in its environment on this state and returns it. As in
// Karmada, the top level runs before every call (on a pooled state, so globals a function
// assigns may outlive the call); unlike Karmada, each program has its own globals, holding a
// copy of the standard ones.
func (s *state) env(p *program) (*glua.LTable, error) {
	env, ok := s.envs[p.proto]
	if !ok {
		env = s.L.CreateTable(0, 48)
		s.L.G.Global.ForEach(func(k, v glua.LValue) { env.RawSet(k, v) })
		env.RawSetString("_G", env)
		if len(s.envs) > 256 {
			clear(s.envs)
		}
		s.envs[p.proto] = env
	}
	fn := s.L.NewFunctionFromProto(p.proto)
	fn.Env = env
	s.L.Push(fn)
	if err := s.L.PCall(0, 0, nil); err != nil {
		return nil, runtimeError(err)
	}
	return env, nil
}

// Call runs function fn of script with args and returns its nret results, converted by the
// caller's decode while the state is still held. It fails when the script does not compile,
// does not define fn, raises an error, or exceeds its budget (ErrBudget).
func (e *Engine) Call(ctx context.Context, script, fn string, nret int, decode func(L *glua.LState, results []glua.LValue) error, args ...func(L *glua.LState) glua.LValue) error {
	p, err := e.compile(script)
	if err != nil {
		return err
	}
	s := e.get()
	ok := false
	defer func() {
		if ok {
			e.put(s)
		} else {
			s.L.Close() // a state that failed mid-call may hold half-built frames
		}
	}()
	cctx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	c := e.watch(cancel)
	defer e.unwatch(c)
	s.L.SetContext(cctx)
	defer s.L.RemoveContext()

	env, err := s.env(p)
	if err != nil {
		return e.budget(c, cctx, err)
	}
	f, isFn := env.RawGetString(fn).(*glua.LFunction)
	if !isFn {
		ok = true
		return fmt.Errorf("the script does not define function %s", fn)
	}
	s.L.Push(f)
	for _, a := range args {
		s.L.Push(a(s.L))
	}
	if err := s.L.PCall(len(args), nret, nil); err != nil {
		return e.budget(c, cctx, runtimeError(err))
	}
	results := make([]glua.LValue, nret)
	for i := range nret {
		results[i] = s.L.Get(-nret + i)
	}
	s.L.Pop(nret)
	ok = true
	return decode(s.L, results)
}

// budget turns the error of a call cut short by its watchdog into ErrBudget.
func (e *Engine) budget(c *call, ctx context.Context, err error) error {
	e.watchMu.Lock()
	over := c.over
	e.watchMu.Unlock()
	switch {
	case over:
		return fmt.Errorf("%w: allocated more than %d MiB", ErrBudget, e.opts.MemoryBudget>>20)
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return fmt.Errorf("%w: ran longer than %s", ErrBudget, e.opts.Timeout)
	}
	return err
}

// runtimeError shortens gopher-lua's error to its first line plus position.
func runtimeError(err error) error {
	var le *glua.ApiError
	if errors.As(err, &le) {
		msg := le.Object.String()
		msg = strings.TrimPrefix(msg, "script:")
		if i := strings.Index(msg, "\nstack traceback"); i >= 0 {
			msg = msg[:i]
		}
		if n := strings.IndexFunc(msg, func(r rune) bool { return r < '0' || r > '9' }); n > 0 && msg[n] == ':' {
			msg = "line " + msg[:n] + ":" + msg[n+1:]
		}
		return errors.New(strings.TrimSpace(msg))
	}
	return err
}

var allocSample = []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}

func heapAllocs() uint64 {
	s := []metrics.Sample{allocSample[0]}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}

// watch registers a call with the memory watchdog, starting it if needed.
func (e *Engine) watch(cancel context.CancelFunc) *call {
	c := &call{cancel: cancel, started: time.Now(), allocs: heapAllocs()}
	e.watchMu.Lock()
	e.running[c] = struct{}{}
	if !e.watchOn {
		e.watchOn = true
		go e.watchdog()
	}
	e.watchMu.Unlock()
	return c
}

func (e *Engine) unwatch(c *call) {
	e.watchMu.Lock()
	delete(e.running, c)
	e.watchMu.Unlock()
}

// watchdog samples the heap every 5 ms while calls run and cancels a call that has run for over
// 10 ms while the process allocated more than the budget since it started. It exits when no
// call runs.
func (e *Engine) watchdog() {
	t := time.NewTicker(5 * time.Millisecond)
	defer t.Stop()
	for range t.C {
		now := heapAllocs()
		e.watchMu.Lock()
		if len(e.running) == 0 {
			e.watchOn = false
			e.watchMu.Unlock()
			return
		}
		for c := range e.running {
			if !c.over && time.Since(c.started) > 10*time.Millisecond && now-c.allocs > e.opts.MemoryBudget {
				c.over = true
				c.cancel()
			}
		}
		e.watchMu.Unlock()
	}
}
