package v1alpha1

import (
	"bytes"
	"fmt"

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
//     are valid annotation keys within the annotation size limit.
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
		errs = append(errs, validateOverriders(&spec.OverrideRules[i].Overriders, specPath.Child("overrideRules").Index(i).Child("overriders"))...)
	}
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
