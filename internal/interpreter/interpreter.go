// Package interpreter is the resource interpreter the controllers call: for each
// operation on an object it asks, in Karmada's order,
//
//  1. the declarative customizations (ResourceInterpreterCustomization, config.karmada.io) that
//     target the object's apiVersion and kind and define the operation, the first by name;
//  2. the interpreter webhooks (ResourceInterpreterWebhookConfiguration) whose rules match;
//  3. the bundled third-party customizations (package thirdparty);
//  4. the built-in rules (package interpreter).
//
// Lua scripts run on one shared lua.Engine. A script that fails (an error, a budget exceeded)
// fails the operation with an error naming the customization, and the failure is reported
// through Interpreter.OnError (the controller manager records a Warning event on the
// customization).
package interpreter

import (
	"context"
	"fmt"
	"hash/fnv"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/interpreter/lua"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/interpreter/thirdparty"
)

// Op is an interpreter operation (Karmada's InterpreterOperation).
type Op = configv1alpha1.InterpreterOperation

// Interpreter answers the interpreter operations. The zero value is not usable; use New.
type Interpreter struct {
	engine *lua.Engine
	// custom is the index of the declarative customizations, replaced whole by SetCustomizations.
	custom atomic.Pointer[index]
	// bundled is the index of the third-party customizations.
	bundled *index
	// Webhooks, when set, is asked after the declarative customizations.
	webhooks atomic.Pointer[Webhooks]

	// OnError, when set, is told of every failed script or webhook call.
	OnError func(source string, op Op, obj *unstructured.Unstructured, err error)
}

// Webhooks is the interpreter-webhook step: Lookup says whether a webhook takes op for gvk.
type Webhooks interface {
	Lookup(gvk schema.GroupVersionKind, op Op) Hook
}

// Hook is one interpreter webhook, ready to call.
type Hook interface {
	Name() string
	Interpret(ctx context.Context, req Request) (*Response, error)
}

// index maps apiVersion/kind to customizations, sorted by name.
type index struct {
	byKind map[schema.GroupVersionKind][]configv1alpha1.ResourceInterpreterCustomization
	// revision is a digest of each kind's customizations (names and scripts).
	revision map[schema.GroupVersionKind]string
}

func newIndex(list []configv1alpha1.ResourceInterpreterCustomization) *index {
	ix := &index{byKind: map[schema.GroupVersionKind][]configv1alpha1.ResourceInterpreterCustomization{}}
	for _, c := range list {
		gvk := schema.FromAPIVersionAndKind(c.Spec.Target.APIVersion, c.Spec.Target.Kind)
		ix.byKind[gvk] = append(ix.byKind[gvk], c)
	}
	ix.revision = map[schema.GroupVersionKind]string{}
	for gvk, l := range ix.byKind {
		sort.Slice(l, func(i, j int) bool { return l[i].Name < l[j].Name })
		h := fnv.New64a()
		for _, c := range l {
			fmt.Fprintf(h, "%s\x00", c.Name)
			for _, op := range ops {
				fmt.Fprintf(h, "%s\x00%s\x00", op, lua.Script(&c.Spec.Customizations, op))
			}
		}
		ix.revision[gvk] = strconv.FormatUint(h.Sum64(), 36)
	}
	return ix
}

// ops are the operations, in a fixed order.
var ops = []Op{
	configv1alpha1.InterpreterOperationInterpretReplica, configv1alpha1.InterpreterOperationReviseReplica,
	configv1alpha1.InterpreterOperationRetain, configv1alpha1.InterpreterOperationInterpretStatus,
	configv1alpha1.InterpreterOperationAggregateStatus, configv1alpha1.InterpreterOperationInterpretHealth,
	configv1alpha1.InterpreterOperationInterpretDependency, configv1alpha1.InterpreterOperationInterpretComponent,
}

// RevisionAnnotation carries, on a binding and on the objects it sends to
// the members, the revision of the customizations that interpret its kind:
// a new revision re-renders, re-applies and re-reports every object of the
// kind, so an edited customization takes effect on what exists.
const RevisionAnnotation = "resourceinterpreter.flotilla.io/revision"

