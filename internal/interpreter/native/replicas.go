package native

import (
	"fmt"
	"math"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	resourcehelper "k8s.io/component-helpers/resource"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// GetReplicas implements Karmada's InterpretReplica operation for built-in kinds. It returns the
// desired replica count of obj and the scheduling needs of one replica:
//   - Deployment, StatefulSet, ReplicaSet: spec.replicas, 1 when unset (the API default);
//   - Job: spec.parallelism (1 when unset, the API default), capped at spec.completions when that
//     is set and smaller: a Job with fixed completions never runs more pods at once than it has
//     completions left, so Karmada schedules min(parallelism, completions) replicas;
//   - Pod: always 1.
//
// The requirements are nil when the pod spec has neither resource requests nor node
// constraints, as in Karmada; otherwise ResourceRequest is the pod's effective request (see
// podRequests), NodeClaim holds nodeSelector, tolerations and the required node affinity,
// Namespace is obj's namespace and PriorityClassName the pod's priority class.
//
// ok is false for kinds without replicas (CronJob, Service, ConfigMap, custom kinds, ...) and
// for objects whose spec cannot be read as the kind's type.
func GetReplicas(obj *unstructured.Unstructured) (replicas int32, req *workv1alpha2.ReplicaRequirements, ok bool) {
	if obj == nil {
		return 0, nil, false
	}
	var spec *corev1.PodSpec
	switch groupKindOf(obj) {
	case deploymentKind, statefulSetKind, replicaSetKind:
		replicas, ok = specInt32(obj, "replicas", 1)
		spec, ok = podTemplateSpec(obj, ok)
	case jobKind:
		replicas, ok = jobReplicas(obj)
		spec, ok = podTemplateSpec(obj, ok)
	case podKind:
		spec = &corev1.PodSpec{}
		_, err := typedField(obj, spec, "spec")
		replicas, ok = 1, err == nil
	default:
		return 0, nil, false
	}
	if !ok {
		return 0, nil, false
	}
	return replicas, PodRequirements(spec, obj.GetNamespace()), true
}

// jobReplicas is the number of pods a Job runs at once: spec.parallelism, no more than
// spec.completions. A work-queue Job (completions unset) runs spec.parallelism pods.
func jobReplicas(obj *unstructured.Unstructured) (int32, bool) {
	parallelism, ok := specInt32(obj, "parallelism", 1)
	if !ok {
		return 0, false
	}
	completions, ok := specInt32(obj, "completions", parallelism)
	if !ok {
		return 0, false
	}
	return min(parallelism, completions), true
}

// specInt32 reads spec.<field> as an int32, def when absent; ok is false when it is not a
// non-negative integer in range.
func specInt32(obj *unstructured.Unstructured, field string, def int32) (int32, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj.Object, "spec", field)
	if err != nil {
		return 0, false
	}
	if !found || v == nil {
		return def, true
	}
	n, ok := asInt64(v)
	if !ok || n < 0 || n > math.MaxInt32 {
		return 0, false
	}
	return int32(n), true
}

func podTemplateSpec(obj *unstructured.Unstructured, ok bool) (*corev1.PodSpec, bool) {
	if !ok {
		return nil, false
	}
	tmpl := &corev1.PodTemplateSpec{}
	if _, err := typedField(obj, tmpl, "spec", "template"); err != nil {
		return nil, false
	}
	return &tmpl.Spec, true
}

// PodRequirements are the scheduling needs of one replica running spec: its node claim
// (nodeSelector, tolerations, required node affinity), its effective resource request (see
// podRequests), its priority class, and namespace as given. It is nil when the pod spec has
// neither requests nor node constraints. It is the kube.accuratePodRequirements of the Lua
// library.
func PodRequirements(spec *corev1.PodSpec, namespace string) *workv1alpha2.ReplicaRequirements {
	claim := nodeClaim(spec)
	requests := podRequests(spec)
	if claim == nil && requests == nil {
		return nil
	}
	return &workv1alpha2.ReplicaRequirements{
		NodeClaim:         claim,
		ResourceRequest:   requests,
		Namespace:         namespace,
		PriorityClassName: spec.PriorityClassName,
	}
}

