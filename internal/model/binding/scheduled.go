package binding

import (
	"encoding/json"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// DefaultSchedulerName is the schedulerName Flotilla's scheduler serves,
// Karmada's default.
const DefaultSchedulerName = "default-scheduler"

// AppliedPlacementAnnotation records, on a binding, the placement its
// spec.clusters were computed from (Karmada's annotation), written in the
// same patch as spec.clusters.
const AppliedPlacementAnnotation = "policy.karmada.io/applied-placement"

// AppliedPlacement is the binding's placement as AppliedPlacementAnnotation
// records it (JSON).
func AppliedPlacement(spec *workv1alpha2.ResourceBindingSpec) string {
	data, _ := json.Marshal(spec.Placement) // a typed struct always marshals
	return string(data)
}

// BornScheduled reports a binding that Preschedule scheduled at creation,
// unchanged since (generation 1, placement as applied, a single cluster
// affinity) and whose Scheduled condition is not written yet. Its
// scheduling outcome is known (success), so whichever status write comes
// first records it with SetScheduled.
func BornScheduled(b Object) bool {
	spec, status := Spec(b), Status(b)
	if b.GetGeneration() != 1 || len(spec.Clusters) == 0 || spec.Placement == nil || len(spec.Placement.ClusterAffinities) > 0 ||
		meta.FindStatusCondition(status.Conditions, workv1alpha2.Scheduled) != nil {
		return false
	}
	return b.GetAnnotations()[AppliedPlacementAnnotation] == AppliedPlacement(spec)
}

// SetScheduled records a successful scheduling decision in a binding's
// status, as Karmada's scheduler does: the Scheduled condition (True,
// reason Success), schedulerObservedGeneration, lastScheduledTime, and the
// chosen cluster affinity's name ("" for a single clusterAffinity).
func SetScheduled(status *workv1alpha2.ResourceBindingStatus, generation int64, affinity string) {
	meta.SetStatusCondition(&status.Conditions, metav1.Condition{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue,
		Reason: workv1alpha2.BindingReasonSuccess, Message: "Binding has been scheduled successfully.", ObservedGeneration: generation})
	status.SchedulerObservedGeneration = generation
	status.SchedulerObservedAffinityName = affinity
	now := metav1.Now()
	status.LastScheduledTime = &now
}
