package native

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// objBuilder builds unstructured objects fluently. Values must be JSON-compatible
// (int64, float64, string, bool, []any, map[string]any).
type objBuilder struct{ u *unstructured.Unstructured }

func newObj(apiVersion, kind, name string) *objBuilder {
	u := &unstructured.Unstructured{Object: map[string]any{}}
	u.SetAPIVersion(apiVersion)
	u.SetKind(kind)
	u.SetNamespace("default")
	u.SetName(name)
	return &objBuilder{u}
}

func deploy(name string) *objBuilder      { return newObj("apps/v1", "Deployment", name) }
func statefulSet(name string) *objBuilder { return newObj("apps/v1", "StatefulSet", name) }
func replicaSet(name string) *objBuilder  { return newObj("apps/v1", "ReplicaSet", name) }
func daemonSet(name string) *objBuilder   { return newObj("apps/v1", "DaemonSet", name) }
func job(name string) *objBuilder         { return newObj("batch/v1", "Job", name) }
func cronJob(name string) *objBuilder     { return newObj("batch/v1", "CronJob", name) }
func pod(name string) *objBuilder         { return newObj("v1", "Pod", name) }
func service(name string) *objBuilder     { return newObj("v1", "Service", name) }
func pvc(name string) *objBuilder         { return newObj("v1", "PersistentVolumeClaim", name) }
func ingress(name string) *objBuilder     { return newObj("networking.k8s.io/v1", "Ingress", name) }

func (b *objBuilder) namespace(ns string) *objBuilder { b.u.SetNamespace(ns); return b }

func (b *objBuilder) generation(g int64) *objBuilder { b.u.SetGeneration(g); return b }

func (b *objBuilder) annotate(k, v string) *objBuilder {
	a := b.u.GetAnnotations()
	if a == nil {
		a = map[string]string{}
	}
	a[k] = v
	b.u.SetAnnotations(a)
	return b
}

// set stores a JSON value at a path, creating intermediate maps.
func (b *objBuilder) set(value any, path ...string) *objBuilder {
	if err := unstructured.SetNestedField(b.u.Object, value, path...); err != nil {
		panic(err)
	}
	return b
}

// spec merges a JSON document into .spec.
func (b *objBuilder) spec(doc string) *objBuilder { return b.set(jsonValue(doc), "spec") }

// status sets .status from a JSON document.
func (b *objBuilder) status(doc string) *objBuilder { return b.set(jsonValue(doc), "status") }

func (b *objBuilder) obj() *unstructured.Unstructured { return b.u }

// jsonValue decodes a JSON document the way an unstructured decoder does (integers as int64).
func jsonValue(doc string) any {
	u := &unstructured.Unstructured{}
	if err := u.UnmarshalJSON([]byte(`{"apiVersion":"v1","kind":"X","v":` + doc + `}`)); err != nil {
		panic(err)
	}
	return u.Object["v"]
}

// item is one cluster's reflected status; an empty doc means "not reported yet".
func item(cluster, doc string) workv1alpha2.AggregatedStatusItem {
	it := workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Applied: true}
	if doc != "" {
		it.Status = &runtime.RawExtension{Raw: []byte(doc)}
	}
	return it
}

// decodeJSON decodes JSON into a generic value for comparison; "" decodes to nil.
func decodeJSON(t *testing.T, raw []byte) any {
	t.Helper()
	if len(raw) == 0 {
		return nil
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("invalid JSON %s: %v", raw, err)
	}
	return v
}

// quantityEqual compares resource quantities by value.
var quantityEqual = cmp.Comparer(func(a, b resource.Quantity) bool { return a.Cmp(b) == 0 })
