package validation

import (
	"slices"

	"k8s.io/apimachinery/pkg/util/validation/field"

	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
)

// validateRemedy refuses a decision match on a condition type no component
// writes to a Cluster (remedyv1alpha1.ConditionTypes): such a Remedy would
// never apply. Karmada accepts any type.
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
		if t := m.ClusterConditionMatch.ConditionType; !slices.Contains(remedyv1alpha1.ConditionTypes, t) {
			errs = append(errs, field.NotSupported(field.NewPath("spec", "decisionMatches").Index(i).Child("clusterConditionMatch", "conditionType"), string(t), allowed))
		}
	}
	return errs
}
