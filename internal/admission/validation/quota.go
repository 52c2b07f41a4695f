package validation

import (
	"sort"

	corev1 "k8s.io/api/core/v1"
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
// characters). Errors carry field paths such as spec.overall[cpu].
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
	}
	return errs
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
