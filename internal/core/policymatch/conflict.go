package policymatch

import (
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// ResolveConflictResolution returns the conflict resolution that applies to one resource
// template, following Karmada: the template's ConflictResolutionAnnotation wins when its value is
// exactly "overwrite" or "abort"; any other annotation value is ignored; then the claiming
// policy's spec.conflictResolution applies when it is Overwrite or Abort; otherwise the result is
// Abort, the API default. annotations may be nil.
func ResolveConflictResolution(annotations map[string]string, policyValue policyv1alpha1.ConflictResolution) policyv1alpha1.ConflictResolution {
	if v, ok := ParseConflictResolutionAnnotation(annotations[ConflictResolutionAnnotation]); ok {
		return v
	}
	if policyValue == policyv1alpha1.ConflictOverwrite {
		return policyv1alpha1.ConflictOverwrite
	}
	return policyv1alpha1.ConflictAbort
}

// ParseConflictResolutionAnnotation maps a ConflictResolutionAnnotation value to the API enum.
// It reports false for the empty string and for any value Karmada does not accept (the match is
// case-sensitive, as in Karmada), so that a caller can warn about an ignored annotation.
func ParseConflictResolutionAnnotation(value string) (policyv1alpha1.ConflictResolution, bool) {
	switch value {
	case ConflictResolutionOverwrite:
		return policyv1alpha1.ConflictOverwrite, true
	case ConflictResolutionAbort:
		return policyv1alpha1.ConflictAbort, true
	default:
		return "", false
	}
}
