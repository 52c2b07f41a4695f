package validation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
)

// conditionStatuses are the statuses a condition can have.
var conditionStatuses = []string{"True", "False", "Unknown"}

// validateRemedy refuses a decision match on a condition type no component
// writes to a Cluster (remedyv1alpha1.ConditionTypes), or on a status no
// condition has (a lower-case "true", say): such a Remedy would never apply,
// or apply to every cluster. Karmada accepts any type and status.
func validateRemedy(r *remedyv1alpha1.Remedy) field.ErrorList {
	var errs field.ErrorList
	allowed := make([]string, 0, len(remedyv1alpha1.ConditionTypes))
	for _, t := range remedyv1alpha1.ConditionTypes {
		allowed = append(allowed, string(t))
	}
	for i, m := range r.Spec.DecisionMatches {
		if m.ClusterConditionMatch == nil {
			continue
		}
		p := field.NewPath("spec", "decisionMatches").Index(i).Child("clusterConditionMatch")
		if t := m.ClusterConditionMatch.ConditionType; !slices.Contains(remedyv1alpha1.ConditionTypes, t) {
			errs = append(errs, field.NotSupported(p.Child("conditionType"), string(t), allowed))
		}
		// A status no condition has ("true") would make NotEqual match
		// every cluster.
		if st := m.ClusterConditionMatch.ConditionStatus; !slices.Contains(conditionStatuses, st) {
			errs = append(errs, field.NotSupported(p.Child("conditionStatus"), st, conditionStatuses))
		}
	}
	return errs
}
