package v1alpha1

import (
	"fmt"
	"math"
	"slices"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// gibibyte is 2^30 bytes, the unit of the default memory ranges.
const gibibyte = int64(1) << 30

// DefaultResourceModels returns Karmada's nine default grades of spec.resourceModels, which a
// Cluster created without models gets while CustomizedClusterResourceModeling is on: grade i
// covers CPU [c(i), c(i+1)) with c = 0, 1, 2, 4, 8, 16, 32, 64, 128 cores and memory
// [m(i), m(i+1)) with m = 0, 4, 16, 32, 64, 128, 256, 512, 1024 GiB; the last grade is open
// (its max is math.MaxInt64).
func DefaultResourceModels() []ResourceModel {
	cpu := []int64{0, 1, 2, 4, 8, 16, 32, 64, 128, math.MaxInt64}
	mem := []int64{0, 4, 16, 32, 64, 128, 256, 512, 1024}
	memBytes := func(i int) int64 {
		if i >= len(mem) {
			return math.MaxInt64
		}
		return mem[i] * gibibyte
	}
	models := make([]ResourceModel, 0, len(mem))
	for i := range mem {
		models = append(models, ResourceModel{
			Grade: uint(i),
			Ranges: []ResourceModelRange{
				{Name: corev1.ResourceCPU, Min: *resource.NewQuantity(cpu[i], resource.DecimalSI), Max: *resource.NewQuantity(cpu[i+1], resource.DecimalSI)},
				{Name: corev1.ResourceMemory, Min: *resource.NewQuantity(memBytes(i), resource.BinarySI), Max: *resource.NewQuantity(memBytes(i+1), resource.BinarySI)},
			},
		})
	}
	return models
}

// StandardizeResourceModels puts models in Karmada's standard form, in place: sorted by
// grade, the first grade's every min set to 0 and the last grade's every max to
// math.MaxInt64, so that the grades cover every node. Karmada's API server does the same on
// every write of a Cluster with models.
func StandardizeResourceModels(models []ResourceModel) {
	if len(models) == 0 {
		return
	}
	slices.SortStableFunc(models, func(a, b ResourceModel) int {
		switch {
		case a.Grade < b.Grade:
			return -1
		case a.Grade > b.Grade:
			return 1
		}
		return 0
	})
	for i := range models[0].Ranges {
		models[0].Ranges[i].Min = *resource.NewQuantity(0, models[0].Ranges[i].Min.Format)
	}
	last := models[len(models)-1].Ranges
	for i := range last {
		last[i].Max = *resource.NewQuantity(math.MaxInt64, last[i].Max.Format)
	}
}

// DefaultClusterResourceModels gives spec a standard set of resource models: Karmada's
// defaults when it has none, else its own, standardized (StandardizeResourceModels).
func DefaultClusterResourceModels(spec *ClusterSpec) {
	if len(spec.ResourceModels) == 0 {
		spec.ResourceModels = DefaultResourceModels()
		return
	}
	StandardizeResourceModels(spec.ResourceModels)
}

// validateResourceModels checks spec.resourceModels as Karmada's API server does, after the
// standardization every write gets (so grades may come in any order, and the first mins and
// last maxes are not checked): grades are unique; every grade bounds the same resources in
// the same order; each range has max > min; and each grade's range starts where the
// previous grade's range of the same resource ends, so the grades neither overlap nor leave
// gaps. Errors name the offending field, such as spec.resourceModels[2].ranges[0].min, by
// its index in the object as written.
func validateResourceModels(models []ResourceModel, p *field.Path) field.ErrorList {
	if len(models) == 0 {
		return nil
	}
	order := make([]int, len(models))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		switch {
		case models[a].Grade < models[b].Grade:
			return -1
		case models[a].Grade > models[b].Grade:
			return 1
		}
		return 0
	})
	first, last := order[0], order[len(order)-1]
	var errs field.ErrorList
	for k, i := range order {
		m := models[i]
		mp := p.Index(i)
		if len(m.Ranges) == 0 {
			errs = append(errs, field.Required(mp.Child("ranges"), "each grade must bound at least one resource"))
			continue
		}
		seen := map[corev1.ResourceName]bool{}
		for j, r := range m.Ranges {
			rp := mp.Child("ranges").Index(j)
			if seen[r.Name] {
				errs = append(errs, field.Duplicate(rp.Child("name"), r.Name))
			}
			seen[r.Name] = true
			lo, hi := r.Min, r.Max
			if i == first {
				lo = resource.Quantity{}
			}
			if i == last {
				hi = *resource.NewQuantity(math.MaxInt64, resource.DecimalSI)
			}
			if hi.Cmp(lo) <= 0 {
				errs = append(errs, field.Invalid(rp.Child("max"), r.Max.String(), fmt.Sprintf("must be greater than min (%s)", r.Min.String())))
			}
		}
		if k == 0 {
			continue
		}
		prev := models[order[k-1]]
		if prev.Grade == m.Grade {
			errs = append(errs, field.Duplicate(mp.Child("grade"), m.Grade))
			continue
		}
		if len(prev.Ranges) != len(m.Ranges) {
			errs = append(errs, field.Invalid(mp.Child("ranges"), len(m.Ranges),
				fmt.Sprintf("every grade must bound the same resources: grade %d bounds %d, grade %d bounds %d", prev.Grade, len(prev.Ranges), m.Grade, len(m.Ranges))))
			continue
		}
		for j, r := range m.Ranges {
			rp := mp.Child("ranges").Index(j)
			if prev.Ranges[j].Name != r.Name {
				errs = append(errs, field.Invalid(rp.Child("name"), r.Name,
					fmt.Sprintf("every grade must bound the same resources in the same order: grade %d has %q here", prev.Grade, prev.Ranges[j].Name)))
				continue
			}
			if prev.Ranges[j].Max.Cmp(r.Min) != 0 {
				errs = append(errs, field.Invalid(rp.Child("min"), r.Min.String(),
					fmt.Sprintf("must equal the max of grade %d's %s range (%s): the grades' ranges must be contiguous and not overlap", prev.Grade, r.Name, prev.Ranges[j].Max.String())))
			}
		}
	}
	return errs
}
