package v1alpha1

import (
	"bytes"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateOverrideSpec checks the OverridePolicy and ClusterOverridePolicy rules that the
// CRD's CEL rules cannot express, standing in for that part of Karmada's validating webhook:
//
//   - fieldOverrider json and yaml operations carry a value for add and replace, and none for
//     remove (the value is schemaless JSON, which CEL cannot inspect);
//   - labelsOverrider values are valid label keys and values, and annotationsOverrider values
//     are valid annotation keys within the annotation size limit;
//   - the fieldSelector of each targetCluster passes ValidateFieldSelector.
//
// It checks both spec.overrideRules and the deprecated spec.overriders. Errors carry field
// paths rooted at "spec"; an empty list means the spec is valid.
func ValidateOverrideSpec(spec *OverrideSpec) field.ErrorList {
	if spec == nil {
		return nil
	}
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	for i := range spec.OverrideRules {
		rulePath := specPath.Child("overrideRules").Index(i)
		errs = append(errs, validateClusterAffinity(spec.OverrideRules[i].TargetCluster, rulePath.Child("targetCluster"))...)
		errs = append(errs, validateOverriders(&spec.OverrideRules[i].Overriders, rulePath.Child("overriders"))...)
	}
	errs = append(errs, validateClusterAffinity(spec.TargetCluster, specPath.Child("targetCluster"))...)
	errs = append(errs, validateOverriders(&spec.Overriders, specPath.Child("overriders"))...)
	return errs
}

func validateOverriders(o *Overriders, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, l := range o.LabelsOverrider {
		errs = append(errs, metav1validation.ValidateLabels(l.Value, fldPath.Child("labelsOverrider").Index(i).Child("value"))...)
	}
	for i, a := range o.AnnotationsOverrider {
		errs = append(errs, apivalidation.ValidateAnnotations(a.Value, fldPath.Child("annotationsOverrider").Index(i).Child("value"))...)
	}
	for i, f := range o.FieldOverrider {
		fPath := fldPath.Child("fieldOverrider").Index(i)
		for j, op := range f.JSON {
			errs = append(errs, validatePatchValue(op.Operator, op.Value, fPath.Child("json").Index(j).Child("value"))...)
		}
		for j, op := range f.YAML {
			errs = append(errs, validatePatchValue(op.Operator, op.Value, fPath.Child("yaml").Index(j).Child("value"))...)
		}
	}
	return errs
}

// validatePatchValue requires a value for add and replace and refuses one for remove.
func validatePatchValue(op OverriderOperator, value apiextensionsv1.JSON, fldPath *field.Path) field.ErrorList {
	empty := len(bytes.TrimSpace(value.Raw)) == 0 || bytes.Equal(bytes.TrimSpace(value.Raw), []byte("null"))
	switch op {
	case OverriderOpAdd, OverriderOpReplace:
		if empty {
			return field.ErrorList{field.Required(fldPath, fmt.Sprintf("a value is required for the %s operation", op))}
		}
	case OverriderOpRemove:
		if !empty {
			return field.ErrorList{field.Invalid(fldPath, string(value.Raw), "a value is not allowed for the remove operation")}
		}
	}
	return nil
}

// ValidatePropagationSpec checks the PropagationPolicy and ClusterPropagationPolicy rules that
// the CRD's CEL rules cannot express within the API server's cost budget, standing in for that
// part of Karmada's validating webhook: every fieldSelector of the placement (clusterAffinity,
// each clusterAffinities term and its overflowAffinities, each staticWeightList targetCluster)
// uses only the keys provider, region and zone and the operators In and NotIn. Errors carry
// field paths rooted at "spec"; an empty list means the spec is valid.
func ValidatePropagationSpec(spec *PropagationSpec) field.ErrorList {
	if spec == nil {
		return nil
	}
	placement := field.NewPath("spec", "placement")
	p := &spec.Placement
	errs := validateClusterAffinity(p.ClusterAffinity, placement.Child("clusterAffinity"))
	for i := range p.ClusterAffinities {
		term := &p.ClusterAffinities[i]
		termPath := placement.Child("clusterAffinities").Index(i)
		errs = append(errs, validateClusterAffinity(&term.ClusterAffinity, termPath)...)
		for j := range term.OverflowAffinities {
			errs = append(errs, validateClusterAffinity(&term.OverflowAffinities[j].ClusterAffinity, termPath.Child("overflowAffinities").Index(j))...)
		}
	}
	if rs := p.ReplicaScheduling; rs != nil && rs.WeightPreference != nil {
		for i := range rs.WeightPreference.StaticWeightList {
			errs = append(errs, validateClusterAffinity(&rs.WeightPreference.StaticWeightList[i].TargetCluster,
				placement.Child("replicaScheduling", "weightPreference", "staticWeightList").Index(i).Child("targetCluster"))...)
		}
	}
	return errs
}

// validateClusterAffinity checks the fieldSelector of a ClusterAffinity (nil is valid).
func validateClusterAffinity(a *ClusterAffinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	return ValidateFieldSelector(a.FieldSelector, fldPath.Child("fieldSelector"))
}

// ValidateFieldSelector checks a cluster fieldSelector as Karmada's webhook does: each
// requirement's key is provider, region or zone, and its operator In or NotIn. The errors
// (one per bad requirement, at fldPath.matchExpressions[i]) carry Karmada's wording, such as
// `unsupported key "color", must be provider, region, or zone`. A nil selector is valid.
func ValidateFieldSelector(fs *FieldSelector, fldPath *field.Path) field.ErrorList {
	if fs == nil {
		return nil
	}
	var errs field.ErrorList
	for i, req := range fs.MatchExpressions {
		reqPath := fldPath.Child("matchExpressions").Index(i)
		switch req.Key {
		case ProviderField, RegionField, ZoneField:
		default:
			errs = append(errs, field.Invalid(reqPath.Child("key"), req.Key,
				fmt.Sprintf("unsupported key %q, must be provider, region, or zone", req.Key)))
		}
		switch req.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		default:
			errs = append(errs, field.Invalid(reqPath.Child("operator"), req.Operator,
				fmt.Sprintf("unsupported operator %q, must be In or NotIn", req.Operator)))
		}
	}
	return errs
}
