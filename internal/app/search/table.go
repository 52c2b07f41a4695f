package search

import (
	"context"
	"fmt"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/duration"
	"k8s.io/apiserver/pkg/registry/rest"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	// The built-in kinds, so that cached objects convert to what kube's
	// printers read.
	_ "k8s.io/kubernetes/pkg/apis/apps/install"
	_ "k8s.io/kubernetes/pkg/apis/autoscaling/install"
	_ "k8s.io/kubernetes/pkg/apis/batch/install"
	_ "k8s.io/kubernetes/pkg/apis/core/install"
	_ "k8s.io/kubernetes/pkg/apis/discovery/install"
	_ "k8s.io/kubernetes/pkg/apis/networking/install"
	_ "k8s.io/kubernetes/pkg/apis/policy/install"
	_ "k8s.io/kubernetes/pkg/apis/rbac/install"
	_ "k8s.io/kubernetes/pkg/apis/storage/install"
	"k8s.io/kubernetes/pkg/printers"
	printersinternal "k8s.io/kubernetes/pkg/printers/internalversion"
	printerstorage "k8s.io/kubernetes/pkg/printers/storage"

	searchv1alpha1 "github.com/flotilla-io/flotilla/api/search/v1alpha1"
)

// kubeTables prints built-in kinds as the Kubernetes API server does (the
// columns of kubectl get: READY, STATUS, RESTARTS for pods, ...).
var kubeTables = printerstorage.TableConvertor{TableGenerator: printers.NewTableGenerator().With(printersinternal.AddHandlers)}

// tableConvertor answers kubectl's table requests for cached objects: the
// API server's own columns for built-in kinds, name and age for the others.
// Each row carries the cached object (with its cluster annotation), and a
// last column, CLUSTER, names the member it came from.
type tableConvertor struct {
	fallback rest.TableConvertor
}

func newTableConvertor(gr schema.GroupResource) tableConvertor {
	return tableConvertor{fallback: rest.NewDefaultTableConvertor(gr)}
}

func (t tableConvertor) ConvertToTable(ctx context.Context, obj runtime.Object, opts runtime.Object) (*metav1.Table, error) {
	var items []*unstructured.Unstructured
	var gvk schema.GroupVersionKind
	if l, ok := obj.(*rawList); ok {
		obj = l.decoded()
	}
	switch o := obj.(type) {
	case *unstructured.Unstructured:
		items, gvk = []*unstructured.Unstructured{o}, o.GroupVersionKind()
	case *unstructured.UnstructuredList:
		for i := range o.Items {
			items = append(items, &o.Items[i])
		}
		gv, _ := schema.ParseGroupVersion(o.GetAPIVersion())
		gvk = gv.WithKind(o.GetKind()[:max(0, len(o.GetKind())-len("List"))])
	default:
		return t.fallback.ConvertToTable(ctx, obj, opts)
	}
	table, err := t.kubeTable(ctx, gvk, items, opts)
	if err != nil || table == nil {
		if table, err = t.fallback.ConvertToTable(ctx, obj, opts); err != nil {
			return nil, err
		}
	}
	addClusterColumn(table, items)
	if l, err := meta.ListAccessor(obj); err == nil {
		table.ResourceVersion, table.Continue = l.GetResourceVersion(), l.GetContinue()
	}
	return table, nil
}

// addClusterColumn appends the CLUSTER column, one cell per row from its
// item's cached-from-cluster annotation (rows follow items, one each).
func addClusterColumn(table *metav1.Table, items []*unstructured.Unstructured) {
	table.ColumnDefinitions = append(table.ColumnDefinitions, metav1.TableColumnDefinition{
		Name: "Cluster", Type: "string", Description: "The member cluster the object is cached from (" + CachedFromClusterAnnotation + ").",
	})
	for i := range table.Rows {
		cluster := ""
		if i < len(items) {
			cluster = items[i].GetAnnotations()[CachedFromClusterAnnotation]
		}
		table.Rows[i].Cells = append(table.Rows[i].Cells, cluster)
	}
}

