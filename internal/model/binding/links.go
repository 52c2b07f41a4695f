package binding

import (
	"context"
	"errors"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Finalizer holds a binding until its Works are deleted.
const Finalizer = "karmada.io/binding-controller"

// ExecutionFinalizer is the execution controller's finalizer (see package
// execution), set on Works at creation.
const ExecutionFinalizer = "karmada.io/execution-controller"

// ErrTemplatesLoading is the error that, wrapped by a TemplateGetter, means the templates of a
// kind are not loaded yet; callers retry shortly without reporting an error.
var ErrTemplatesLoading = errors.New("templates are still loading")

// TemplateGetter reads resource templates, normally from the detector's
// informers, so templates are cached once per process.
type TemplateGetter interface {
	// Template returns the template, or found=false if it does not exist.
	Template(gvk schema.GroupVersionKind, namespace, name string) (obj *unstructured.Unstructured, found bool, err error)
}

// WorkOwner maps a Work to the request of its binding of the given kind, if any.
func WorkOwner(w client.Object, kind Kind) []reconcile.Request {
	a := w.GetAnnotations()
	if kind == ClusterScoped {
		if n := a[ClusterNameAnnotation]; n != "" {
			return []reconcile.Request{{NamespacedName: client.ObjectKey{Name: n}}}
		}
		return nil
	}
	if n, ns := a[NameAnnotation], a[NamespaceAnnotation]; n != "" && ns != "" {
		return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: n}}}
	}
	return nil
}

// WorkBindingIndex is the cache index of Works by the permanent id of the
// binding that owns them, so a binding finds its Works without scanning all.
const WorkBindingIndex = "flotilla.io/binding-id"

// IndexWorksByBinding registers WorkBindingIndex with the manager's cache.
func IndexWorksByBinding(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &workv1alpha1.Work{}, WorkBindingIndex, func(o client.Object) []string {
		var ids []string
		for _, k := range []string{PermanentIDLabel, ClusterPermanentIDLabel} {
			if id := o.GetLabels()[k]; id != "" {
				ids = append(ids, id)
			}
		}
		return ids
	})
}
