package override

import (
	"fmt"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// podSpecPointer returns the JSON pointer of the pod spec of the workload kinds whose containers
// the imageOverrider (without predicate), commandOverrider and argsOverrider change: Pod,
// Deployment, StatefulSet, DaemonSet, ReplicaSet, Job and CronJob of the built-in API groups.
// It reports false for every other kind, which those overriders then leave alone.
func podSpecPointer(obj *unstructured.Unstructured) (string, bool) {
	gvk := obj.GroupVersionKind()
	switch {
	case gvk.Group == "" && gvk.Kind == "Pod":
		return "/spec", true
	case gvk.Group == "apps" && slices.Contains([]string{"Deployment", "StatefulSet", "DaemonSet", "ReplicaSet"}, gvk.Kind),
		gvk.Group == "batch" && gvk.Kind == "Job":
		return "/spec/template/spec", true
	case gvk.Group == "batch" && gvk.Kind == "CronJob":
		return "/spec/jobTemplate/spec/template/spec", true
	}
	return "", false
}

// containers returns the JSON pointer of the workload's containers list and its entries, or
// false when obj is not a known workload kind or has no containers.
func containers(obj *unstructured.Unstructured) (string, []any, bool) {
	podSpec, ok := podSpecPointer(obj)
	if !ok {
		return "", nil, false
	}
	pointer := podSpec + "/containers"
	list, err := valueAt(obj.Object, pointer)
	if err != nil {
		return "", nil, false
	}
	entries, ok := list.([]any)
	return pointer, entries, ok
}

// applyCommandArgsOverrider applies a commandOverrider or argsOverrider entry (list is "command"
// or "args") to the container named o.ContainerName, Karmada's way: add appends the values
// (creating the list when absent), remove deletes every entry equal to one of the values. Init
// containers, unknown kinds and absent containers are left alone. It returns the pointer of the
// list it changed.
func applyCommandArgsOverrider(obj *unstructured.Unstructured, list string, o *policyv1alpha1.CommandArgsOverrider) (string, error) {
	if o.Operator != policyv1alpha1.OverriderOpAdd && o.Operator != policyv1alpha1.OverriderOpRemove {
		return "", fmt.Errorf("unsupported operator %q (want add or remove)", o.Operator)
	}
	pointer, entries, ok := containers(obj)
	if !ok {
		return "", nil
	}
	for i, entry := range entries {
		c, ok := entry.(map[string]any)
		if !ok || c["name"] != o.ContainerName {
			continue
		}
		path := fmt.Sprintf("%s/%d/%s", pointer, i, list)
		current, err := stringList(c[list])
		if err != nil {
			return path, err
		}
		if o.Operator == policyv1alpha1.OverriderOpAdd {
			current = append(current, o.Value...)
		} else {
			current = slices.DeleteFunc(current, func(s string) bool { return slices.Contains(o.Value, s) })
		}
		if current == nil {
			// Nothing to add to an absent list: leave the field absent rather than null.
			continue
		}
		values := make([]any, len(current))
		for j, s := range current {
			values[j] = s
		}
		c[list] = values
	}
	return "", nil
}

// stringList reads a command or args list; absent is an empty list.
func stringList(v any) ([]string, error) {
	if v == nil {
		return nil, nil
	}
	items, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("field is a %s, not a list of strings", typeName(v))
	}
	out := make([]string, 0, len(items))
	for i, item := range items {
		s, ok := item.(string)
		if !ok {
			return nil, fmt.Errorf("entry %d is a %s, not a string", i, typeName(item))
		}
		out = append(out, s)
	}
	return out, nil
}
