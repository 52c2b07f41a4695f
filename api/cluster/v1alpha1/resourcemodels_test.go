package v1alpha1

import (
	"math"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
)

func grade(g uint, kv ...string) ResourceModel {
	m := ResourceModel{Grade: g}
	for i := 0; i+2 < len(kv); i += 3 {
		m.Ranges = append(m.Ranges, ResourceModelRange{Name: corev1.ResourceName(kv[i]), Min: resource.MustParse(kv[i+1]), Max: resource.MustParse(kv[i+2])})
	}
	return m
}

func TestDefaultResourceModels(t *testing.T) {
	models := DefaultResourceModels()
	if len(models) != 9 {
		t.Fatalf("%d default grades, want Karmada's 9", len(models))
	}
	if errs := validateResourceModels(models, nil); len(errs) > 0 {
		t.Errorf("the defaults are invalid: %v", errs)
	}
	g2 := models[2].Ranges
	if g2[0].Min.String() != "2" || g2[0].Max.String() != "4" || g2[1].Min.String() != "16Gi" || g2[1].Max.String() != "32Gi" {
		t.Errorf("grade 2 = %v, want cpu [2,4) and memory [16Gi,32Gi)", g2)
	}
	if last := models[8].Ranges[0].Max.Value(); last != math.MaxInt64 {
		t.Errorf("the last grade's max is %d, want MaxInt64", last)
	}
}

func TestStandardizeResourceModels(t *testing.T) {
	models := []ResourceModel{grade(1, "cpu", "2", "4"), grade(0, "cpu", "1", "2")}
	StandardizeResourceModels(models)
	if models[0].Grade != 0 || !models[0].Ranges[0].Min.IsZero() || models[1].Ranges[0].Max.Value() != math.MaxInt64 {
		t.Errorf("standardized = %v, want sorted, first min 0, last max MaxInt64", models)
	}
}

func TestValidateResourceModels(t *testing.T) {
	tests := []struct {
		name   string
		models []ResourceModel
		want   string // a substring of the errors; empty for valid
	}{
		{"contiguous grades in any order", []ResourceModel{grade(1, "cpu", "2", "4"), grade(0, "cpu", "0", "2")}, ""},
		{"the first min and last max are standardized, not checked", []ResourceModel{grade(0, "cpu", "1", "2"), grade(1, "cpu", "2", "3")}, ""},
		{"overlapping ranges", []ResourceModel{grade(0, "cpu", "0", "2"), grade(1, "cpu", "1", "4"), grade(2, "cpu", "4", "8")},
			"spec.resourceModels[1].ranges[0].min: Invalid value: \"1\": must equal the max of grade 0's cpu range (2)"},
		{"unsorted ranges", []ResourceModel{grade(0, "cpu", "0", "4"), grade(1, "cpu", "4", "2"), grade(2, "cpu", "2", "8")},
			"spec.resourceModels[1].ranges[0].max: Invalid value: \"2\": must be greater than min (4)"},
		{"a grade without every resource", []ResourceModel{grade(0, "cpu", "0", "1", "memory", "0", "4Gi"), grade(1, "cpu", "1", "2")},
			"spec.resourceModels[1].ranges: Invalid value: 1: every grade must bound the same resources"},
		{"resources in another order", []ResourceModel{grade(0, "cpu", "0", "1", "memory", "0", "4Gi"), grade(1, "memory", "4Gi", "8Gi", "cpu", "1", "2")},
			"spec.resourceModels[1].ranges[0].name"},
		{"a repeated grade", []ResourceModel{grade(0, "cpu", "0", "1"), grade(0, "cpu", "1", "2")}, "spec.resourceModels[1].grade: Duplicate value: 0"},
		{"a grade without ranges", []ResourceModel{grade(0)}, "spec.resourceModels[0].ranges: Required value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			errs := ValidateClusterSpec(&ClusterSpec{ResourceModels: tt.models})
			got := errs.ToAggregate()
			switch {
			case tt.want == "" && got != nil:
				t.Errorf("refused: %v", got)
			case tt.want != "" && (got == nil || !strings.Contains(got.Error(), tt.want)):
				t.Errorf("errors = %v, want one with %q", got, tt.want)
			}
		})
	}
}
