package lua

import (
	"context"
	"encoding/json"
	"fmt"
	"math"

	glua "github.com/yuin/gopher-lua"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
)

// FunctionName is the global function a customization script must define for each operation,
// as in Karmada.
var FunctionName = map[configv1alpha1.InterpreterOperation]string{
	configv1alpha1.InterpreterOperationInterpretReplica:    "GetReplicas",
	configv1alpha1.InterpreterOperationReviseReplica:       "ReviseReplica",
	configv1alpha1.InterpreterOperationRetain:              "Retain",
	configv1alpha1.InterpreterOperationInterpretStatus:     "ReflectStatus",
	configv1alpha1.InterpreterOperationAggregateStatus:     "AggregateStatus",
	configv1alpha1.InterpreterOperationInterpretHealth:     "InterpretHealth",
	configv1alpha1.InterpreterOperationInterpretDependency: "GetDependencies",
	configv1alpha1.InterpreterOperationInterpretComponent:  "GetComponents",
}

// Script returns the script of operation op in rules, "" when the rules have none.
func Script(rules *configv1alpha1.CustomizationRules, op configv1alpha1.InterpreterOperation) string {
	switch op {
	case configv1alpha1.InterpreterOperationInterpretReplica:
		if r := rules.ReplicaResource; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationReviseReplica:
		if r := rules.ReplicaRevision; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationRetain:
		if r := rules.Retention; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationInterpretStatus:
		if r := rules.StatusReflection; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationAggregateStatus:
		if r := rules.StatusAggregation; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationInterpretHealth:
		if r := rules.HealthInterpretation; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationInterpretDependency:
		if r := rules.DependencyInterpretation; r != nil {
			return r.LuaScript
		}
	case configv1alpha1.InterpreterOperationInterpretComponent:
		if r := rules.ComponentResource; r != nil {
			return r.LuaScript
		}
	}
	return ""
}

func arg(v any) func(L *glua.LState) glua.LValue {
	return func(L *glua.LState) glua.LValue { return ToLua(L, v) }
}

// decodeTyped converts a Lua result into a typed value through JSON. Empty objects and arrays
// are dropped first: a script's `{}` is ambiguous, and an absent field decodes the same.
func decodeTyped(L *glua.LState, v glua.LValue, into any) error {
	raw, err := FromLua(L, v, nil)
	if err != nil {
		return err
	}
	if m, ok := raw.(map[string]any); ok && len(m) == 0 {
		return nil // an empty table: nothing, whether a list or an object was meant
	}
	b, err := json.Marshal(dropEmpty(raw))
	if err != nil {
		return err
	}
	return json.Unmarshal(b, into)
}

func dropEmpty(v any) any {
	switch t := v.(type) {
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, e := range t {
			e = dropEmpty(e)
			if m, ok := e.(map[string]any); ok && len(m) == 0 {
				continue
			}
			if a, ok := e.([]any); ok && len(a) == 0 {
				continue
			}
			out[k] = e
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, e := range t {
			out[i] = dropEmpty(e)
		}
		return out
	}
	return v
}

// decodeObject converts a script's returned object, guided by the object it was given.
func decodeObject(L *glua.LState, v glua.LValue, ref *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	if v == glua.LNil {
		return nil, fmt.Errorf("the function returned nil, not an object")
	}
	raw, err := FromLua(L, v, ref.Object)
	if err != nil {
		return nil, err
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("the function returned a %T, not an object", raw)
	}
	return &unstructured.Unstructured{Object: m}, nil
}

// GetReplicas runs a replicaResource script: the replicas obj wants and the requirements of one
// replica (nil when the script returns none or an empty table). The namespace of the
// requirements defaults to obj's, as Karmada's detector sets it.
func (e *Engine) GetReplicas(ctx context.Context, script string, obj *unstructured.Unstructured) (int32, *workv1alpha2.ReplicaRequirements, error) {
	var replicas int32
	var req *workv1alpha2.ReplicaRequirements
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationInterpretReplica], 2, func(L *glua.LState, r []glua.LValue) error {
		n, ok := r[0].(glua.LNumber)
		if !ok || float64(n) < 0 || float64(n) > math.MaxInt32 || float64(n) != math.Trunc(float64(n)) {
			return fmt.Errorf("GetReplicas returned %s as replicas, not a whole number from 0 to 2147483647", r[0].String())
		}
		replicas = int32(n)
		if r[1] == glua.LNil {
			return nil
		}
		out := &workv1alpha2.ReplicaRequirements{}
		if err := decodeTyped(L, r[1], out); err != nil {
			return fmt.Errorf("GetReplicas returned requirements that do not decode: %w", err)
		}
		if out.NodeClaim != nil || len(out.ResourceRequest) > 0 || out.PriorityClassName != "" || out.Namespace != "" {
			if out.Namespace == "" {
				out.Namespace = obj.GetNamespace()
			}
			req = out
		}
		return nil
	}, arg(obj.Object))
	return replicas, req, err
}

