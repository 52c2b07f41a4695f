// Package promotion turns an object read from a member cluster into what
// `flotilla promote` creates on the control plane, as `karmadactl promote`
// does: a resource template without the fields the member set, and a
// PropagationPolicy (or ClusterPropagationPolicy) that places it back on that
// member with conflictResolution Overwrite, so the running object is adopted
// in place. Everything here is a pure function of its input; talking to the
// clusters is the CLI's job.
package promotion

import (
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/flotilla-io/flotilla/internal/interpreter/native"
)

// LastAppliedAnnotation is where `kubectl apply` keeps the configuration it
// last applied. It describes the member's copy and its field ownership; the
// template starts a history of its own.
const LastAppliedAnnotation = "kubectl.kubernetes.io/last-applied-configuration"

var (
	pvcKind = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	podKind = schema.GroupKind{Kind: "Pod"}
	jobKind = schema.GroupKind{Group: "batch", Kind: "Job"}
)

// memberSetAnnotations are annotations a member's controllers write on a
// claim while binding it; the template must not pretend it is bound.
var memberSetAnnotations = map[schema.GroupKind][]string{
	pvcKind: {"pv.kubernetes.io/bind-completed", "pv.kubernetes.io/bound-by-controller"},
}

// Template returns the resource template for obj, an object read from a
// member cluster: a copy without what the member's API server and
// controllers set. It applies interpreter.Prune (server-set metadata, status,
// and the per-kind fields a member owns: a Deployment's revision annotations,
// a Service's cluster IPs unless headless, a Job's generated selector and pod
// labels, token Secret data, a claim's selected node) and on top of it drops:
//   - the kubectl last-applied-configuration annotation;
//   - a PersistentVolumeClaim's spec.volumeName and bind annotations;
//   - a Pod's spec.nodeName;
//   - a Job's generated controller-uid and job-name labels on the Job itself
//     (the API server copies the pod labels there when the Job has none).
//
// A Job's spec.ttlSecondsAfterFinished, which Prune drops because a member's
// TTL controller would fight propagation, is the user's and is kept: Prune
// drops it again before each Work is written. A Service's node ports are
// kept: whether the user or the member chose them cannot be known, and the
// member already serves them. obj is not modified.
func Template(obj *unstructured.Unstructured) *unstructured.Unstructured {
	out := obj.DeepCopy()
	gk := out.GroupVersionKind().GroupKind()
	ttl, hasTTL, _ := unstructured.NestedFieldCopy(out.Object, "spec", "ttlSecondsAfterFinished")
	generatedJobLabels := gk == jobKind && !manualSelector(out)

	native.Prune(out)

	if gk == jobKind && hasTTL {
		_ = unstructured.SetNestedField(out.Object, ttl, "spec", "ttlSecondsAfterFinished")
	}
	if generatedJobLabels {
		removeKeys(out, []string{"metadata", "labels"},
			"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name")
	}
	removeKeys(out, []string{"metadata", "annotations"}, append([]string{LastAppliedAnnotation}, memberSetAnnotations[gk]...)...)
	switch gk {
	case pvcKind:
		unstructured.RemoveNestedField(out.Object, "spec", "volumeName")
	case podKind:
		unstructured.RemoveNestedField(out.Object, "spec", "nodeName")
	}
	return out
}

func manualSelector(obj *unstructured.Unstructured) bool {
	v, _, _ := unstructured.NestedBool(obj.Object, "spec", "manualSelector")
	return v
}

// removeKeys deletes keys from the string map at path, and the map itself
// when it is left empty.
func removeKeys(obj *unstructured.Unstructured, path []string, keys ...string) {
	m, found, err := unstructured.NestedStringMap(obj.Object, path...)
	if err != nil || !found {
		return
	}
	for _, k := range keys {
		delete(m, k)
	}
	if len(m) == 0 {
		unstructured.RemoveNestedField(obj.Object, path...)
		return
	}
	_ = unstructured.SetNestedStringMap(obj.Object, m, path...)
}
