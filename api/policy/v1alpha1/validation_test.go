package v1alpha1

import (
	"strings"
	"testing"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
)

func TestValidateOverrideSpec(t *testing.T) {
	value := func(raw string) apiextensionsv1.JSON { return apiextensionsv1.JSON{Raw: []byte(raw)} }
	rule := func(o Overriders) *OverrideSpec {
		return &OverrideSpec{OverrideRules: []RuleWithCluster{{Overriders: o}}}
	}
	jsonOps := func(ops ...JSONPatchOperation) *OverrideSpec {
		return rule(Overriders{FieldOverrider: []FieldOverrider{{FieldPath: "/data/config.json", JSON: ops}}})
	}
	tests := []struct {
		name       string
		spec       *OverrideSpec
		wantFields []string
	}{
		{name: "a nil spec is valid", spec: nil},
		{
			name: "add and replace with values, remove without, are valid",
			spec: jsonOps(
				JSONPatchOperation{SubPath: "/a", Operator: OverriderOpAdd, Value: value(`1`)},
				JSONPatchOperation{SubPath: "/b", Operator: OverriderOpReplace, Value: value(`{"x":"y"}`)},
				JSONPatchOperation{SubPath: "/c", Operator: OverriderOpRemove},
			),
		},
		{
			name:       "add without a value is invalid",
			spec:       jsonOps(JSONPatchOperation{SubPath: "/a", Operator: OverriderOpAdd}),
			wantFields: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value"},
		},
		{
			name:       "replace with a null value is invalid",
			spec:       jsonOps(JSONPatchOperation{SubPath: "/a", Operator: OverriderOpReplace, Value: value(`null`)}),
			wantFields: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value"},
		},
		{
			name:       "remove with a value is invalid",
			spec:       jsonOps(JSONPatchOperation{SubPath: "/a", Operator: OverriderOpRemove, Value: value(`"x"`)}),
			wantFields: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].json[0].value"},
		},
		{
			name: "YAML operations are checked too",
			spec: rule(Overriders{FieldOverrider: []FieldOverrider{{FieldPath: "/data/c.yaml", YAML: []YAMLPatchOperation{
				{SubPath: "/a", Operator: OverriderOpReplace},
			}}}}),
			wantFields: []string{"spec.overrideRules[0].overriders.fieldOverrider[0].yaml[0].value"},
		},
		{
			name: "the deprecated overriders are checked too",
			spec: &OverrideSpec{Overriders: Overriders{FieldOverrider: []FieldOverrider{{FieldPath: "/d", JSON: []JSONPatchOperation{
				{SubPath: "/a", Operator: OverriderOpAdd},
			}}}}},
			wantFields: []string{"spec.overriders.fieldOverrider[0].json[0].value"},
		},
		{
			name:       "an invalid label key is invalid",
			spec:       rule(Overriders{LabelsOverrider: []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"not a key": "v"}}}}),
			wantFields: []string{"spec.overrideRules[0].overriders.labelsOverrider[0].value"},
		},
		{
			name:       "an invalid label value is invalid",
			spec:       rule(Overriders{LabelsOverrider: []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"app": "a b"}}}}),
			wantFields: []string{"spec.overrideRules[0].overriders.labelsOverrider[0].value"},
		},
		{
			name:       "an invalid annotation key is invalid",
			spec:       rule(Overriders{AnnotationsOverrider: []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"/bad": "v"}}}}),
			wantFields: []string{"spec.overrideRules[0].overriders.annotationsOverrider[0].value"},
		},
		{
			name: "valid labels and annotations are valid",
			spec: rule(Overriders{
				LabelsOverrider:      []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"app.kubernetes.io/name": "nginx"}}},
				AnnotationsOverrider: []LabelAnnotationOverrider{{Operator: OverriderOpAdd, Value: map[string]string{"example.com/note": "any text at all"}}},
			}),
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			errs := ValidateOverrideSpec(tc.spec)
			var got []string
			for _, err := range errs {
				got = append(got, err.Field)
			}
			if strings.Join(got, ",") != strings.Join(tc.wantFields, ",") {
				t.Fatalf("errors at %v, want at %v (%v)", got, tc.wantFields, errs)
			}
		})
	}
}

func TestNormalizePurgeMode(t *testing.T) {
	tests := map[PurgeMode]PurgeMode{
		PurgeModeImmediately: PurgeModeDirectly,
		PurgeModeGraciously:  PurgeModeGracefully,
		PurgeModeDirectly:    PurgeModeDirectly,
		PurgeModeGracefully:  PurgeModeGracefully,
		PurgeModeNever:       PurgeModeNever,
		"":                   "",
	}
	for in, want := range tests {
		if got := NormalizePurgeMode(in); got != want {
			t.Errorf("NormalizePurgeMode(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestEffectiveSpreadByField(t *testing.T) {
	tests := []struct {
		name string
		c    SpreadConstraint
		want SpreadFieldValue
	}{
		{name: "a constraint naming nothing spreads by cluster", c: SpreadConstraint{MinGroups: 2}, want: SpreadByFieldCluster},
		{name: "a field constraint spreads by its field", c: SpreadConstraint{SpreadByField: SpreadByFieldZone}, want: SpreadByFieldZone},
		{name: "a label constraint spreads by no field", c: SpreadConstraint{SpreadByLabel: "rack"}, want: ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.c.EffectiveSpreadByField(); got != tc.want {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}
