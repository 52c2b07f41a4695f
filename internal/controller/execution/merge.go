package execution

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	"github.com/flotilla-io/flotilla/internal/binding"
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

// Merge returns the object to send as an update: desired's content on top
// of the existing object's identity (resourceVersion, uid), with the
// existing labels and annotations kept unless desired sets them, and the
// fields each member owns retained: a Service's cluster IPs and node ports,
// a PVC's bound volume, a Job's generated selector and pod labels, a Pod's
// node. Updating in place keeps the object's uid, so adopting it
// (conflictResolution Overwrite) restarts nothing.
func Merge(desired, existing *unstructured.Unstructured) *unstructured.Unstructured {
	out := desired.DeepCopy()
	out.SetResourceVersion(existing.GetResourceVersion())
	out.SetUID(existing.GetUID())
	previously := existing.GetAnnotations()
	out.SetLabels(mergeManaged(existing.GetLabels(), desired.GetLabels(), previously[binding.ManagedLabelsAnnotation]))
	out.SetAnnotations(mergeManaged(existing.GetAnnotations(), desired.GetAnnotations(), previously[binding.ManagedAnnotationsAnnotation]))
	if st, ok := existing.Object["status"]; ok {
		out.Object["status"] = st
	}
	keep := func(path ...string) {
		if _, set, _ := unstructured.NestedFieldNoCopy(out.Object, path...); set {
			return
		}
		if v, found, _ := unstructured.NestedFieldCopy(existing.Object, path...); found {
			_ = unstructured.SetNestedField(out.Object, v, path...)
		}
	}
	switch existing.GetKind() {
	case "Service":
		keep("spec", "clusterIP")
		keep("spec", "clusterIPs")
		keep("spec", "healthCheckNodePort")
		keep("spec", "ipFamilies")
		keep("spec", "ipFamilyPolicy")
		retainNodePorts(out, existing)
	case "PersistentVolumeClaim":
		keep("spec", "volumeName")
	case "Job":
		keep("spec", "selector")
		keep("spec", "template", "metadata", "labels")
	case "Pod":
		keep("spec", "nodeName")
	case "ServiceAccount":
		keep("secrets")
	}
	return out
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

// retainNodePorts copies each port's nodePort from the member's Service when
// desired leaves it unset, matching ports by name or by port number.
func retainNodePorts(out, existing *unstructured.Unstructured) {
	desiredPorts, _, _ := unstructured.NestedSlice(out.Object, "spec", "ports")
	existingPorts, _, _ := unstructured.NestedSlice(existing.Object, "spec", "ports")
	for i, dp := range desiredPorts {
		d, _ := dp.(map[string]any)
		if d == nil || d["nodePort"] != nil {
			continue
		}
		for _, ep := range existingPorts {
			e, _ := ep.(map[string]any)
			if e != nil && e["nodePort"] != nil && (e["name"] == d["name"] && e["port"] == d["port"]) {
				d["nodePort"] = e["nodePort"]
			}
		}
		desiredPorts[i] = d
	}
	if len(desiredPorts) > 0 {
		_ = unstructured.SetNestedSlice(out.Object, desiredPorts, "spec", "ports")
	}
}
