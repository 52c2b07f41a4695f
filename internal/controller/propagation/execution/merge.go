package execution

import (
	"context"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// Subset reports whether every field set in desired has the same value in
// existing: maps recursively, lists element-wise with equal length, scalars
// equal. Fields the member's API server defaulted or its controllers added
// are ignored, so an update is sent only when the member really differs:
// that is how drift is detected and how no-op writes are avoided.
func Subset(desired, existing any) bool {
	switch d := desired.(type) {
	case map[string]any:
		e, ok := existing.(map[string]any)
		if !ok {
			return len(d) == 0 && existing == nil
		}
		for k, dv := range d {
			if k == "status" {
				continue
			}
			ev, found := e[k]
			if !found {
				if isEmpty(dv) {
					continue
				}
				return false
			}
			if !Subset(dv, ev) {
				return false
			}
		}
		return true
	case []any:
		e, ok := existing.([]any)
		if !ok || len(d) != len(e) {
			return len(d) == 0 && existing == nil
		}
		for i := range d {
			if !Subset(d[i], e[i]) {
				return false
			}
		}
		return true
	case int64:
		switch e := existing.(type) {
		case int64:
			return d == e
		case float64:
			return float64(d) == e
		}
		return false
	case float64:
		switch e := existing.(type) {
		case float64:
			return d == e
		case int64:
			return d == float64(e)
		}
		return false
	default:
		return desired == existing
	}
}

func isEmpty(v any) bool {
	switch t := v.(type) {
	case nil:
		return true
	case map[string]any:
		return len(t) == 0
	case []any:
		return len(t) == 0
	case string:
		return t == ""
	}
	return false
}

// Merge returns the object to send as an update of existing, the member's
// copy, to make it desired, a rendered Work manifest. It is Karmada's retain
// step: desired's content on top of the existing object's identity
// (resourceVersion, uid) and status; the existing labels and annotations kept
// unless desired sets them or Flotilla set them before and desired dropped
// them (resourcetemplate.karmada.io/managed-labels and managed-annotations);
// the member's finalizers and ownerReferences, which its own controllers
// manage; and the fields each kind's member owns (interpreter.Retain: a
// Service's cluster IPs, a Job's generated selector and pod labels, a Pod's
// node and volumes, ...). Updating in place keeps the object's uid, so
// adopting it (conflictResolution Overwrite) restarts nothing. Neither
// argument is modified; the error is interpreter.Retain's.
//
// The member-owned fields come from in's Retain (nil: the bundled and
// built-in rules).
func Merge(ctx context.Context, in *interpreter.Interpreter, desired, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	out, err := interpreter.Or(in).Retain(ctx, desired, existing)
	if err != nil {
		return nil, err
	}
	out.SetResourceVersion(existing.GetResourceVersion())
	out.SetUID(existing.GetUID())
	previously := existing.GetAnnotations()
	out.SetLabels(mergeManaged(existing.GetLabels(), desired.GetLabels(), previously[binding.ManagedLabelsAnnotation]))
	out.SetAnnotations(mergeManaged(existing.GetAnnotations(), desired.GetAnnotations(), previously[binding.ManagedAnnotationsAnnotation]))
	out.SetFinalizers(existing.GetFinalizers())
	out.SetOwnerReferences(existing.GetOwnerReferences())
	if st, ok := existing.Object["status"]; ok {
		out.Object["status"] = st
	}
	return out, nil
}

// InSync reports whether existing, the member's copy, already is what
// desired asks for, so that no update is sent: either every field desired
// sets has the same value in existing (Subset), or the object Merge would send
// does. The second check stops an update loop where desired holds a value
// the member owns and the retain step replaces (a Pod's volumes, a Job's pod
// labels, a ServiceAccount's member-added secrets): sending it would change
// nothing, so that is not drift. The error is Merge's.
func InSync(ctx context.Context, in *interpreter.Interpreter, desired, existing *unstructured.Unstructured) (bool, error) {
	if Subset(desired.Object, existing.Object) {
		return true, nil
	}
	merged, err := Merge(ctx, in, desired, existing)
	if err != nil {
		return false, err
	}
	return Subset(merged.Object, existing.Object), nil
}

// mergeManaged keeps the member's own keys of base, drops the keys Flotilla
// set before (listed in previously) that over no longer has, and lays over
// on top.
func mergeManaged(base, over map[string]string, previously string) map[string]string {
	if len(base) == 0 && len(over) == 0 {
		return nil
	}
	out := make(map[string]string, len(base)+len(over))
	for k, v := range base {
		out[k] = v
	}
	for _, k := range strings.Split(previously, ",") {
		if _, keep := over[k]; !keep {
			delete(out, k)
		}
	}
	for k, v := range over {
		out[k] = v
	}
	return out
}
