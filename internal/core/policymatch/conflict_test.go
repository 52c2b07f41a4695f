package policymatch

import (
	"testing"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func TestResolveConflictResolution(t *testing.T) {
	annotated := func(v string) map[string]string { return map[string]string{ConflictResolutionAnnotation: v} }
	tests := []struct {
		name        string
		annotations map[string]string
		policy      policyv1alpha1.ConflictResolution
		want        policyv1alpha1.ConflictResolution
	}{
		{name: "nothing set defaults to Abort", want: policyv1alpha1.ConflictAbort},
		{name: "policy Overwrite applies without annotation", policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictOverwrite},
		{name: "policy Abort applies without annotation", policy: policyv1alpha1.ConflictAbort, want: policyv1alpha1.ConflictAbort},
		{name: "annotation overwrite wins over policy Abort", annotations: annotated("overwrite"), policy: policyv1alpha1.ConflictAbort, want: policyv1alpha1.ConflictOverwrite},
		{name: "annotation abort wins over policy Overwrite", annotations: annotated("abort"), policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictAbort},
		{name: "invalid annotation is ignored in favour of the policy", annotations: annotated("always"), policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictOverwrite},
		{name: "annotation values are case-sensitive", annotations: annotated("Overwrite"), want: policyv1alpha1.ConflictAbort},
		{name: "empty annotation is ignored", annotations: annotated(""), policy: policyv1alpha1.ConflictOverwrite, want: policyv1alpha1.ConflictOverwrite},
		{name: "invalid policy value falls back to Abort", policy: "Sometimes", want: policyv1alpha1.ConflictAbort},
		{name: "other annotations are irrelevant", annotations: map[string]string{"a": "overwrite"}, want: policyv1alpha1.ConflictAbort},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ResolveConflictResolution(tt.annotations, tt.policy); got != tt.want {
				t.Errorf("ResolveConflictResolution() = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestParseConflictResolutionAnnotation(t *testing.T) {
	tests := []struct {
		value  string
		want   policyv1alpha1.ConflictResolution
		wantOK bool
	}{
		{value: "overwrite", want: policyv1alpha1.ConflictOverwrite, wantOK: true},
		{value: "abort", want: policyv1alpha1.ConflictAbort, wantOK: true},
		{value: "ABORT"},
		{value: ""},
	}
	for _, tt := range tests {
		t.Run(tt.value, func(t *testing.T) {
			got, ok := ParseConflictResolutionAnnotation(tt.value)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("ParseConflictResolutionAnnotation(%q) = (%q, %v), want (%q, %v)", tt.value, got, ok, tt.want, tt.wantOK)
			}
		})
	}
}
