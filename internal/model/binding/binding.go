// Package binding gives one view over Karmada's namespaced ResourceBinding
// and cluster-scoped ClusterResourceBinding (work.karmada.io/v1alpha2), so
// the detector, scheduler, binding and status controllers have one generic
// core for the twins, and holds the well-known labels and annotations that
// tie templates, bindings, Works and member objects together.
package binding

import (
	"context"
	"fmt"
	"hash/fnv"
	"slices"
	"sort"
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// Labels and annotations Karmada uses to link objects, with the same keys.
const (
	// PermanentIDLabel is set on a binding when it is created; Works carry
	// it too, so a binding finds its Works with one label selector.
	PermanentIDLabel = "resourcebinding.karmada.io/permanent-id"
	// ClusterPermanentIDLabel is PermanentIDLabel for ClusterResourceBindings.
	ClusterPermanentIDLabel = "clusterresourcebinding.karmada.io/permanent-id"
	// NameAnnotation and NamespaceAnnotation on a Work name its binding.
	NameAnnotation          = "resourcebinding.karmada.io/name"
	NamespaceAnnotation     = "resourcebinding.karmada.io/namespace"
	ClusterNameAnnotation   = "clusterresourcebinding.karmada.io/name"
	WorkNameAnnotation      = "work.karmada.io/name"
	WorkNamespaceAnnotation = "work.karmada.io/namespace"
	// ManagedLabelsAnnotation and ManagedAnnotationsAnnotation on a
	// manifest list, comma-separated, the label and annotation keys
	// Flotilla sets on the member object; a key that disappears from the
	// list is removed from the member object.
	ManagedLabelsAnnotation      = "resourcetemplate.karmada.io/managed-labels"
	ManagedAnnotationsAnnotation = "resourcetemplate.karmada.io/managed-annotations"
)

// TemplateUIDAnnotation on a manifest (and so on the member object) holds
// the uid of its resource template, as in Karmada: events about a member
// copy are raised on the template with it, so `kubectl describe` finds them.
const TemplateUIDAnnotation = "resourcetemplate.karmada.io/uid"

// StaleRenderingAnnotation on a Work says it holds an earlier rendering of
// its template because the current one could not be made for its cluster
// (an OverridePolicy that does not apply there); the value is why. The
// binding controller sets it and removes it with the next good rendering;
// the status controller reports FullyApplied False while any target
// cluster's Work carries it. Flotilla's own: Karmada leaves the Work
// silently stale.
const StaleRenderingAnnotation = "work.flotilla.io/stale-rendering"

// KeyList returns the sorted keys of m, plus extra, comma-separated: the
// value of ManagedLabelsAnnotation and ManagedAnnotationsAnnotation.
func KeyList(m map[string]string, extra ...string) string {
	keys := append([]string{}, extra...)
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return strings.Join(slices.Compact(keys), ",")
}

// Ref names a binding in messages the way Karmada's events do:
// ResourceBinding(namespace/name) or ClusterResourceBinding(name).
func Ref(b Object) string {
	if b.GetNamespace() == "" {
		return "ClusterResourceBinding(" + b.GetName() + ")"
	}
	return "ResourceBinding(" + b.GetNamespace() + "/" + b.GetName() + ")"
}

// MarkManaged adds to a manifest what every object Flotilla sends to a
// member carries: the managed label (registry.ManagedLabel), the lists
// of label and annotation keys Flotilla sets (ManagedLabelsAnnotation,
// ManagedAnnotationsAnnotation, so keys dropped later are removed from the
// member too), and the Work it comes from (WorkNamespaceAnnotation,
// WorkNameAnnotation). It returns the annotations, for callers to add more.
func MarkManaged(m *unstructured.Unstructured, managedLabel, workNamespace, workName string) map[string]string {
	labels := m.GetLabels()
	if labels == nil {
		labels = map[string]string{}
	}
	labels[managedLabel] = "true"
	m.SetLabels(labels)
	ann := m.GetAnnotations()
	if ann == nil {
		ann = map[string]string{}
	}
	ann[ManagedLabelsAnnotation] = KeyList(labels)
	ann[ManagedAnnotationsAnnotation] = KeyList(ann, ManagedLabelsAnnotation, ManagedAnnotationsAnnotation)
	ann[WorkNamespaceAnnotation] = workNamespace
	ann[WorkNameAnnotation] = workName
	m.SetAnnotations(ann)
	return ann
}

// Name is the binding name Karmada gives a template: <name>-<lowercase kind>.
func Name(templateName, kind string) string {
	return templateName + "-" + strings.ToLower(kind)
}

// WorkName is the name of the Work for a template in an execution
// namespace: the template name plus a hash of kind, namespace and name, so
// same-named templates of different kinds never collide.
func WorkName(kind, namespace, name string) string {
	h := fnv.New32a()
	fmt.Fprintf(h, "%s/%s/%s", kind, namespace, name)
	base := strings.ToLower(name)
	if len(base) > 240 {
		base = base[:240]
	}
	return fmt.Sprintf("%s-%x", base, h.Sum32())
}

// Object is either twin: a ResourceBinding or a ClusterResourceBinding,
// with its spec and status behind accessors.
type Object interface {
	client.Object
	// GetSpec returns the binding's spec, for reading and writing in place.
	GetSpec() *workv1alpha2.ResourceBindingSpec
	// GetStatus returns the binding's status, for reading and writing in place.
	GetStatus() *workv1alpha2.ResourceBindingStatus
}

var (
	_ Object = &workv1alpha2.ResourceBinding{}
	_ Object = &workv1alpha2.ClusterResourceBinding{}
)

// New returns an empty binding object: a ResourceBinding when namespace is
// set, else a ClusterResourceBinding.
func New(namespace, name string) Object {
	if namespace == "" {
		b := &workv1alpha2.ClusterResourceBinding{}
		b.Name = name
		return b
	}
	b := &workv1alpha2.ResourceBinding{}
	b.Namespace, b.Name = namespace, name
	return b
}

// Spec returns the binding's spec, for reading and writing in place.
func Spec(b Object) *workv1alpha2.ResourceBindingSpec { return b.GetSpec() }

// Status returns the binding's status, for reading and writing in place.
func Status(b Object) *workv1alpha2.ResourceBindingStatus { return b.GetStatus() }

// IDLabel is the permanent-id label key for this kind of binding.
func IDLabel(obj client.Object) string {
	if obj.GetNamespace() == "" {
		return ClusterPermanentIDLabel
	}
	return PermanentIDLabel
}

// ResourceGVK is the template's group, version and kind.
func ResourceGVK(spec *workv1alpha2.ResourceBindingSpec) schema.GroupVersionKind {
	return schema.FromAPIVersionAndKind(spec.Resource.APIVersion, spec.Resource.Kind)
}

// TemplateRef is the binding's resource template as an object events can be
// raised on: kind, namespace, name and uid, which are all an event's
// involvedObject needs (and what `kubectl describe` matches on).
func TemplateRef(spec *workv1alpha2.ResourceBindingSpec) *unstructured.Unstructured {
	u := &unstructured.Unstructured{}
	u.SetAPIVersion(spec.Resource.APIVersion)
	u.SetKind(spec.Resource.Kind)
	u.SetNamespace(spec.Resource.Namespace)
	u.SetName(spec.Resource.Name)
	u.SetUID(spec.Resource.UID)
	return u
}

// Kind selects one of the twins; controllers run once per Kind.
type Kind uint8

// The two binding kinds.
const (
	// Namespaced is work.karmada.io/v1alpha2 ResourceBinding.
	Namespaced Kind = iota
	// ClusterScoped is work.karmada.io/v1alpha2 ClusterResourceBinding.
	ClusterScoped
)

// Kinds lists both binding kinds, for controllers that run once per kind.
var Kinds = []Kind{Namespaced, ClusterScoped}

// String is the kind's name, ResourceBinding or ClusterResourceBinding.
func (k Kind) String() string {
	if k == ClusterScoped {
		return "ClusterResourceBinding"
	}
	return "ResourceBinding"
}

// Empty returns an empty object of this kind, for Get and For.
func (k Kind) Empty() Object {
	if k == ClusterScoped {
		return &workv1alpha2.ClusterResourceBinding{}
	}
	return &workv1alpha2.ResourceBinding{}
}

// ControllerName names a controller for this kind: <prefix>-rb or <prefix>-crb.
func (k Kind) ControllerName(prefix string) string {
	if k == ClusterScoped {
		return prefix + "-crb"
	}
	return prefix + "-rb"
}

// EnqueueAll adds every binding of this kind to q: for controllers that
// look at each binding again when something all of them depend on changes
// (a cluster). A failed list enqueues nothing; the next event retries.
func (k Kind) EnqueueAll(ctx context.Context, c client.Reader, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
	keys, err := k.Keys(ctx, c, "")
	if err != nil {
		return
	}
	for _, key := range keys {
		q.Add(reconcile.Request{NamespacedName: key})
	}
}

// Keys lists the keys of every binding of this kind, in namespace when it
// is not empty (namespaced kind only).
func (k Kind) Keys(ctx context.Context, c client.Reader, namespace string) ([]client.ObjectKey, error) {
	return k.KeysWhere(ctx, c, namespace, nil)
}

// RequestsWhere is KeysWhere as reconcile requests, for a watch that maps
// one object to the bindings it concerns; a failed list maps to none (the
// object's next event, or the bindings' own, brings them).
func (k Kind) RequestsWhere(ctx context.Context, c client.Reader, namespace string, keep func(Object) bool) []reconcile.Request {
	keys, err := k.KeysWhere(ctx, c, namespace, keep)
	if err != nil {
		return nil
	}
	out := make([]reconcile.Request, len(keys))
	for i, key := range keys {
		out[i] = reconcile.Request{NamespacedName: key}
	}
	return out
}

// KeysWhere is Keys of the bindings for which keep is true (all when keep
// is nil). Errors are the list's.
func (k Kind) KeysWhere(ctx context.Context, c client.Reader, namespace string, keep func(Object) bool) ([]client.ObjectKey, error) {
	var keys []client.ObjectKey
	add := func(b Object) {
		if keep == nil || keep(b) {
			keys = append(keys, client.ObjectKeyFromObject(b))
		}
	}
	if k == ClusterScoped {
		list := &workv1alpha2.ClusterResourceBindingList{}
		if err := c.List(ctx, list); err != nil {
			return nil, err
		}
		for i := range list.Items {
			add(&list.Items[i])
		}
		return keys, nil
	}
	list := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, list, client.InNamespace(namespace)); err != nil {
		return nil, err
	}
	for i := range list.Items {
		add(&list.Items[i])
	}
	return keys, nil
}
