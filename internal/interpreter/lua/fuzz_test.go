package lua

import (
	"context"
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Budget of the engine the fuzz target runs scripts on, and how much longer than it a call may
// take before it counts as running past its budget: the slack covers the watchdog's sampling,
// converting a large result back, and a loaded machine (two fuzz workers, -race).
const (
	fuzzTimeout = 30 * time.Millisecond
	fuzzSlack   = 3 * time.Second
)

// fuzzOperations lists the operations in the order a fuzzed byte picks them.
var fuzzOperations = []configv1alpha1.InterpreterOperation{
	configv1alpha1.InterpreterOperationInterpretReplica,
	configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationRetain,
	configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationAggregateStatus,
	configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency,
	configv1alpha1.InterpreterOperationInterpretComponent,
}

// FuzzScript runs a fuzzed customization script on a fuzzed object, as the operation a fuzzed
// byte picks (its high bit also appends an endless loop to the script). Invariants: Check and
// Compile never panic; the call never panics (a failure is an error) and returns within its
// time budget plus slack, so a script that loops, allocates or matches patterns without end
// is cut off; a script with an endless loop fails; the input object is not modified.
func FuzzScript(f *testing.F) {
	deployment := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web","namespace":"default"},` +
		`"spec":{"replicas":3,"template":{"spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"250m"}}}]}}},` +
		`"status":{"readyReplicas":3,"conditions":[{"type":"Available","status":"True"}]}}`
	for _, seed := range []struct {
		script string
		obj    string
		op     uint8
	}{
		{`local kube = require("kube")
function GetReplicas(obj)
  return obj.spec.replicas, kube.accuratePodRequirements(obj.spec.template)
end`, deployment, 0},
		{"function ReviseReplica(obj, replicas)\n  obj.spec.replicas = replicas\n  return obj\nend", deployment, 1},
		{"function Retain(desired, observed)\n  desired.spec.paused = observed.spec.paused\n  return desired\nend", deployment, 2},
		{"function ReflectStatus(observed)\n  return {readyReplicas = observed.status.readyReplicas}\nend", deployment, 3},
		{`function AggregateStatus(desired, items)
  local ready = 0
  for i = 1, #items do
    if items[i].status ~= nil and items[i].status.readyReplicas ~= nil then ready = ready + items[i].status.readyReplicas end
  end
  desired.status = {readyReplicas = ready}
  return desired
end`, deployment, 4},
		{`function InterpretHealth(observed)
  for _, c in ipairs(observed.status.conditions or {}) do
    if c.type == "Available" then return c.status == "True" end
  end
  return false
end`, deployment, 5},
		{`local kube = require("kube")
function GetDependencies(desired)
  local deps = kube.getPodDependencies(desired.spec.template, desired.metadata.namespace)
  table.insert(deps, {apiVersion = "v1", kind = "Secret", labelSelector = {matchLabels = {app = "web"}}})
  return deps
end`, deployment, 6},
		{`function GetComponents(desired)
  return {{name = "main", replicas = desired.spec.replicas, replicaRequirements = {resourceRequest = {cpu = "1"}}}}
end`, deployment, 7},
		{`function InterpretHealth(o) local n = string.find(o.metadata.name, "^w(.-)b$") return n ~= nil and string.gsub("a-b", "%-", "+") == "a+b" end`, deployment, 5},
		{`function InterpretHealth(o) return string.match("key=value", "(%w+)=(%w+)") == "key" end`, deployment, 5},
		{`function InterpretHealth(o) local s = "" for k in string.gmatch("a,b,c", "[^,]+") do s = s .. k end return s == "abc" end`, deployment, 5},
		{`function InterpretHealth(o) return os.date("%Y", 0) == "1970" and math.floor(2.5) == 2 and string.format("%d", 3) == "3" end`, deployment, 5},
		{"function InterpretHealth(o)\n  while true do end\nend", deployment, 5},
		{"function InterpretHealth(o)\n  return true\nend", deployment, 0x85},
		{"function InterpretHealth(o) local t = {} for i = 1, 1e9 do t[i] = i end end", `{}`, 5},
		{"function InterpretHealth(o) return string.rep('x', 1e10) end", `{}`, 5},
		{"function ReflectStatus(o) local t = setmetatable({}, {__index = function(t, k) return t[k] end}) return t.x end", `{}`, 3},
		{"function ReflectStatus(o) local t = {} t.self = t return t end", `{}`, 3},
		{"function GetReplicas(o) return -1 end", `{}`, 0},
		{"function GetReplicas(o) return 0/0, {resourceRequest = {cpu = 'lots'}} end", `{}`, 0},
		{"function Retain(d, o) return 'not an object' end", `{}`, 2},
		{"function GetDependencies(d) return {{kind = 'Secret'}} end", `{}`, 6},
		{"function GetComponents(d) return {{name = ''}} end", `{}`, 7},
		{"function InterpretHealth(o) error({}) end", `{}`, 5},
		{"function InterpretHealth(o) return require('io') end", `{}`, 5},
		{"function InterpretHealth(o) return (", `{}`, 5},
		{"x = ", `[]`, 5},
	} {
		f.Add(seed.script, []byte(seed.obj), seed.op)
	}
	engine := New(Options{Timeout: fuzzTimeout, MemoryBudget: 32 << 20})
	f.Fuzz(func(t *testing.T, script string, objJSON []byte, op uint8) {
		operation := fuzzOperations[int(op&0x7f)%len(fuzzOperations)]
		fn := FunctionName[operation]
		_ = Check(script, fn)
		_, compileErr := Compile(script)
		endless := op&0x80 != 0
		if endless {
			script += "\nwhile true do end"
		}
		obj := &unstructured.Unstructured{Object: map[string]any{}}
		if u := (&unstructured.Unstructured{}); u.UnmarshalJSON(objJSON) == nil {
			obj = u
		} else {
			var m map[string]any
			if json.Unmarshal(objJSON, &m) == nil && m != nil {
				obj.Object = m
			}
		}
		observed, before := obj.DeepCopy(), obj.DeepCopy()

		done := make(chan error, 1)
		start := time.Now()
		go func() { done <- callOperation(engine, operation, script, obj, observed) }()
		var err error
		select {
		case err = <-done:
		case <-time.After(fuzzTimeout + fuzzSlack):
			t.Fatalf("the %s call ran past %s (its budget is %s):\n%s", fn, fuzzTimeout+fuzzSlack, fuzzTimeout, script)
		}
		if d := time.Since(start); d > fuzzTimeout+fuzzSlack {
			t.Fatalf("the %s call took %s (its budget is %s):\n%s", fn, d, fuzzTimeout, script)
		}
		if endless && compileErr == nil && err == nil {
			t.Fatalf("a script ending in an endless loop succeeded:\n%s", script)
		}
		if !reflect.DeepEqual(obj, before) || !reflect.DeepEqual(observed, before) {
			t.Fatalf("the %s call modified its input object", fn)
		}
	})
}

// callOperation runs script as operation on obj (observed is the member's copy, for Retain).
func callOperation(e *Engine, op configv1alpha1.InterpreterOperation, script string, obj, observed *unstructured.Unstructured) error {
	ctx := context.Background()
	var err error
	switch op {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		_, _, err = e.GetReplicas(ctx, script, obj)
	case configv1alpha1.InterpreterOperationReviseReplica:
		_, err = e.ReviseReplica(ctx, script, obj, 5)
	case configv1alpha1.InterpreterOperationRetain:
		_, err = e.Retain(ctx, script, obj, observed)
	case configv1alpha1.InterpreterOperationInterpretStatus:
		_, err = e.ReflectStatus(ctx, script, observed)
	case configv1alpha1.InterpreterOperationAggregateStatus:
		_, err = e.AggregateStatus(ctx, script, obj, []workv1alpha2.AggregatedStatusItem{{ClusterName: "m1", Applied: true}})
	case configv1alpha1.InterpreterOperationInterpretHealth:
		_, err = e.InterpretHealth(ctx, script, observed)
	case configv1alpha1.InterpreterOperationInterpretDependency:
		_, err = e.GetDependencies(ctx, script, obj)
	case configv1alpha1.InterpreterOperationInterpretComponent:
		_, err = e.GetComponents(ctx, script, obj)
	}
	return err
}
