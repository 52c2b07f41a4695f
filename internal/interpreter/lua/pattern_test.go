package lua

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	glua "github.com/yuin/gopher-lua"
)

// patternProbe calls every pattern function on its arguments (subject, pattern, replacement,
// init, limit) and returns one line per call: "error" for a call that failed, else the types
// and values it returned.
const patternProbe = `
local s, p, r, i, n = ...
local out = {}
local function put(ok, ...)
  if not ok then out[#out + 1] = "error" return end
  local t = {tostring(select('#', ...))}
  for k = 1, select('#', ...) do
    local v = select(k, ...)
    t[#t + 1] = type(v) .. ":" .. tostring(v)
  end
  out[#out + 1] = table.concat(t, ",")
end
put(pcall(string.find, s, p, i))
put(pcall(string.find, s, p))
put(pcall(string.match, s, p, i))
put(pcall(string.gsub, s, p, r, n))
put(pcall(string.gsub, s, p, r))
put(pcall(string.gsub, s, p, function(...) return table.concat({...}, "|") end))
put(pcall(string.gsub, s, p, function(a) if a == "" then return false end return 7 end))
put(pcall(string.gsub, s, p, {a = "A", b = true, [1] = "one", [2] = 2}))
put(pcall(function()
  local t = {}
  for a, b in string.gmatch(s, p) do t[#t + 1] = tostring(a) .. "/" .. tostring(b) end
  return table.concat(t, ";")
end))
return table.concat(out, "\n")
`

// runProbe runs patternProbe on L, within ctx when it is not nil.
func runProbe(t *testing.T, L *glua.LState, ctx context.Context, s, p, r string, i, n int) string {
	t.Helper()
	if ctx != nil {
		L.SetContext(ctx)
		defer L.RemoveContext()
	}
	fn, err := L.LoadString(patternProbe)
	if err != nil {
		t.Fatal(err)
	}
	L.Push(fn)
	for _, v := range []glua.LValue{glua.LString(s), glua.LString(p), glua.LString(r), glua.LNumber(i), glua.LNumber(n)} {
		L.Push(v)
	}
	if err := L.PCall(5, 1, nil); err != nil {
		return "probe failed: " + err.Error()
	}
	out := L.Get(-1).String()
	L.Pop(1)
	return out
}

// FuzzPatternFunctions compares the budgeted string.find, match, gmatch and gsub with
// gopher-lua's own on small subjects and patterns: the same values, and an error where
// gopher-lua fails. Inputs the budgeted functions cannot finish within 200 ms are not given to
// gopher-lua's, which would not finish either.
func FuzzPatternFunctions(f *testing.F) {
	for _, seed := range []struct {
		s, p, r string
		i, n    int8
	}{
		{"hello world", "o", "0", 1, -1},
		{"hello world", "(o)(r?)", "[%1%2%0%%]", 5, 1},
		{"key = value", "^(%w+)%s*=%s*(%w+)$", "%2=%1", 1, -1},
		{"  trim me  ", "^%s*(.-)%s*$", "%1", 1, -1},
		{"THE (quick) fox", "%((%a+)%)", "<%1>", -3, 2},
		{"f(a(b)c)d", "%b()", "", 1, -1},
		{"abcabc", "()b()", "%1-%2", 1, -1},
		{"aaa", "a-", "x", 1, -1},
		{"aaa", "a*", "-", 1, 0},
		{"aaa", "", "-", 2, -1},
		{"abab", "(ab)%1", "X", 1, -1},
		{"abab", "%1(ab)", "X", 1, -1},
		{"a.b-c", "[%.%-]", "_", 1, -1},
		{"a]b-c^d", "[]^-]", "_", 1, -1},
		{"a-z A-Z", "[a-c-e]", "_", 1, -1},
		{"x%y", "%", "", 1, -1},
		{"x$y", "x$", "", 1, -1},
		{"abc", "[", "", 1, -1},
		{"abc", "(a", "", 1, -1},
		{"abc", "a)", "", 1, -1},
		{"abc", "%0", "", 1, -1},
		{"abc", "a", "%2", 1, -1},
		{"abc", "**+?", "", 1, -1},
		{"\x00\x01\xff", "%z%c[\x80-\xff]", "%%", 1, -1},
		{"THE END", "%u+%A%U", "", 1, -1},
		{"2024-01-02", "(%d+)-(%d+)-(%d+)", "%3/%2/%1", 1, -1},
		{"abc", "%f[%w]", "", 1, -1},
	} {
		f.Add(seed.s, seed.p, seed.r, seed.i, seed.n)
	}
	f.Fuzz(func(t *testing.T, s, p, r string, i, n int8) {
		if len(s) > 256 || len(p) > 48 || len(r) > 48 {
			return
		}
		ours := glua.NewState(glua.Options{SkipOpenLibs: true})
		defer ours.Close()
		openLibs(ours)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		got := runProbe(t, ours, ctx, s, p, r, int(i), int(n))
		if ctx.Err() != nil {
			return
		}
		theirs := glua.NewState()
		defer theirs.Close()
		want := runProbe(t, theirs, nil, s, p, r, int(i), int(n))
		if got != want {
			t.Fatalf("string %q, pattern %q, replacement %q, init %d, limit %d:\ngopher-lua:\n%s\nours:\n%s", s, p, r, i, n, want, got)
		}
	})
}

