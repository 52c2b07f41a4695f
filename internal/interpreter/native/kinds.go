package native

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// The kinds with built-in rules, by API group and kind.
var (
	deploymentKind  = schema.GroupKind{Group: "apps", Kind: "Deployment"}
	statefulSetKind = schema.GroupKind{Group: "apps", Kind: "StatefulSet"}
	replicaSetKind  = schema.GroupKind{Group: "apps", Kind: "ReplicaSet"}
	daemonSetKind   = schema.GroupKind{Group: "apps", Kind: "DaemonSet"}
	jobKind         = schema.GroupKind{Group: "batch", Kind: "Job"}
	cronJobKind     = schema.GroupKind{Group: "batch", Kind: "CronJob"}
	podKind         = schema.GroupKind{Kind: "Pod"}
	serviceKind     = schema.GroupKind{Kind: "Service"}
	pvcKind         = schema.GroupKind{Kind: "PersistentVolumeClaim"}
	pvKind          = schema.GroupKind{Kind: "PersistentVolume"}
	ingressKind     = schema.GroupKind{Group: "networking.k8s.io", Kind: "Ingress"}
	pdbKind         = schema.GroupKind{Group: "policy", Kind: "PodDisruptionBudget"}
	hpaKind         = schema.GroupKind{Group: "autoscaling", Kind: "HorizontalPodAutoscaler"}
)

// ErrUnsupportedKind is returned (wrapped) by operations that have no meaning for the object's
// kind, such as revising the replicas of a ConfigMap.
var ErrUnsupportedKind = errors.New("operation not supported for this kind")

func groupKindOf(obj *unstructured.Unstructured) schema.GroupKind {
	return obj.GroupVersionKind().GroupKind()
}

func describe(obj *unstructured.Unstructured) string {
	return fmt.Sprintf("%s %s/%s", obj.GetKind(), obj.GetNamespace(), obj.GetName())
}

// typedField converts obj's nested map at path into a typed value. It reports false, with no
// error, when the field is absent.
func typedField(obj *unstructured.Unstructured, into any, path ...string) (bool, error) {
	m, found, err := unstructured.NestedMap(obj.Object, path...)
	if err != nil || !found {
		return false, err
	}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(m, into); err != nil {
		return false, err
	}
	return true, nil
}

// withStatus returns a deep copy of obj whose .status is the given typed status.
func withStatus(obj *unstructured.Unstructured, status any) (*unstructured.Unstructured, error) {
	m, err := runtime.DefaultUnstructuredConverter.ToUnstructured(status)
	if err != nil {
		return nil, fmt.Errorf("converting the status of %s: %w", describe(obj), err)
	}
	out := obj.DeepCopy()
	out.Object["status"] = m
	return out, nil
}

// decodeItem unmarshals one cluster's reflected status. It reports false when the cluster has
// no status yet.
func decodeItem(item workv1alpha2.AggregatedStatusItem, into any) (bool, error) {
	if item.Status == nil || len(item.Status.Raw) == 0 || string(item.Status.Raw) == "null" {
		return false, nil
	}
	if err := json.Unmarshal(item.Status.Raw, into); err != nil {
		return false, fmt.Errorf("decoding the status reported by cluster %q: %w", item.ClusterName, err)
	}
	return true, nil
}

// intValue reads an integer held in an unstructured map; absent or non-integer values read as 0.
func intValue(m map[string]any, key string) int64 {
	n, _ := asInt64(m[key])
	return n
}

// asInt64 converts the numeric types an unstructured decoder may produce to int64. It reports
// false for anything else, fractional numbers included.
func asInt64(v any) (int64, bool) {
	switch n := v.(type) {
	case int64:
		return n, true
	case int32:
		return int64(n), true
	case int:
		return int64(n), true
	case float64:
		if n != math.Trunc(n) || math.IsInf(n, 0) {
			return 0, false
		}
		return int64(n), true
	case json.Number:
		i, err := n.Int64()
		return i, err == nil
	default:
		return 0, false
	}
}