// Revision is a digest of the declarative customizations and interpreter
// webhooks that answer for gvk; "" when only the bundled and built-in rules
// do (they change only with Flotilla itself).
func (in *Interpreter) Revision(gvk schema.GroupVersionKind) string {
	rev := ""
	if ix := in.custom.Load(); ix != nil {
		rev = ix.revision[gvk]
	}
	if w := in.webhooks.Load(); w != nil {
		var names []string
		for _, op := range ops {
			if h := (*w).Lookup(gvk, op); h != nil {
				names = append(names, string(op)+"="+h.Name())
			}
		}
		if len(names) > 0 {
			h := fnv.New64a()
			fmt.Fprintf(h, "%s\x00%s", rev, strings.Join(names, ","))
			rev = strconv.FormatUint(h.Sum64(), 36)
		}
	}
	return rev
}

// script returns the first customization (by name) for gvk that defines op.
func (ix *index) script(gvk schema.GroupVersionKind, op Op) (name, script string) {
	if ix == nil {
		return "", ""
	}
	for _, c := range ix.byKind[gvk] {
		if s := lua.Script(&c.Spec.Customizations, op); s != "" {
			return c.Name, s
		}
	}
	return "", ""
}

// New returns an Interpreter with the bundled third-party customizations and no declarative
// ones yet.
func New(engine *lua.Engine) *Interpreter {
	if engine == nil {
		engine = lua.New(lua.Options{})
	}
	return &Interpreter{engine: engine, bundled: newIndex(thirdparty.Customizations())}
}

// Engine is the Lua engine the interpreter runs scripts on.
func (in *Interpreter) Engine() *lua.Engine { return in.engine }

// SetCustomizations replaces the declarative customizations (all of them, as listed).
func (in *Interpreter) SetCustomizations(list []configv1alpha1.ResourceInterpreterCustomization) {
	in.custom.Store(newIndex(list))
}

// SetWebhooks replaces the webhook step; nil removes it.
func (in *Interpreter) SetWebhooks(w Webhooks) {
	if w == nil {
		in.webhooks.Store(nil)
		return
	}
	in.webhooks.Store(&w)
}

// source is where an operation's answer comes from.
type source struct {
	kind   string // "customization", "webhook", "thirdparty", or "" for built-in
	name   string
	script string
	hook   Hook
}

func (s source) String() string {
	switch s.kind {
	case "":
		return "built-in interpreter"
	case "webhook":
		return "interpreter webhook " + s.name
	case "thirdparty":
		return "bundled customization " + s.name
	default:
		return "ResourceInterpreterCustomization " + s.name
	}
}

func (in *Interpreter) lookup(obj *unstructured.Unstructured, op Op) source {
	gvk := obj.GroupVersionKind()
	if name, s := in.custom.Load().script(gvk, op); s != "" {
		return source{kind: "customization", name: name, script: s}
	}
	if w := in.webhooks.Load(); w != nil {
		if h := (*w).Lookup(gvk, op); h != nil {
			return source{kind: "webhook", name: h.Name(), hook: h}
		}
	}
	if name, s := in.bundled.script(gvk, op); s != "" {
		return source{kind: "thirdparty", name: name, script: s}
	}
	return source{}
}

// Customized reports whether anything but the built-in rules answers op for obj's kind.
func (in *Interpreter) Customized(obj *unstructured.Unstructured, op Op) bool {
	return in.lookup(obj, op).kind != ""
}

// Interprets reports whether op is answered for obj's kind by more than a default, as Karmada's
// HookEnabled: a customization, a webhook or a bundled customization, or a built-in rule of the
// kind. The built-in rules counted are InterpretHealth's (native.HasHealthRule: other kinds are
// Healthy unjudged) and InterpretDependency's (native.HasDependencies). InterpretComponent is
// answered by customization scripts only. For other operations only what is customized counts.
func (in *Interpreter) Interprets(obj *unstructured.Unstructured, op Op) bool {
	src := in.lookup(obj, op)
	if op == configv1alpha1.InterpreterOperationInterpretComponent {
		return src.script != ""
	}
	if src.kind != "" {
		return true
	}
	gk := obj.GroupVersionKind().GroupKind()
	switch op {
	case configv1alpha1.InterpreterOperationInterpretHealth:
		return native.HasHealthRule(gk)
	case configv1alpha1.InterpreterOperationInterpretDependency:
		return native.HasDependencies(gk)
	}
	return false
}

// fail wraps err with its source and reports it.
func (in *Interpreter) fail(src source, op Op, obj *unstructured.Unstructured, err error) error {
	err = fmt.Errorf("%s %s of %s %s/%s: %w", src, op, obj.GetKind(), obj.GetNamespace(), obj.GetName(), err)
	if in.OnError != nil && src.kind != "" {
		in.OnError(src.kind+"/"+src.name, op, obj, err)
	}
	return err
}

