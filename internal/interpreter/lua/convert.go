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
func FromLua(L *glua.LState, v glua.LValue, ref any) (any, error) {
	return fromLua(L, v, ref, "", 0)
}

func fromLua(L *glua.LState, v glua.LValue, ref any, path string, depth int) (any, error) {
	if depth > 100 {
		return nil, fmt.Errorf("%s: nested more than 100 levels (a table that contains itself?)", where(path))
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
				e, err := fromLua(L, t.RawGetInt(i), r, path+"["+strconv.Itoa(i-1)+"]", depth+1)
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
			conv, err = fromLua(L, e, refs[key], path+"."+key, depth+1)
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
