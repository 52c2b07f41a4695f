package lua

import (
	"fmt"

	glua "github.com/yuin/gopher-lua"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/runtime"

	"github.com/flotilla-io/flotilla/internal/interpreter/native"
)

// openKube is the loader of the "kube" module, the helpers Karmada gives customization scripts:
//
//   - kube.accuratePodRequirements(podTemplate): the requirements of one replica running the
//     pod template (a PodTemplateSpec table): {nodeClaim = {nodeSelector, tolerations,
//     hardNodeAffinity}, resourceRequest = {cpu = ..., ...}, priorityClassName, namespace},
//     the template's namespace only; an empty table when nothing is required.
//   - kube.getPodDependencies(podTemplate, namespace): the ConfigMaps, Secrets,
//     ServiceAccount and PersistentVolumeClaims the template refers to, as
//     {apiVersion, kind, namespace, name} tables sorted by kind and name.
//   - kube.getResourceQuantity(q): a quantity ("500m", "2Gi", 3) as a number (0.5, 2147483648, 3).
//   - kube.resourceAdd(a, b): the sum of two quantities as a canonical quantity string
//     ("1500m" + "500m" = "2").
//
// Errors (a quantity that does not parse, a template that does not decode) are raised as Lua
// errors naming the function.
func openKube(L *glua.LState) int {
	mod := L.SetFuncs(L.NewTable(), map[string]glua.LGFunction{
		"accuratePodRequirements": accuratePodRequirements,
		"getPodDependencies":      getPodDependencies,
		"getResourceQuantity":     getResourceQuantity,
		"resourceAdd":             resourceAdd,
	})
	L.Push(mod)
	return 1
}

// podTemplate decodes argument n as a PodTemplateSpec.
func podTemplate(L *glua.LState, n int, fn string) *corev1.PodTemplateSpec {
	tmpl := &corev1.PodTemplateSpec{}
	v := L.Get(n)
	if v == glua.LNil {
		return tmpl
	}
	raw, err := FromLua(L, v, nil)
	if err == nil {
		// A script's empty table may stand for a list (initContainers = {}): empty
		// values read as absent.
		m, _ := dropEmpty(raw).(map[string]any)
		err = runtime.DefaultUnstructuredConverter.FromUnstructured(m, tmpl)
	}
	if err != nil {
		L.RaiseError("kube.%s: the pod template does not decode: %v", fn, err)
	}
	return tmpl
}

func pushJSON(L *glua.LState, v any) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(v)
	if err != nil {
		L.RaiseError("%v", err)
	}
	L.Push(ToLua(L, m))
}

func accuratePodRequirements(L *glua.LState) int {
	tmpl := podTemplate(L, 1, "accuratePodRequirements")
	req := native.PodRequirements(&tmpl.Spec, tmpl.Namespace)
	if req == nil {
		L.Push(L.NewTable())
		return 1
	}
	pushJSON(L, req)
	return 1
}

func getPodDependencies(L *glua.LState) int {
	tmpl := podTemplate(L, 1, "getPodDependencies")
	ns := L.OptString(2, "")
	out := L.NewTable()
	for _, d := range native.PodSpecDependencies(&tmpl.Spec) {
		t := L.NewTable()
		gvk := d.GroupVersionKind()
		t.RawSetString("apiVersion", glua.LString(gvk.GroupVersion().String()))
		t.RawSetString("kind", glua.LString(d.Kind))
		t.RawSetString("namespace", glua.LString(ns))
		t.RawSetString("name", glua.LString(d.Name))
		out.Append(t)
	}
	L.Push(out)
	return 1
}

// quantity reads argument n as a resource quantity: a string or a number.
func quantity(L *glua.LState, n int, fn string) resource.Quantity {
	switch v := L.Get(n).(type) {
	case glua.LString:
		q, err := resource.ParseQuantity(string(v))
		if err != nil {
			L.RaiseError("kube.%s: %q is not a quantity: %v", fn, string(v), err)
		}
		return q
	case glua.LNumber:
		q, err := resource.ParseQuantity(fmt.Sprint(float64(v)))
		if err != nil {
			L.RaiseError("kube.%s: %v is not a quantity: %v", fn, float64(v), err)
		}
		return q
	case *glua.LNilType:
		return resource.Quantity{}
	default:
		L.RaiseError("kube.%s: argument %d is a %s, not a quantity", fn, n, v.Type())
	}
	return resource.Quantity{}
}

func getResourceQuantity(L *glua.LState) int {
	q := quantity(L, 1, "getResourceQuantity")
	L.Push(glua.LNumber(q.AsApproximateFloat64()))
	return 1
}

func resourceAdd(L *glua.LState) int {
	a := quantity(L, 1, "resourceAdd")
	b := quantity(L, 2, "resourceAdd")
	a.Add(b)
	L.Push(glua.LString(a.String()))
	return 1
}