// nodeClaim collects the node constraints of a pod spec, nil when it has none.
func nodeClaim(spec *corev1.PodSpec) *workv1alpha2.NodeClaim {
	claim := &workv1alpha2.NodeClaim{
		NodeSelector: spec.NodeSelector,
		Tolerations:  spec.Tolerations,
	}
	if a := spec.Affinity; a != nil && a.NodeAffinity != nil {
		claim.HardNodeAffinity = a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution
	}
	if len(claim.NodeSelector) == 0 && len(claim.Tolerations) == 0 && claim.HardNodeAffinity == nil {
		return nil
	}
	return claim
}

// podRequests computes the effective resource request of one pod the way kube-scheduler does
// (k8s.io/component-helpers/resource.PodRequests): the sum over regular and sidecar containers,
// raised to the largest init container where that is bigger, pod-level requests where set, plus
// the pod overhead. As in Karmada, a container's limit stands in for a missing request, since
// API-server defaulting has not run on a pod template. Zero quantities are dropped; the result
// is nil when nothing is requested.
func podRequests(spec *corev1.PodSpec) corev1.ResourceList {
	pod := &corev1.Pod{Spec: corev1.PodSpec{
		Containers:     requestsDefaultedToLimits(spec.Containers),
		InitContainers: requestsDefaultedToLimits(spec.InitContainers),
		Overhead:       spec.Overhead,
		Resources:      spec.Resources,
	}}
	list := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	for name, q := range list {
		if q.IsZero() {
			delete(list, name)
		}
	}
	if len(list) == 0 {
		return nil
	}
	return list
}

// requestsDefaultedToLimits returns copies of the containers carrying only what the request
// computation reads, with each missing request set to the container's limit.
func requestsDefaultedToLimits(in []corev1.Container) []corev1.Container {
	if len(in) == 0 {
		return nil
	}
	out := make([]corev1.Container, len(in))
	for i := range in {
		requests := in[i].Resources.Requests.DeepCopy()
		for name, limit := range in[i].Resources.Limits {
			if _, set := requests[name]; !set {
				if requests == nil {
					requests = corev1.ResourceList{}
				}
				requests[name] = limit.DeepCopy()
			}
		}
		out[i] = corev1.Container{
			Name:          in[i].Name,
			Resources:     corev1.ResourceRequirements{Requests: requests},
			RestartPolicy: in[i].RestartPolicy,
		}
	}
	return out
}

// ReviseReplica implements Karmada's ReviseReplica operation: it returns a copy of obj that runs
// replicas replicas in one member cluster. It sets spec.replicas for Deployment, StatefulSet and
// ReplicaSet, and spec.parallelism for Job. A Job's spec.completions is not touched here: as in
// Karmada, it is divided among clusters separately (DivideJobCompletions) because the share
// depends on every cluster's replicas; ReviseDividedReplicas does both.
//
// It returns an error wrapping ErrUnsupportedKind for other kinds (Pods included), and an error
// when replicas is negative or above MaxInt32.
func ReviseReplica(obj *unstructured.Unstructured, replicas int64) (*unstructured.Unstructured, error) {
	if obj == nil {
		return nil, fmt.Errorf("revising replicas: nil object")
	}
	var field string
	switch groupKindOf(obj) {
	case deploymentKind, statefulSetKind, replicaSetKind:
		field = "replicas"
	case jobKind:
		field = "parallelism"
	default:
		return nil, fmt.Errorf("revising replicas of %s: %w", describe(obj), ErrUnsupportedKind)
	}
	return setSpecCount(obj, field, replicas)
}