// The pattern functions stop once the call's budget is spent, where gopher-lua's backtrack for
// hours; and gsub with many matches is linear.
func TestPatternFunctionsKeepToTheBudget(t *testing.T) {
	e := New(Options{Timeout: 100 * time.Millisecond})
	for name, script := range map[string]string{
		"backtracking": `function InterpretHealth(o) return string.find(string.rep("a", 300), "a-a-a-a-a-a-b") ~= nil end`,
		"quadratic":    `function InterpretHealth(o) return string.match(string.rep("a", 100000), ".-b") ~= nil end`,
		"gmatch":       `function InterpretHealth(o) for a in string.gmatch(string.rep("a", 5000), "(a-)(a-)b") do end return true end`,
		"gsub":         `function InterpretHealth(o) return (string.gsub(string.rep("ab", 1000000), "(a*)(b*)(.-)c", "%3")) ~= nil end`,
		"method":       `function InterpretHealth(o) return (string.rep("a", 300)):find("a-a-a-a-a-a-b") ~= nil end`,
	} {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := e.InterpretHealth(context.Background(), script, obj(map[string]any{}))
			if !errors.Is(err, ErrBudget) {
				t.Errorf("error %v does not wrap ErrBudget", err)
			}
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
	// Linear, not quadratic: 300,000 matches in well under a budget that a quadratic gsub
	// (about 10^11 steps) could never meet, even under the race detector.
	linear := New(Options{Timeout: 10 * time.Second})
	healthy, err := linear.InterpretHealth(context.Background(),
		`function InterpretHealth(o) local s, n = string.gsub(string.rep("a", 300000), "a", "bb") return n == 300000 and #s == 600000 end`, obj(map[string]any{}))
	if err != nil || !healthy {
		t.Errorf("gsub with 300000 matches: %v, %v", healthy, err)
	}
}

// A result that reaches one table many times over converts to an exponentially larger tree;
// the conversion stops at the budget.
func TestSharedTablesInAResultKeepToTheBudget(t *testing.T) {
	e := New(Options{Timeout: 100 * time.Millisecond})
	start := time.Now()
	_, err := e.ReflectStatus(context.Background(),
		"function ReflectStatus(o) local t = {} for i = 1, 60 do t = {a = t, b = t} end return t end", obj(map[string]any{}))
	if !errors.Is(err, ErrBudget) || !strings.Contains(err.Error(), "converting the result") {
		t.Errorf("error %v, want ErrBudget while converting the result", err)
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("took %s", d)
	}
	// A shared table that stays small converts as before.
	out, err := e.ReflectStatus(context.Background(),
		"function ReflectStatus(o) local t = {x = 1} return {a = t, b = t} end", obj(map[string]any{}))
	if err != nil || string(out.Raw) != `{"a":{"x":1},"b":{"x":1}}` {
		t.Errorf("got %s, %v", out.Raw, err)
	}
}