// kubeTable prints items with kube's printers, or returns nil when their kind
// is not a built-in one.
func (t tableConvertor) kubeTable(ctx context.Context, gvk schema.GroupVersionKind, items []*unstructured.Unstructured, opts runtime.Object) (*metav1.Table, error) {
	if !legacyscheme.Scheme.Recognizes(gvk) {
		return nil, nil
	}
	internal := schema.GroupVersion{Group: gvk.Group, Version: runtime.APIVersionInternal}
	convert := func(u *unstructured.Unstructured) (runtime.Object, error) {
		typed, err := legacyscheme.Scheme.New(gvk)
		if err != nil {
			return nil, err
		}
		if u != nil {
			if err := runtime.DefaultUnstructuredConverter.FromUnstructured(u.Object, typed); err != nil {
				return nil, err
			}
		}
		return legacyscheme.Scheme.ConvertToVersion(typed, internal)
	}
	var table *metav1.Table
	if len(items) == 0 {
		// The columns still, from an empty object.
		empty, err := convert(nil)
		if err != nil {
			return nil, err
		}
		if table, err = kubeTables.ConvertToTable(ctx, empty, opts); err != nil {
			return nil, err
		}
		table.Rows = nil
		return table, nil
	}
	for _, u := range items {
		in, err := convert(u)
		if err != nil {
			return nil, err
		}
		one, err := kubeTables.ConvertToTable(ctx, in, opts)
		if err != nil {
			return nil, err
		}
		rows := one.Rows
		if table == nil {
			table = one
			table.Rows = nil
		}
		for _, row := range rows {
			row.Object = runtime.RawExtension{Object: u}
			table.Rows = append(table.Rows, row)
		}
	}
	return table, nil
}

// registryTable prints ResourceRegistries for kubectl get: NAME, READY (the
// Ready condition's status, Unknown before the first sync), REASON and AGE.
type registryTable struct{}

func (registryTable) ConvertToTable(_ context.Context, obj runtime.Object, _ runtime.Object) (*metav1.Table, error) {
	table := &metav1.Table{ColumnDefinitions: []metav1.TableColumnDefinition{
		{Name: "Name", Type: "string", Format: "name", Description: "The ResourceRegistry's name."},
		{Name: "Ready", Type: "string", Description: "Whether every selected cluster's cache of every kind is synced (the Ready condition)."},
		{Name: "Reason", Type: "string", Description: "The Ready condition's reason."},
		{Name: "Age", Type: "string", Description: "Time since the ResourceRegistry was created."},
	}}
	add := func(o runtime.Object) error {
		r, ok := o.(*searchv1alpha1.ResourceRegistry)
		if !ok {
			return fmt.Errorf("a %T in a list of ResourceRegistries", o)
		}
		ready, reason := string(metav1.ConditionUnknown), ""
		if c := meta.FindStatusCondition(r.Status.Conditions, searchv1alpha1.ConditionReady); c != nil {
			ready, reason = string(c.Status), c.Reason
		}
		age := "<unknown>"
		if !r.CreationTimestamp.IsZero() {
			age = duration.HumanDuration(time.Since(r.CreationTimestamp.Time))
		}
		table.Rows = append(table.Rows, metav1.TableRow{Cells: []any{r.Name, ready, reason, age}, Object: runtime.RawExtension{Object: r}})
		return nil
	}
	if meta.IsListType(obj) {
		if err := meta.EachListItem(obj, add); err != nil {
			return nil, err
		}
		if l, err := meta.ListAccessor(obj); err == nil {
			table.ResourceVersion, table.Continue, table.RemainingItemCount = l.GetResourceVersion(), l.GetContinue(), l.GetRemainingItemCount()
		}
		return table, nil
	}
	if err := add(obj); err != nil {
		return nil, err
	}
	if m, err := meta.Accessor(obj); err == nil {
		table.ResourceVersion = m.GetResourceVersion()
	}
	return table, nil
}
