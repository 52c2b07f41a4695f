package v1alpha1

import (
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/util/validation/field"
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
			name: "image values that fit their component are valid, for add as fragments",
			spec: rule(Overriders{ImageOverrider: []ImageOverrider{
				{Component: Registry, Operator: OverriderOpReplace, Value: "registry.example.com:5000"},
				{Component: Registry, Operator: OverriderOpAdd, Value: ".cn"},
				{Component: Repository, Operator: OverriderOpReplace, Value: "library/nginx"},
				{Component: Repository, Operator: OverriderOpAdd, Value: "/slim"},
				{Component: Tag, Operator: OverriderOpReplace, Value: "1.27.0"},
				{Component: Tag, Operator: OverriderOpReplace, Value: "sha256:" + strings.Repeat("ab", 32)},
				{Component: Tag, Operator: OverriderOpAdd, Value: "-alpine"},
				{Component: Tag, Operator: OverriderOpRemove},
			}}),
		},
		{
			name: "image values that would make an invalid reference are invalid, each named in one answer",
			spec: rule(Overriders{ImageOverrider: []ImageOverrider{
				{Component: Tag, Operator: OverriderOpReplace, Value: "bad tag!"},
				{Component: Tag, Operator: OverriderOpAdd, Value: ":x"},
				{Component: Registry, Operator: OverriderOpReplace, Value: "https://registry.example.com"},
				{Component: Repository, Operator: OverriderOpReplace, Value: "Library/Nginx"},
			}}),
			wantFields: []string{
				"spec.overrideRules[0].overriders.imageOverrider[0].value",
				"spec.overrideRules[0].overriders.imageOverrider[1].value",
				"spec.overrideRules[0].overriders.imageOverrider[2].value",
				"spec.overrideRules[0].overriders.imageOverrider[3].value",
			},
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
			checkErrorFields(t, ValidateOverrideSpec(tc.spec), tc.wantFields)
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

func TestValidatePropagationSpecClusterTolerations(t *testing.T) {
	seconds := int64(30)
	tests := []struct {
		name        string
		tolerations []corev1.Toleration
		wantFields  []string
	}{
		{name: "Karmada's not-ready toleration is valid", tolerations: []corev1.Toleration{
			{Key: "cluster.karmada.io/not-ready", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoExecute, TolerationSeconds: &seconds},
			{Key: "dedicated", Operator: corev1.TolerationOpEqual, Value: "gpu", Effect: corev1.TaintEffectNoSchedule},
			{Operator: corev1.TolerationOpExists},
		}},
		{name: "an unknown effect is refused", tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpExists, Effect: "NoScheduling"}},
			wantFields: []string{"spec.placement.clusterTolerations[0].effect"}},
		{name: "Lt and Gt are refused, as Karmada refuses them for clusters", tolerations: []corev1.Toleration{{Key: "k", Operator: corev1.TolerationOpLt, Value: "3"}},
			wantFields: []string{"spec.placement.clusterTolerations[0].operator"}},
		{name: "Exists with a value, Equal without a key, a bad key and tolerationSeconds without NoExecute are refused together", tolerations: []corev1.Toleration{
			{Key: "k", Operator: corev1.TolerationOpExists, Value: "v"},
			{Operator: corev1.TolerationOpEqual, Value: "v"},
			{Key: "not a key", Operator: corev1.TolerationOpExists},
			{Key: "k", Operator: corev1.TolerationOpExists, Effect: corev1.TaintEffectNoSchedule, TolerationSeconds: &seconds},
		}, wantFields: []string{
			"spec.placement.clusterTolerations[0].value",
			"spec.placement.clusterTolerations[1].operator",
			"spec.placement.clusterTolerations[2].key",
			"spec.placement.clusterTolerations[3].effect",
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			checkErrorFields(t, ValidatePropagationSpec(&PropagationSpec{Placement: Placement{ClusterTolerations: tc.tolerations}}), tc.wantFields)
		})
	}
}

// checkErrorFields fails the test unless errs are at exactly the fields want, in order.
func checkErrorFields(t *testing.T, errs field.ErrorList, want []string) {
	t.Helper()
	var got []string
	for _, err := range errs {
		got = append(got, err.Field)
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("errors at %v, want at %v (%v)", got, want, errs)
	}
}

func TestValidatePropagationSpecOverflowAffinities(t *testing.T) {
	aggregated := &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: ReplicaDivisionPreferenceAggregated}
	dynamic := &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: ReplicaDivisionPreferenceWeighted,
		WeightPreference: &ClusterPreferences{DynamicWeight: DynamicWeightByAvailableReplicas}}
	static := &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDivided, ReplicaDivisionPreference: ReplicaDivisionPreferenceWeighted}
	term := func(name string, primary ClusterAffinity, overflow ...string) ClusterAffinityTerm {
		t := ClusterAffinityTerm{AffinityName: name, ClusterAffinity: primary}
		for _, o := range overflow {
			t.OverflowAffinities = append(t.OverflowAffinities, OverflowClusterAffinityTerm{AffinityName: o, ClusterAffinity: ClusterAffinity{ClusterNames: []string{"member2"}}})
		}
		return t
	}
	idc := ClusterAffinity{ClusterNames: []string{"member1"}}
	tests := []struct {
		name       string
		rs         *ReplicaSchedulingStrategy
		term       ClusterAffinityTerm
		wantFields []string
	}{
		{name: "aggregated", rs: aggregated, term: term("idc", idc, "cloud")},
		{name: "dynamic weight", rs: dynamic, term: term("idc", idc, "cloud", "cloud-b")},
		{name: "no overflow needs no particular division", rs: static, term: term("idc", idc)},
		{name: "static weights are refused", rs: static, term: term("idc", idc, "cloud"),
			wantFields: []string{"spec.placement.clusterAffinities[0].overflowAffinities"}},
		{name: "duplicated is refused", rs: &ReplicaSchedulingStrategy{ReplicaSchedulingType: ReplicaSchedulingTypeDuplicated}, term: term("idc", idc, "cloud"),
			wantFields: []string{"spec.placement.clusterAffinities[0].overflowAffinities"}},
		{name: "an empty preferred group is refused", rs: aggregated, term: term("idc", ClusterAffinity{}, "cloud"),
			wantFields: []string{"spec.placement.clusterAffinities[0].overflowAffinities"}},
		{name: "names repeated, the term's own reused, or not label keys are refused", rs: aggregated, term: term("idc", idc, "cloud", "cloud", "idc", "not a key"),
			wantFields: []string{
				"spec.placement.clusterAffinities[0].overflowAffinities[1].affinityName",
				"spec.placement.clusterAffinities[0].overflowAffinities[2].affinityName",
				"spec.placement.clusterAffinities[0].overflowAffinities[3].affinityName",
			}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			spec := &PropagationSpec{Placement: Placement{ClusterAffinities: []ClusterAffinityTerm{tc.term}, ReplicaScheduling: tc.rs}}
			checkErrorFields(t, ValidatePropagationSpec(spec), tc.wantFields)
		})
	}
}