// GetReplicas is the InterpretReplica operation: the replicas obj wants and the requirements of
// one replica. ok is false when nothing interprets replicas for obj's kind.
func (in *Interpreter) GetReplicas(ctx context.Context, obj *unstructured.Unstructured) (replicas int32, req *workv1alpha2.ReplicaRequirements, ok bool, err error) {
	op := configv1alpha1.InterpreterOperationInterpretReplica
	src := in.lookup(obj, op)
	switch {
	case src.script != "":
		replicas, req, err = in.engine.GetReplicas(ctx, src.script, obj)
	case src.hook != nil:
		var resp *Response
		if resp, err = in.call(ctx, src, op, Request{Object: obj}); err == nil {
			if resp.Replicas == nil {
				return 0, nil, false, nil
			}
			replicas, req = *resp.Replicas, resp.ReplicaRequirements
		}
	default:
		replicas, req, ok = native.GetReplicas(obj)
		return replicas, req, ok, nil
	}
	if err != nil {
		return 0, nil, false, in.fail(src, op, obj, err)
	}
	return replicas, req, true, nil
}

// ReviseReplica is the ReviseReplica operation for one cluster's share of a divided workload.
// The built-in rules also divide a Job's completions (interpreter.ReviseDividedReplicas).
func (in *Interpreter) ReviseReplica(ctx context.Context, obj *unstructured.Unstructured, clusters []workv1alpha2.TargetCluster, target workv1alpha2.TargetCluster) (*unstructured.Unstructured, error) {
	op := configv1alpha1.InterpreterOperationReviseReplica
	src := in.lookup(obj, op)
	var out *unstructured.Unstructured
	var err error
	switch {
	case src.script != "":
		out, err = in.engine.ReviseReplica(ctx, src.script, obj, int64(target.Replicas))
	case src.hook != nil:
		replicas := target.Replicas
		out, err = in.patched(ctx, src, op, obj, Request{Object: obj, DesiredReplicas: &replicas})
	default:
		return native.ReviseDividedReplicas(obj, clusters, target)
	}
	if err != nil {
		return nil, in.fail(src, op, obj, err)
	}
	return out, nil
}

// HasReviseReplica reports whether obj's kind can have its replicas revised.
func (in *Interpreter) HasReviseReplica(obj *unstructured.Unstructured) bool {
	return in.Customized(obj, configv1alpha1.InterpreterOperationReviseReplica)
}

// Retain is the Retain operation: desired with the fields the member owns kept from observed.
func (in *Interpreter) Retain(ctx context.Context, desired, observed *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	op := configv1alpha1.InterpreterOperationRetain
	src := in.lookup(desired, op)
	var out *unstructured.Unstructured
	var err error
	switch {
	case src.script != "":
		// The built-in rules run first, as Karmada keeps its default retention for every kind.
		if desired, err = native.Retain(desired, observed); err == nil {
			out, err = in.engine.Retain(ctx, src.script, desired, observed)
		}
	case src.hook != nil:
		if desired, err = native.Retain(desired, observed); err == nil {
			out, err = in.patched(ctx, src, op, desired, Request{Object: desired, ObservedObject: observed})
		}
	default:
		return native.Retain(desired, observed)
	}
	if err != nil {
		return nil, in.fail(src, op, desired, err)
	}
	return out, nil
}

// ReflectStatus is the InterpretStatus operation: the status reported for a member object.
func (in *Interpreter) ReflectStatus(ctx context.Context, observed *unstructured.Unstructured) (*runtime.RawExtension, error) {
	op := configv1alpha1.InterpreterOperationInterpretStatus
	src := in.lookup(observed, op)
	var out *runtime.RawExtension
	var err error
	switch {
	case src.script != "":
		out, err = in.engine.ReflectStatus(ctx, src.script, observed)
	case src.hook != nil:
		var resp *Response
		if resp, err = in.call(ctx, src, op, Request{Object: observed}); err == nil {
			out = resp.RawStatus
		}
	default:
		return native.ReflectStatus(observed)
	}
	if err != nil {
		return nil, in.fail(src, op, observed, err)
	}
	return out, nil
}

