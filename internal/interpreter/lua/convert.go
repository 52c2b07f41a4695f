package lua

import (
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	glua "github.com/yuin/gopher-lua"
)

// objectMarker is the registry key of the metatable that marks a Lua table converted from a
// JSON object. Such a table converts back to an object even when it is empty, so that
// `affinity: {}` stays an object and is not dropped or turned into an array (Karmada issue
// 4653). Scripts never see the marker: it has no metamethods.
const objectMarker = "flotilla.object"

func objectMeta(L *glua.LState) *glua.LTable {
	if mt, ok := L.GetField(L.Get(glua.RegistryIndex), objectMarker).(*glua.LTable); ok {
		return mt
	}
	mt := L.NewTable()
	L.SetField(L.Get(glua.RegistryIndex), objectMarker, mt)
	return mt
}

// ToLua converts a JSON-shaped Go value (maps, slices, strings, numbers, bools, nil) to Lua.
func ToLua(L *glua.LState, v any) glua.LValue {
	switch t := v.(type) {
	case nil:
		return glua.LNil
	case bool:
		return glua.LBool(t)
	case string:
		return glua.LString(t)
	case int64:
		return glua.LNumber(t)
	case int32:
		return glua.LNumber(t)
	case int:
		return glua.LNumber(t)
	case float64:
		return glua.LNumber(t)
	case json.Number:
		f, _ := t.Float64()
		return glua.LNumber(f)
	case map[string]any:
		tb := L.CreateTable(0, len(t))
		for k, e := range t {
			tb.RawSetString(k, ToLua(L, e))
		}
		L.SetMetatable(tb, objectMeta(L))
		return tb
	case []any:
		tb := L.CreateTable(len(t), 0)
		for _, e := range t {
			tb.Append(ToLua(L, e))
		}
		return tb
	default:
		// Typed values (from callers that did not go through JSON): round-trip them.
		raw, err := json.Marshal(t)
		if err != nil {
			return glua.LNil
		}
		var out any
		_ = json.Unmarshal(raw, &out)
		return ToLua(L, out)
	}
}

// FromLua converts a Lua value to its JSON shape. A table is an array when its keys are exactly
// 1..n (n > 0), an object otherwise. An empty table is an object when it came from an object or
// when the reference value at the same place (ref, the input the script was given; may be nil)
// is an object or absent, and an array when the reference is an array. Integral numbers become
// int64, others float64; NaN and infinities are refused. Functions and other Lua types are
// refused with the path where they were found.
//
// The conversion stops with an error wrapping ErrBudget once L's context is done: a table
// reachable many times over (t = {a = t, b = t}, repeated) converts to a tree exponentially
// larger than the script built, and the call's budget covers converting its result.
func FromLua(L *glua.LState, v glua.LValue, ref any) (any, error) {
	c := &conversion{L: L}
	return c.fromLua(v, ref, "", 0)
}

// conversion is one FromLua call: its state and how many values it converted.
type conversion struct {
	L      *glua.LState
	values int
}

// conversionCheckEvery is how many values FromLua converts between two looks at the context.
const conversionCheckEvery = 1 << 12

func (c *conversion) fromLua(v glua.LValue, ref any, path string, depth int) (any, error) {
	L := c.L
	if depth > 100 {
		return nil, fmt.Errorf("%s: nested more than 100 levels (a table that contains itself?)", where(path))
	}
	if c.values++; c.values%conversionCheckEvery == 0 {
		if ctx := L.Context(); ctx != nil && ctx.Err() != nil {
			return nil, fmt.Errorf("%w: converting the result stopped after %d values: %w", ErrBudget, c.values, ctx.Err())
		}
	}
	switch t := v.(type) {
	case *glua.LNilType:
		return nil, nil
	case glua.LBool:
		return bool(t), nil
	case glua.LString:
		return string(t), nil
	case glua.LNumber:
		f := float64(t)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return nil, fmt.Errorf("%s: %v is not a JSON number", where(path), f)
		}
		if f == math.Trunc(f) && math.Abs(f) < 1<<63 {
			return int64(f), nil
		}
		return f, nil
	case *glua.LTable:
		marked := L.GetMetatable(t) == objectMeta(L)
		n := t.Len()
		keys := 0
		allInts := true
		t.ForEach(func(k, _ glua.LValue) {
			keys++
			if num, ok := k.(glua.LNumber); !ok || float64(num) != math.Trunc(float64(num)) || num < 1 || int(num) > n {
				allInts = false
			}
		})
		if keys == 0 {
			if _, isArray := ref.([]any); isArray && !marked {
				return []any{}, nil
			}
			return map[string]any{}, nil
		}
		if !marked && allInts && keys == n {
			refs, _ := ref.([]any)
			out := make([]any, n)
			for i := 1; i <= n; i++ {
				var r any
				if i <= len(refs) {
					r = refs[i-1]
				}
				e, err := c.fromLua(t.RawGetInt(i), r, path+"["+strconv.Itoa(i-1)+"]", depth+1)
				if err != nil {
					return nil, err
				}
				out[i-1] = e
			}
			return out, nil
		}
		refs, _ := ref.(map[string]any)
		out := make(map[string]any, keys)
		var err error
		t.ForEach(func(k, e glua.LValue) {
			if err != nil {
				return
			}
			key := k.String()
			if num, ok := k.(glua.LNumber); ok {
				key = strconv.FormatFloat(float64(num), 'f', -1, 64)
			}
			var conv any
			conv, err = c.fromLua(e, refs[key], path+"."+key, depth+1)
			if conv != nil {
				out[key] = conv
			}
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	default:
		return nil, fmt.Errorf("%s: a Lua %s cannot be converted to JSON", where(path), v.Type())
	}
}

func where(path string) string {
	if path == "" {
		return "result"
	}
	return "result" + path
}
