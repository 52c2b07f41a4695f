package validation

import (
	"fmt"
	"sort"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/kubernetes/pkg/apis/core"
	corevalidation "k8s.io/kubernetes/pkg/apis/core/validation"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// validateFederatedResourceQuota checks a FederatedResourceQuota's spec as Karmada's webhook
// does, with Kubernetes' ResourceQuota rules: every resource name in spec.overall and in each
// staticAssignments[].hard is a quota resource (a standard one such as cpu, requests.memory,
// pods or count/deployments.apps, or a domain-prefixed name), every quantity is non-negative
// and whole for the resources counted in units (pods, services, count/...), and each
// staticAssignments[].clusterName is a cluster name (a DNS-1123 label of at most 48
// characters); and, as Karmada's webhook checks, each resource of an assignment is one that
// spec.overall names, and spec.overall is at least the sum of the assignments, per resource.
// Errors carry field paths such as spec.overall[cpu].
func validateFederatedResourceQuota(q *policyv1alpha1.FederatedResourceQuota) field.ErrorList {
	specPath := field.NewPath("spec")
	errs := validateQuotaList(q.Spec.Overall, specPath.Child("overall"))
	for i, a := range q.Spec.StaticAssignments {
		p := specPath.Child("staticAssignments").Index(i)
		for _, msg := range validation.IsDNS1123Label(a.ClusterName) {
			errs = append(errs, field.Invalid(p.Child("clusterName"), a.ClusterName, msg))
		}
		if len(a.ClusterName) > 48 {
			errs = append(errs, field.TooLong(p.Child("clusterName"), a.ClusterName, 48))
		}
		errs = append(errs, validateQuotaList(a.Hard, p.Child("hard"))...)
		for _, k := range sortedNames(a.Hard) {
			if _, ok := q.Spec.Overall[k]; !ok {
				errs = append(errs, field.Invalid(p.Child("hard").Key(string(k)), string(k),
					"assignment resourceName is not exist in overall: add it to spec.overall or remove it from this assignment"))
			}
		}
	}
	for _, k := range sortedNames(q.Spec.Overall) {
		var assigned resource.Quantity
		for _, a := range q.Spec.StaticAssignments {
			if v, ok := a.Hard[k]; ok {
				assigned.Add(v)
			}
		}
		if overall := q.Spec.Overall[k]; overall.Cmp(assigned) < 0 {
			errs = append(errs, field.Invalid(specPath.Child("overall").Key(string(k)), overall.String(),
				fmt.Sprintf("overall is less than assignments (%s assigned to clusters)", assigned.String())))
		}
	}
	return errs
}

// sortedNames are the names of l, sorted.
func sortedNames(l corev1.ResourceList) []corev1.ResourceName {
	out := make([]corev1.ResourceName, 0, len(l))
	for k := range l {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// validateQuotaList checks the names and quantities of one resource list, in name order.
func validateQuotaList(list corev1.ResourceList, fldPath *field.Path) field.ErrorList {
	names := make([]string, 0, len(list))
	for k := range list {
		names = append(names, string(k))
	}
	sort.Strings(names)
	var errs field.ErrorList
	for _, k := range names {
		p := fldPath.Key(k)
		errs = append(errs, corevalidation.ValidateResourceQuotaResourceName(core.ResourceName(k), p)...)
		errs = append(errs, corevalidation.ValidateResourceQuantityValue(core.ResourceName(k), list[corev1.ResourceName(k)], p)...)
	}
	return errs
}