// ReviseReplica runs a replicaRevision script: obj set to run replicas replicas.
func (e *Engine) ReviseReplica(ctx context.Context, script string, obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationReviseReplica], 1, func(L *glua.LState, r []glua.LValue) (err error) {
		out, err = decodeObject(L, r[0], obj)
		return err
	}, arg(obj.Object), func(*glua.LState) glua.LValue { return glua.LNumber(replicas) })
	return out, err
}

// Retain runs a retention script: desired with the fields the member owns kept from observed.
func (e *Engine) Retain(ctx context.Context, script string, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationRetain], 1, func(L *glua.LState, r []glua.LValue) (err error) {
		out, err = decodeObject(L, r[0], desired)
		return err
	}, arg(desired.Object), arg(observed.Object))
	return out, err
}

// ReflectStatus runs a statusReflection script: the part of observed's status reported to the
// control plane; nil when the script returns nil.
func (e *Engine) ReflectStatus(ctx context.Context, script string, observed *unstructured.Unstructured) (*runtime.RawExtension, error) {
	var out *runtime.RawExtension
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationInterpretStatus], 1, func(L *glua.LState, r []glua.LValue) error {
		if r[0] == glua.LNil {
			return nil
		}
		ref, _ := observed.Object["status"]
		raw, err := FromLua(L, r[0], ref)
		if err != nil {
			return err
		}
		b, err := json.Marshal(raw)
		if err != nil {
			return err
		}
		out = &runtime.RawExtension{Raw: b}
		return nil
	}, arg(observed.Object))
	return out, err
}

// statusItems is the JSON shape of AggregatedStatusItems scripts receive: clusterName, status,
// applied, appliedMessage, health.
func statusItems(items []workv1alpha2.AggregatedStatusItem) any {
	b, _ := json.Marshal(items)
	var out []any
	_ = json.Unmarshal(b, &out)
	if out == nil {
		out = []any{}
	}
	return out
}

// AggregateStatus runs a statusAggregation script: desired with its status built from the
// clusters' reflected statuses.
func (e *Engine) AggregateStatus(ctx context.Context, script string, desired *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var out *unstructured.Unstructured
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationAggregateStatus], 1, func(L *glua.LState, r []glua.LValue) (err error) {
		out, err = decodeObject(L, r[0], desired)
		return err
	}, arg(desired.Object), arg(statusItems(items)))
	return out, err
}

// InterpretHealth runs a healthInterpretation script: whether observed is healthy.
func (e *Engine) InterpretHealth(ctx context.Context, script string, observed *unstructured.Unstructured) (bool, error) {
	var healthy bool
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationInterpretHealth], 1, func(L *glua.LState, r []glua.LValue) error {
		b, ok := r[0].(glua.LBool)
		if !ok {
			return fmt.Errorf("InterpretHealth returned %s, not a boolean", r[0].Type())
		}
		healthy = bool(b)
		return nil
	}, arg(observed.Object))
	return healthy, err
}

// dependentObject is Karmada's DependentObjectReference.
type dependentObject struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace,omitempty"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// GetDependencies runs a dependencyInterpretation script: the objects desired refers to. Each
// needs a kind and either a name or a label selector.
func (e *Engine) GetDependencies(ctx context.Context, script string, desired *unstructured.Unstructured) ([]native.Dependency, error) {
	var out []native.Dependency
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationInterpretDependency], 1, func(L *glua.LState, r []glua.LValue) error {
		if r[0] == glua.LNil {
			return nil
		}
		var refs []dependentObject
		if err := decodeTyped(L, r[0], &refs); err != nil {
			return fmt.Errorf("GetDependencies returned a list that does not decode: %w", err)
		}
		for i, d := range refs {
			dep, err := native.NewDependency(d.APIVersion, d.Kind, d.Namespace, d.Name, d.LabelSelector)
			if err != nil {
				return fmt.Errorf("GetDependencies: dependency %d: %w", i, err)
			}
			out = append(out, dep)
		}
		return nil
	}, arg(desired.Object))
	return out, err
}

// GetComponents runs a componentResource script: each pod template of a multi-template
// workload with its replicas and requirements (Karmada v1.19).
func (e *Engine) GetComponents(ctx context.Context, script string, desired *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	var out []workv1alpha2.Component
	err := e.Call(ctx, script, FunctionName[configv1alpha1.InterpreterOperationInterpretComponent], 1, func(L *glua.LState, r []glua.LValue) error {
		if r[0] == glua.LNil {
			return nil
		}
		if err := decodeTyped(L, r[0], &out); err != nil {
			return fmt.Errorf("GetComponents returned a list that does not decode: %w", err)
		}
		for i, c := range out {
			if c.Name == "" {
				return fmt.Errorf("GetComponents: component %d has no name", i)
			}
			if c.Replicas < 0 {
				return fmt.Errorf("GetComponents: component %s has %d replicas", c.Name, c.Replicas)
			}
		}
		return nil
	}, arg(desired.Object))
	return out, err
}
