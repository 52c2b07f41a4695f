package native

import (
	"cmp"
	"slices"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// aggregateRule computes a template's new status from the per-cluster statuses.
type aggregateRule func(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error)

var aggregateRules = map[schema.GroupKind]aggregateRule{
	jobKind:     aggregateJob,
	cronJobKind: aggregateCronJob,
	serviceKind: aggregateService,
	ingressKind: aggregateIngress,
	podKind:     aggregatePod,
	pvcKind:     aggregatePVC,
	pvKind:      aggregatePV,
	pdbKind:     aggregatePDB,
	hpaKind:     aggregateHPA,
}

// AggregateStatus implements Karmada's AggregateStatus operation: it computes the resource
// template's .status from the statuses ReflectStatus produced in each member cluster
// (ResourceBinding.status.aggregatedStatus). Items without a status are clusters not reported
// yet. Items are considered in cluster-name order whatever their order in items, so that every
// list merged from several clusters comes out the same for the same input.
//
//   - Deployment, StatefulSet, ReplicaSet, DaemonSet: each replica counter is the sum over the
//     clusters; observedGeneration becomes the template's metadata.generation only when every
//     item reports a member that has observed its own generation (generation ==
//     observedGeneration) and was rendered from this template generation
//     (resourceTemplateGeneration == template generation); otherwise the template's previous
//     observedGeneration is kept. Other status fields of the template are left as they are.
//   - HorizontalPodAutoscaler: currentReplicas and desiredReplicas summed over the clusters,
//     other status fields left as they are.
//   - Job, CronJob, Service, Ingress, Pod, PersistentVolumeClaim, PersistentVolume,
//     PodDisruptionBudget: see the aggregate* functions of each kind.
//   - Other kinds: the template is returned as it is.
//
// The result is always a valid status update of the template as Kubernetes 1.37 validates it
// (for a Job: a valid transition from the template's current status).
//
// When the computed status equals the template's current one, the template itself (the same
// pointer) is returned so that callers can skip the write; otherwise a modified deep copy. The
// template is never mutated. It returns an error when an item's status is not valid JSON for its
// kind or the template's status cannot be read.
func AggregateStatus(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	if template == nil {
		return nil, nil
	}
	gk := groupKindOf(template)
	counters, isWorkload := workloadCounters[gk]
	rule, hasRule := aggregateRules[gk]
	if !isWorkload && !hasRule {
		return template, nil
	}
	items = byClusterName(items)
	if isWorkload {
		return aggregateWorkload(template, items, counters)
	}
	return rule(template, items)
}

// byClusterName returns items sorted by cluster name: items itself when already sorted (the
// status controller's order), a sorted copy otherwise.
func byClusterName(items []workv1alpha2.AggregatedStatusItem) []workv1alpha2.AggregatedStatusItem {
	byName := func(a, b workv1alpha2.AggregatedStatusItem) int { return cmp.Compare(a.ClusterName, b.ClusterName) }
	if slices.IsSortedFunc(items, byName) {
		return items
	}
	sorted := slices.Clone(items)
	slices.SortStableFunc(sorted, byName)
	return sorted
}

// aggregateWorkload is the core shared by the replicated workload kinds.
func aggregateWorkload(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem, counters []string) (*unstructured.Unstructured, error) {
	sums := make([]int64, len(counters))
	generation := template.GetGeneration()
	current := 0
	for _, item := range items {
		var member workloadStatus
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		for i, c := range counters {
			sums[i] += member.counter(c)
		}
		if member.ResourceTemplateGeneration == generation && member.Generation == member.ObservedGeneration {
			current++
		}
	}

	old, _ := template.Object["status"].(map[string]any)
	observed := intValue(old, observedGenerationKey)
	// Items without a status count against this too: a cluster not heard from yet has not
	// observed anything.
	if current == len(items) {
		observed = generation
	}
	changed := observed != intValue(old, observedGenerationKey)
	for i, c := range counters {
		changed = changed || sums[i] != intValue(old, c)
	}
	if !changed {
		return template, nil
	}

	out, status := copyWithStatusMap(template)
	setOrDrop(status, observedGenerationKey, observed)
	for i, c := range counters {
		setOrDrop(status, c, sums[i])
	}
	return out, nil
}

// setOrDrop stores a non-zero counter and drops a zero one, as a typed status would serialise.
func setOrDrop(m map[string]any, key string, v int64) {
	if v == 0 {
		delete(m, key)
		return
	}
	m[key] = v
}

// workloadStatus is one cluster's reflected workload status: the counters of every replicated
// workload kind and the generations ReflectStatus adds. Fields a kind lacks stay zero.
type workloadStatus struct {
	Generation                 int64 `json:"generation"`
	ResourceTemplateGeneration int64 `json:"resourceTemplateGeneration"`
	ObservedGeneration         int64 `json:"observedGeneration"`

	Replicas             int64 `json:"replicas"`
	UpdatedReplicas      int64 `json:"updatedReplicas"`
	ReadyReplicas        int64 `json:"readyReplicas"`
	AvailableReplicas    int64 `json:"availableReplicas"`
	UnavailableReplicas  int64 `json:"unavailableReplicas"`
	CurrentReplicas      int64 `json:"currentReplicas"`
	FullyLabeledReplicas int64 `json:"fullyLabeledReplicas"`

	CurrentNumberScheduled int64 `json:"currentNumberScheduled"`
	NumberMisscheduled     int64 `json:"numberMisscheduled"`
	DesiredNumberScheduled int64 `json:"desiredNumberScheduled"`
	NumberReady            int64 `json:"numberReady"`
	UpdatedNumberScheduled int64 `json:"updatedNumberScheduled"`
	NumberAvailable        int64 `json:"numberAvailable"`
	NumberUnavailable      int64 `json:"numberUnavailable"`
}

// counter returns the counter with the given status field name; unknown names read as 0.
func (s *workloadStatus) counter(name string) int64 {
	switch name {
	case "replicas":
		return s.Replicas
	case "updatedReplicas":
		return s.UpdatedReplicas
	case "readyReplicas":
		return s.ReadyReplicas
	case "availableReplicas":
		return s.AvailableReplicas
	case "unavailableReplicas":
		return s.UnavailableReplicas
	case "currentReplicas":
		return s.CurrentReplicas
	case "fullyLabeledReplicas":
		return s.FullyLabeledReplicas
	case "currentNumberScheduled":
		return s.CurrentNumberScheduled
	case "numberMisscheduled":
		return s.NumberMisscheduled
	case "desiredNumberScheduled":
		return s.DesiredNumberScheduled
	case "numberReady":
		return s.NumberReady
	case "updatedNumberScheduled":
		return s.UpdatedNumberScheduled
	case "numberAvailable":
		return s.NumberAvailable
	case "numberUnavailable":
		return s.NumberUnavailable
	default:
		return 0
	}
}

// aggregateHPA computes a HorizontalPodAutoscaler template's status, as Karmada does: each
// member's autoscaler scales that member's share of the workload, so currentReplicas and
// desiredReplicas are summed over the clusters. Other status fields (conditions, metrics) are
// left as they are. desiredReplicas is written even when zero, as the API requires it.
func aggregateHPA(template *unstructured.Unstructured, items []workv1alpha2.AggregatedStatusItem) (*unstructured.Unstructured, error) {
	var current, desired int64
	for _, item := range items {
		var member struct {
			CurrentReplicas int64 `json:"currentReplicas"`
			DesiredReplicas int64 `json:"desiredReplicas"`
		}
		ok, err := decodeItem(item, &member)
		if err != nil {
			return nil, err
		}
		if ok {
			current += member.CurrentReplicas
			desired += member.DesiredReplicas
		}
	}
	old, _ := template.Object["status"].(map[string]any)
	if intValue(old, "currentReplicas") == current && intValue(old, "desiredReplicas") == desired {
		return template, nil
	}
	out, status := copyWithStatusMap(template)
	setOrDrop(status, "currentReplicas", current)
	status["desiredReplicas"] = desired
	return out, nil
}

// copyWithStatusMap returns a deep copy of template and its .status map,
// created empty when the template has none, for fields to be set in place.
func copyWithStatusMap(template *unstructured.Unstructured) (*unstructured.Unstructured, map[string]any) {
	out := template.DeepCopy()
	status, _ := out.Object["status"].(map[string]any)
	if status == nil {
		status = map[string]any{}
		out.Object["status"] = status
	}
	return out, status
}