// ReviseDividedReplicas returns the copy of obj that member cluster target runs when the
// binding's replicas are Divided among clusters (the binding's spec.clusters): every field that
// scales with the replicas gets the cluster's share, as Karmada's binding controller does when
// it renders a Work.
//   - Deployment, StatefulSet, ReplicaSet: spec.replicas = target.Replicas;
//   - Job: spec.parallelism = target.Replicas, and spec.completions (when set) = the cluster's
//     share from DivideJobCompletions, so that the members together run the template's
//     completions once and not once per cluster. A work-queue Job (no spec.completions) keeps
//     it unset.
//
// target must be one of clusters. It returns an error wrapping ErrUnsupportedKind for kinds
// without replicas, and the errors of ReviseReplica and DivideJobCompletions.
func ReviseDividedReplicas(obj *unstructured.Unstructured, clusters []workv1alpha2.TargetCluster, target workv1alpha2.TargetCluster) (*unstructured.Unstructured, error) {
	out, err := ReviseReplica(obj, int64(target.Replicas))
	if err != nil || groupKindOf(obj) != jobKind {
		return out, err
	}
	shares, err := DivideJobCompletions(obj, clusters)
	if err != nil {
		return nil, err
	}
	for _, share := range shares {
		if share.Name == target.Name {
			return setSpecCount(out, "completions", int64(share.Replicas))
		}
	}
	// No completions to divide (work-queue Job, or no cluster with replicas), or target is not
	// among clusters: nothing to share out.
	return out, nil
}

// ReviseJobCompletions returns a copy of a Job with spec.completions set to completions, the
// share of one member cluster computed by DivideJobCompletions. It returns an error wrapping
// ErrUnsupportedKind for other kinds, and an error when completions is out of the int32 range.
func ReviseJobCompletions(obj *unstructured.Unstructured, completions int64) (*unstructured.Unstructured, error) {
	if obj == nil || groupKindOf(obj) != jobKind {
		return nil, fmt.Errorf("revising job completions: %w", ErrUnsupportedKind)
	}
	return setSpecCount(obj, "completions", completions)
}

func setSpecCount(obj *unstructured.Unstructured, field string, n int64) (*unstructured.Unstructured, error) {
	if n < 0 || n > math.MaxInt32 {
		return nil, fmt.Errorf("setting spec.%s of %s to %d: out of range", field, describe(obj), n)
	}
	out := obj.DeepCopy()
	if err := unstructured.SetNestedField(out.Object, n, "spec", field); err != nil {
		return nil, fmt.Errorf("setting spec.%s of %s: %w", field, describe(obj), err)
	}
	return out, nil
}

// DivideJobCompletions splits a Job's spec.completions among its target clusters in proportion
// to each cluster's scheduled replicas (its parallelism there), as Karmada's binding controller
// does when replicas are Divided. Every cluster first gets the floor of its proportional share;
// the remainder goes one by one to the clusters with the most replicas (ties by name). The result
// is in the order of clusters.
//
// It returns nil, with no error, when spec.completions is unset (a work-queue Job, which every
// cluster runs until its own work runs out) or when no cluster has replicas. It returns an error
// wrapping ErrUnsupportedKind when job is not a Job, and an error when spec.completions is not a
// non-negative integer.
func DivideJobCompletions(job *unstructured.Unstructured, clusters []workv1alpha2.TargetCluster) ([]workv1alpha2.TargetCluster, error) {
	if job == nil || groupKindOf(job) != jobKind {
		return nil, fmt.Errorf("dividing job completions: %w", ErrUnsupportedKind)
	}
	v, found, err := unstructured.NestedFieldNoCopy(job.Object, "spec", "completions")
	if err != nil {
		return nil, fmt.Errorf("reading spec.completions of %s: %w", describe(job), err)
	}
	if !found || v == nil {
		return nil, nil
	}
	completions, ok := specInt32(job, "completions", 0)
	if !ok {
		return nil, fmt.Errorf("reading spec.completions of %s: not a non-negative int32: %v", describe(job), v)
	}
	var weightSum int64
	for _, c := range clusters {
		weightSum += int64(max(c.Replicas, 0))
	}
	if weightSum == 0 {
		return nil, nil
	}
	out := make([]workv1alpha2.TargetCluster, len(clusters))
	remain := int64(completions)
	for i, c := range clusters {
		share := int64(completions) * int64(max(c.Replicas, 0)) / weightSum
		out[i] = workv1alpha2.TargetCluster{Name: c.Name, Replicas: int32(share)}
		remain -= share
	}
	order := make([]int, len(clusters))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		ca, cb := clusters[order[a]], clusters[order[b]]
		if ca.Replicas != cb.Replicas {
			return ca.Replicas > cb.Replicas
		}
		return ca.Name < cb.Name
	})
	for i := 0; remain > 0; i = (i + 1) % len(order) {
		out[order[i]].Replicas++
		remain--
	}
	return out, nil
}
