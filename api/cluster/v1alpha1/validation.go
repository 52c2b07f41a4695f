package v1alpha1

import (
	"fmt"
	"net/url"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// ValidateClusterSpec checks the Cluster fields whose syntax the CRD's schema does not, as
// Karmada's API server validates a Cluster:
//
//   - apiEndpoint, when set, is a URL with a host and without user information, query or
//     fragment (https://10.0.0.1:6443);
//   - proxyURL, when set, is a URL with the scheme http, https or socks5;
//   - provider, region, zone and each of zones are label values (at most 63 characters of
//     letters, digits, '-', '_' and '.', starting and ending with a letter or digit), since
//     policies' fieldSelectors match them as such;
//   - each taint has a label key (qualified name), a label value and the effect NoSchedule,
//     PreferNoSchedule or NoExecute, and no two taints share a key and effect;
//   - resourceModels, when set, are grades with unique numbers that bound the same resources
//     with contiguous, non-overlapping ranges (validateResourceModels).
//
// Errors carry field paths rooted at "spec"; an empty list means the spec is valid.
func ValidateClusterSpec(spec *ClusterSpec) field.ErrorList {
	if spec == nil {
		return nil
	}
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	if spec.APIEndpoint != "" {
		errs = append(errs, validateAPIEndpoint(spec.APIEndpoint, specPath.Child("apiEndpoint"))...)
	}
	if spec.ProxyURL != "" {
		p := specPath.Child("proxyURL")
		u, err := url.Parse(spec.ProxyURL)
		switch {
		case err != nil:
			errs = append(errs, field.Invalid(p, spec.ProxyURL, "must be a URL: "+err.Error()))
		case u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "socks5":
			errs = append(errs, field.Invalid(p, spec.ProxyURL, fmt.Sprintf("unsupported scheme %q, must be http, https or socks5", u.Scheme)))
		}
	}
	errs = append(errs, labelValue(spec.Provider, specPath.Child("provider"))...)
	errs = append(errs, labelValue(spec.Region, specPath.Child("region"))...)
	errs = append(errs, labelValue(spec.Zone, specPath.Child("zone"))...)
	for i, z := range spec.Zones {
		errs = append(errs, labelValue(z, specPath.Child("zones").Index(i))...)
	}
	errs = append(errs, validateTaints(spec.Taints, specPath.Child("taints"))...)
	errs = append(errs, validateResourceModels(spec.ResourceModels, specPath.Child("resourceModels"))...)
	return errs
}

// validateAPIEndpoint checks a member cluster's API endpoint URL.
func validateAPIEndpoint(endpoint string, p *field.Path) field.ErrorList {
	const form = "; want a URL such as https://hostname:port or https://IP:port"
	u, err := url.Parse(endpoint)
	if err != nil {
		return field.ErrorList{field.Invalid(p, endpoint, "must be a URL: "+err.Error()+form)}
	}
	var errs field.ErrorList
	if u.Host == "" {
		errs = append(errs, field.Invalid(p, endpoint, "the URL has no host"+form))
	}
	if u.User != nil {
		errs = append(errs, field.Invalid(p, endpoint, "user information is not allowed in the URL"))
	}
	if u.Fragment != "" {
		errs = append(errs, field.Invalid(p, endpoint, "a fragment is not allowed in the URL"))
	}
	if u.RawQuery != "" {
		errs = append(errs, field.Invalid(p, endpoint, "query parameters are not allowed in the URL"))
	}
	return errs
}

func labelValue(v string, p *field.Path) field.ErrorList {
	if msgs := validation.IsValidLabelValue(v); len(msgs) > 0 {
		return field.ErrorList{field.Invalid(p, v, strings.Join(msgs, "; "))}
	}
	return nil
}

// validateTaints checks a cluster's taints as Kubernetes checks a node's.
func validateTaints(taints []corev1.Taint, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	seen := map[string]bool{}
	for i, t := range taints {
		p := fldPath.Index(i)
		errs = append(errs, ValidateTaint(t.Key, t.Value, t.Effect, p)...)
		k := t.Key + "\x00" + string(t.Effect)
		if seen[k] {
			errs = append(errs, field.Duplicate(p, fmt.Sprintf("taint %s:%s", t.Key, t.Effect)))
		}
		seen[k] = true
	}
	return errs
}

// ValidateTaint checks one taint as Kubernetes checks a node's: key a label key (qualified
// name), value a label value, effect NoSchedule, PreferNoSchedule or NoExecute. Errors are at
// fldPath's key, value and effect; used for a Cluster's taints and a ClusterTaintPolicy's.
func ValidateTaint(key, value string, effect corev1.TaintEffect, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(key) {
		errs = append(errs, field.Invalid(fldPath.Child("key"), key, msg))
	}
	for _, msg := range validation.IsValidLabelValue(value) {
		errs = append(errs, field.Invalid(fldPath.Child("value"), value, msg))
	}
	switch effect {
	case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute:
	default:
		errs = append(errs, field.NotSupported(fldPath.Child("effect"), effect,
			[]string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}))
	}
	return errs
}
