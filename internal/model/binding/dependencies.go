package binding

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"

	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/utils/ptr"
	"sigs.k8s.io/controller-runtime/pkg/client"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Keys of Karmada's dependency propagation (propagateDeps).
const (
	// DependenciesAnnotation on a workload's binding lists, as a JSON
	// array of {apiVersion, kind, namespace, name}, the objects its pod
	// template refers to that follow it to its clusters.
	DependenciesAnnotation = "resourcebinding.karmada.io/dependencies"
	// DependedByLabelPrefix starts, on a dependency's binding, one label
	// per binding that requires it (DependedByLabel); the value is the
	// requiring binding's permanent id.
	DependedByLabelPrefix = "resourcebinding.karmada.io/depended-by-"
)

// DependedByLabel is the label key that marks a dependency's binding as
// required by the binding namespace/name: DependedByLabelPrefix plus a
// short hash of the namespace and name, so the key stays a valid label key
// whatever the length of the name.
func DependedByLabel(namespace, name string) string {
	h := fnv.New32a()
	if namespace != "" {
		fmt.Fprintf(h, "%s/%s", namespace, name)
	} else {
		h.Write([]byte(name))
	}
	return DependedByLabelPrefix + rand.SafeEncodeString(fmt.Sprint(h.Sum32()))
}

// Targets is every cluster the binding's resource goes to: spec.clusters
// (the scheduler's decision, with its replicas) and, after them, each
// cluster a binding in spec.requiredBy is on (Karmada's attached bindings:
// a dependency goes wherever a workload that needs it goes). Each cluster
// appears once; the replicas are spec.clusters' own.
func Targets(spec *workv1alpha2.ResourceBindingSpec) []workv1alpha2.TargetCluster {
	if len(spec.RequiredBy) == 0 {
		return spec.Clusters
	}
	out := append([]workv1alpha2.TargetCluster{}, spec.Clusters...)
	seen := make(map[string]bool, len(out))
	for _, tc := range out {
		seen[tc.Name] = true
	}
	for _, r := range spec.RequiredBy {
		for _, tc := range r.Clusters {
			if !seen[tc.Name] {
				seen[tc.Name] = true
				out = append(out, workv1alpha2.TargetCluster{Name: tc.Name})
			}
		}
	}
	return out
}

// Attached reports a binding that exists only because other bindings
// require its resource: no placement of its own (no policy ever claimed
// it), so it is not scheduled and goes where spec.requiredBy says.
func Attached(b Object) bool {
	return Spec(b).Placement == nil
}

// RequiredByIndex is the field index of ResourceBindings by each binding
// listed in their spec.requiredBy, as "namespace/name".
const RequiredByIndex = "flotilla.requiredBy"

// IndexBindingsByRequirer registers RequiredByIndex on ResourceBindings.
func IndexBindingsByRequirer(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &workv1alpha2.ResourceBinding{}, RequiredByIndex, func(o client.Object) []string {
		rb, ok := o.(*workv1alpha2.ResourceBinding)
		if !ok {
			return nil
		}
		keys := make([]string, 0, len(rb.Spec.RequiredBy))
		for _, r := range rb.Spec.RequiredBy {
			keys = append(keys, r.Namespace+"/"+r.Name)
		}
		return keys
	})
}

// SetRequirement puts entry into spec.requiredBy, replacing the entry of
// the same requirer (namespace and name). It reports whether spec changed.
func SetRequirement(spec *workv1alpha2.ResourceBindingSpec, entry workv1alpha2.BindingSnapshot) bool {
	i := slices.IndexFunc(spec.RequiredBy, func(s workv1alpha2.BindingSnapshot) bool {
		return s.Namespace == entry.Namespace && s.Name == entry.Name
	})
	if i < 0 {
		spec.RequiredBy = append(spec.RequiredBy, entry)
		return true
	}
	if equality.Semantic.DeepEqual(spec.RequiredBy[i], entry) {
		return false
	}
	spec.RequiredBy[i] = entry
	return true
}

// DropRequirement removes the entry of requirer namespace/name from
// spec.requiredBy. It reports whether there was one.
func DropRequirement(spec *workv1alpha2.ResourceBindingSpec, namespace, name string) bool {
	n := len(spec.RequiredBy)
	spec.RequiredBy = slices.DeleteFunc(spec.RequiredBy, func(s workv1alpha2.BindingSnapshot) bool {
		return s.Namespace == namespace && s.Name == name
	})
	return len(spec.RequiredBy) != n
}

// PointAt makes a binding no policy claims refer to template t, at its
// current version (the binding controller renders once the binding names
// the version its cache has), and be owned by it (it goes when t goes).
func PointAt(b Object, t *unstructured.Unstructured) {
	Spec(b).Resource = workv1alpha2.ObjectReference{APIVersion: t.GetAPIVersion(), Kind: t.GetKind(), Namespace: t.GetNamespace(),
		Name: t.GetName(), UID: t.GetUID(), ResourceVersion: t.GetResourceVersion()}
	b.SetOwnerReferences([]metav1.OwnerReference{{APIVersion: t.GetAPIVersion(), Kind: t.GetKind(), Name: t.GetName(), UID: t.GetUID(),
		Controller: ptr.To(true), BlockOwnerDeletion: ptr.To(true)}})
}
