package native

import (
	"cmp"
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	apiequality "k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// podPhaseOrder ranks pod phases for aggregation: the first one present in any cluster wins
// (Karmada's order). PodUnknown is deprecated and not ranked.
var podPhaseOrder = []corev1.PodPhase{corev1.PodFailed, corev1.PodPending, corev1.PodRunning, corev1.PodSucceeded}

// aggregatePod computes a Pod template's status, following Karmada: the phase is Failed if the
// Pod failed in any cluster, else Pending if it is pending in any cluster (a cluster not
// reported yet counts as pending), else Running if running anywhere, else Succeeded; the
// container statuses of all clusters are listed with only their readiness and state, without
// their names (Karmada's shape), in cluster-name order and, within a cluster, by container
// name. Other status fields are dropped, except qosClass, which the API server set when the Pod
// was created and does not let change.
//
// The API server (Kubernetes 1.37 pod status validation) rejects an update that lists a
// container status in a non-terminated state when the current status has a terminated one of
// the same name, unless the spec's container of that name may restart; no container is named
// "". So whenever a terminated container is to be shown, or the template shows one already,
// only terminated container statuses are listed: the others are left out until they terminate
// too (and all come back once no cluster reports a terminated container). Listing them would
// get the next update rejected, on every resync.
//
// With no items the template is left alone.
func aggregatePod(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if len(items) == 0 {
		return template, nil
	}
	old := corev1.PodStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	next := corev1.PodStatus{QOSClass: old.QOSClass}
	phases := map[corev1.PodPhase]bool{}
	for _, item := range items {
		member := corev1.PodStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			phases[corev1.PodPending] = true
			continue
		}
		phases[member.Phase] = true
		// The kubelet sorts container statuses by name; sorting again keeps the merged list
		// the same whatever order a member reports them in.
		slices.SortStableFunc(member.ContainerStatuses, func(a, b corev1.ContainerStatus) int { return cmp.Compare(a.Name, b.Name) })
		for _, cs := range member.ContainerStatuses {
			next.ContainerStatuses = append(next.ContainerStatuses, corev1.ContainerStatus{Ready: cs.Ready, State: cs.State})
		}
	}
	for _, p := range podPhaseOrder {
		if phases[p] {
			next.Phase = p
			break
		}
	}
	if slices.ContainsFunc(old.ContainerStatuses, terminated) || slices.ContainsFunc(next.ContainerStatuses, terminated) {
		next.ContainerStatuses = slices.DeleteFunc(next.ContainerStatuses, func(cs corev1.ContainerStatus) bool { return !terminated(cs) })
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// terminated reports whether a container status is in the terminated state.
func terminated(cs corev1.ContainerStatus) bool { return cs.State.Terminated != nil }

// aggregatePVC computes a PersistentVolumeClaim template's status phase exactly as Karmada does:
// Bound, unless a cluster reports another phase; Lost as soon as any cluster has lost the claim,
// else the phase of the last cluster (in cluster-name order) whose claim is not Bound. Clusters
// not reported yet are skipped, as in Karmada. Other status fields are dropped. With no items
// the template is left alone.
func aggregatePVC(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if len(items) == 0 {
		return template, nil
	}
	old := corev1.PersistentVolumeClaimStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	next := corev1.PersistentVolumeClaimStatus{Phase: corev1.ClaimBound}
	for _, item := range items {
		member := corev1.PersistentVolumeClaimStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok || member.Phase == corev1.ClaimBound {
			continue
		}
		next.Phase = member.Phase
		if member.Phase == corev1.ClaimLost {
			break
		}
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// pvPhaseOrder ranks persistent volume phases for aggregation (Karmada's order).
var pvPhaseOrder = []corev1.PersistentVolumePhase{
	corev1.VolumeFailed, corev1.VolumePending, corev1.VolumeAvailable, corev1.VolumeBound, corev1.VolumeReleased,
}

// aggregatePV computes a PersistentVolume template's status phase, as Karmada does: the first of
// Failed, Pending, Available, Bound, Released present in any cluster, a cluster not reported yet
// counting as Pending. With no items the template is left alone.
func aggregatePV(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if len(items) == 0 {
		return template, nil
	}
	old := corev1.PersistentVolumeStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	phases := map[corev1.PersistentVolumePhase]bool{}
	for _, item := range items {
		member := corev1.PersistentVolumeStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			member.Phase = corev1.VolumePending
		}
		phases[member.Phase] = true
	}
	next := corev1.PersistentVolumeStatus{}
	for _, p := range pvPhaseOrder {
		if phases[p] {
			next.Phase = p
			break
		}
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}

// aggregatePDB computes a PodDisruptionBudget template's status, as Karmada does: the counters
// summed over the clusters, and the disrupted pods of every cluster keyed "<cluster>/<pod>".
func aggregatePDB(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	old := policyv1.PodDisruptionBudgetStatus{}
	if _, err := typedField(template, &old, "status"); err != nil {
		return nil, fmt.Errorf("reading the status of %s: %w", describe(template), err)
	}
	next := policyv1.PodDisruptionBudgetStatus{}
	for _, item := range items {
		member := policyv1.PodDisruptionBudgetStatus{}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		next.CurrentHealthy += member.CurrentHealthy
		next.DesiredHealthy += member.DesiredHealthy
		next.ExpectedPods += member.ExpectedPods
		next.DisruptionsAllowed += member.DisruptionsAllowed
		for pod, at := range member.DisruptedPods {
			if next.DisruptedPods == nil {
				next.DisruptedPods = map[string]metav1.Time{}
			}
			next.DisruptedPods[item.ClusterName+"/"+pod] = at
		}
	}
	if apiequality.Semantic.DeepEqual(old, next) {
		return template, nil
	}
	return withStatus(template, &next)
}
