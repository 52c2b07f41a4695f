package override

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestPatch(t *testing.T) {
	doc := func() any {
		v, err := decodeJSON([]byte(`{"a/b":{"m~n":1},"list":[1,2,3],"obj":{"k":"v"}}`))
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	tests := []struct {
		name    string
		op      policyv1alpha1.OverriderOperator
		pointer string
		value   string
		want    string
		wantErr string
	}{
		{name: "escaped tokens", op: opReplace, pointer: "/a~1b/m~0n", value: `2`, want: `{"a/b":{"m~n":2},"list":[1,2,3],"obj":{"k":"v"}}`},
		{name: "add inserts into an array", op: opAdd, pointer: "/list/1", value: `9`, want: `{"a/b":{"m~n":1},"list":[1,9,2,3],"obj":{"k":"v"}}`},
		{name: "add at the array length appends", op: opAdd, pointer: "/list/3", value: `9`, want: `{"a/b":{"m~n":1},"list":[1,2,3,9],"obj":{"k":"v"}}`},
		{name: "add with - appends", op: opAdd, pointer: "/list/-", value: `9`, want: `{"a/b":{"m~n":1},"list":[1,2,3,9],"obj":{"k":"v"}}`},
		{name: "remove deletes an array element", op: opRemove, pointer: "/list/0", want: `{"a/b":{"m~n":1},"list":[2,3],"obj":{"k":"v"}}`},
		{name: "replace sets an array element", op: opReplace, pointer: "/list/2", value: `"x"`, want: `{"a/b":{"m~n":1},"list":[1,2,"x"],"obj":{"k":"v"}}`},
		{name: "add replaces an existing member", op: opAdd, pointer: "/obj", value: `{"n":1}`, want: `{"a/b":{"m~n":1},"list":[1,2,3],"obj":{"n":1}}`},
		{name: "an empty pointer replaces the document", op: opReplace, pointer: "", value: `[1]`, want: `[1]`},
		{name: "removing the document fails", op: opRemove, pointer: "", wantErr: "whole document"},
		{name: "replace of an absent member fails", op: opReplace, pointer: "/obj/missing", value: `1`, wantErr: `"/obj/missing" does not exist`},
		{name: "remove of an absent member fails", op: opRemove, pointer: "/missing", wantErr: `"/missing" does not exist`},
		{name: "add below an absent member fails", op: opAdd, pointer: "/missing/k", value: `1`, wantErr: `"/missing" does not exist`},
		{name: "index out of range", op: opReplace, pointer: "/list/3", value: `1`, wantErr: "out of range"},
		{name: "- only appends", op: opReplace, pointer: "/list/-", value: `1`, wantErr: "not an array index"},
		{name: "leading zeros are not indexes", op: opReplace, pointer: "/list/01", value: `1`, wantErr: "not an array index"},
		{name: "traversing a scalar fails", op: opAdd, pointer: "/obj/k/deeper", value: `1`, wantErr: `"/obj/k" is a string`},
		{name: "pointers start with a slash", op: opAdd, pointer: "obj", value: `1`, wantErr: "does not start with '/'"},
		{name: "unknown operators fail", op: "move", pointer: "/obj", wantErr: "unsupported operator"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			value, err := decodeJSON([]byte(tt.value))
			if err != nil {
				t.Fatal(err)
			}
			got, err := patch(doc(), tt.op, tt.pointer, value)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("patch() error = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("patch() error: %v", err)
			}
			want, _ := decodeJSON([]byte(tt.want))
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("patch() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestDecodeJSON(t *testing.T) {
	got, err := decodeJSON([]byte(`{"i":3,"big":12345678901234,"f":0.5,"huge":18446744073709551616}`))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"i": int64(3), "big": int64(12345678901234), "f": 0.5, "huge": 18446744073709551616.0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decodeJSON() (-want +got):\n%s", diff)
	}
	if v, err := decodeJSON(nil); v != nil || err != nil {
		t.Errorf("decodeJSON(nil) = %v, %v; want null", v, err)
	}
	if _, err := decodeJSON([]byte(`1 2`)); err == nil {
		t.Errorf("decodeJSON() accepted trailing data")
	}
	if _, err := decodeJSON([]byte(`[1e400]`)); err == nil {
		t.Errorf("decodeJSON() accepted a number no float64 holds")
	}
}