// InterpretHealth is the InterpretHealth operation. A failed script or webhook reads as
// Unknown (and is reported through OnError).
func (in *Interpreter) InterpretHealth(ctx context.Context, observed *unstructured.Unstructured) workv1alpha1.ResourceHealth {
	h, _ := in.InterpretHealthErr(ctx, observed)
	return h
}

// InterpretHealthErr is InterpretHealth with the failure, for tools that must show it.
func (in *Interpreter) InterpretHealthErr(ctx context.Context, observed *unstructured.Unstructured) (workv1alpha1.ResourceHealth, error) {
	op := configv1alpha1.InterpreterOperationInterpretHealth
	src := in.lookup(observed, op)
	var healthy bool
	var err error
	switch {
	case src.script != "":
		healthy, err = in.engine.InterpretHealth(ctx, src.script, observed)
	case src.hook != nil:
		var resp *Response
		if resp, err = in.call(ctx, src, op, Request{Object: observed}); err == nil {
			if resp.Healthy == nil {
				err = fmt.Errorf("the webhook answered without healthy")
			} else {
				healthy = *resp.Healthy
			}
		}
	default:
		return native.InterpretHealth(observed), nil
	}
	if err != nil {
		return workv1alpha1.ResourceUnknown, in.fail(src, op, observed, err)
	}
	if healthy {
		return workv1alpha1.ResourceHealthy, nil
	}
	return workv1alpha1.ResourceUnhealthy, nil
}

// AggregateStatus is the AggregateStatus operation: the template with its status built from
// items. Only the status of a customization's answer is taken: the rest of the template stays
// as it is, whatever the script returned for it. The built-in rules return the template
// unchanged for kinds they do not know.
func (in *Interpreter) AggregateStatus(ctx context.Context, tmpl *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	op := configv1alpha1.InterpreterOperationAggregateStatus
	src := in.lookup(tmpl, op)
	var out *unstructured.Unstructured
	var err error
	switch {
	case src.script != "":
		out, err = in.engine.AggregateStatus(ctx, src.script, tmpl, items)
	case src.hook != nil:
		out, err = in.patched(ctx, src, op, tmpl, Request{Object: tmpl, AggregatedStatus: items})
	default:
		return native.AggregateStatus(tmpl, items)
	}
	if err != nil {
		return nil, in.fail(src, op, tmpl, err)
	}
	result := tmpl.DeepCopy()
	if st, ok := out.Object["status"]; ok && st != nil {
		result.Object["status"] = st
	} else {
		delete(result.Object, "status")
	}
	return result, nil
}

// Dependencies is the InterpretDependency operation: what obj refers to.
func (in *Interpreter) Dependencies(ctx context.Context, obj *unstructured.Unstructured) ([]native.Dependency, error) {
	op := configv1alpha1.InterpreterOperationInterpretDependency
	src := in.lookup(obj, op)
	var out []native.Dependency
	var err error
	switch {
	case src.script != "":
		out, err = in.engine.GetDependencies(ctx, src.script, obj)
	case src.hook != nil:
		var resp *Response
		if resp, err = in.call(ctx, src, op, Request{Object: obj}); err == nil {
			out, err = resp.dependencies()
		}
	default:
		return native.Dependencies(obj)
	}
	if err != nil {
		return nil, in.fail(src, op, obj, err)
	}
	return unique(out), nil
}

// Components is the InterpretComponent operation (Karmada v1.19): nil when nothing interprets
// components for obj's kind.
func (in *Interpreter) Components(ctx context.Context, obj *unstructured.Unstructured) ([]workv1alpha2.Component, error) {
	op := configv1alpha1.InterpreterOperationInterpretComponent
	src := in.lookup(obj, op)
	if src.script == "" {
		return nil, nil
	}
	out, err := in.engine.GetComponents(ctx, src.script, obj)
	if err != nil {
		return nil, in.fail(src, op, obj, err)
	}
	return out, nil
}

// unique drops repeated dependencies, keeping the first of each.
func unique(deps []native.Dependency) []native.Dependency {
	seen := map[native.Dependency]bool{}
	out := deps[:0]
	for _, d := range deps {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	return out
}

var (
	defaultOnce sync.Once
	defaultIn   *Interpreter
)

// Or returns in, or when it is nil a shared Interpreter with only the bundled and built-in
// rules (for callers and tests that were given none).
func Or(in *Interpreter) *Interpreter {
	if in != nil {
		return in
	}
	defaultOnce.Do(func() { defaultIn = New(nil) })
	return defaultIn
}
