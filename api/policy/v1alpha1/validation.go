package v1alpha1

import (
	"bytes"
	"fmt"
	"regexp"

	"github.com/distribution/reference"
	corev1 "k8s.io/api/core/v1"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	apivalidation "k8s.io/apimachinery/pkg/api/validation"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	metav1validation "k8s.io/apimachinery/pkg/apis/meta/v1/validation"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// ValidateOverrideSpec checks the OverridePolicy and ClusterOverridePolicy rules that the
// CRD's CEL rules cannot express, standing in for that part of Karmada's validating webhook:
//
//   - fieldOverrider json and yaml operations carry a value for add and replace, and none for
//     remove (the value is schemaless JSON, which CEL cannot inspect);
//   - labelsOverrider values are valid label keys and values, and annotationsOverrider values
//     are valid annotation keys within the annotation size limit;
//   - imageOverrider values fit the component they change: for replace, a whole registry
//     (host[:port]), repository path, or tag or digest; for add, a fragment of one (".cn",
//     "/slim", "-alpine"), so that the overridden image is still a valid reference;
//   - the fieldSelector of each targetCluster passes ValidateFieldSelector, and its
//     labelSelector and those of spec.resourceSelectors are well formed
//     (validateLabelSelector).
//
// It checks both spec.overrideRules and the deprecated spec.overriders. Errors carry field
// paths rooted at "spec"; an empty list means the spec is valid.
func ValidateOverrideSpec(spec *OverrideSpec) field.ErrorList {
	if spec == nil {
		return nil
	}
	specPath := field.NewPath("spec")
	errs := validateResourceSelectors(spec.ResourceSelectors, specPath.Child("resourceSelectors"))
	for i := range spec.OverrideRules {
		rulePath := specPath.Child("overrideRules").Index(i)
		errs = append(errs, validateClusterAffinity(spec.OverrideRules[i].TargetCluster, rulePath.Child("targetCluster"))...)
		errs = append(errs, validateOverriders(&spec.OverrideRules[i].Overriders, rulePath.Child("overriders"))...)
	}
	errs = append(errs, validateClusterAffinity(spec.TargetCluster, specPath.Child("targetCluster"))...)
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
	for i, im := range o.ImageOverrider {
		errs = append(errs, validateImageValue(&im, fldPath.Child("imageOverrider").Index(i).Child("value"))...)
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

// Image reference grammars (github.com/distribution/reference), anchored: what a replace
// value must be, and the characters an add value (a fragment appended to the component) may
// hold.
var (
	wholeRegistry   = regexp.MustCompile(`^` + reference.DomainRegexp.String() + `$`)
	wholeRepository = regexp.MustCompile(`^` + reference.NameRegexp.String() + `$`)
	wholeTag        = regexp.MustCompile(`^` + reference.TagRegexp.String() + `$`)
	wholeDigest     = regexp.MustCompile(`^` + reference.DigestRegexp.String() + `$`)
	registryPart    = regexp.MustCompile(`^[a-zA-Z0-9.:-]+$`)
	repositoryPart  = regexp.MustCompile(`^[a-z0-9._/-]+$`)
	tagPart         = regexp.MustCompile(`^[\w.-]+$`)
)

// validateImageValue checks an imageOverrider's value against its component (remove takes no
// value; add and replace one, which the CRD requires).
func validateImageValue(o *ImageOverrider, fldPath *field.Path) field.ErrorList {
	if o.Value == "" || o.Operator == OverriderOpRemove {
		return nil
	}
	var ok bool
	var want string
	switch {
	case o.Component == Registry && o.Operator == OverriderOpReplace:
		ok, want = wholeRegistry.MatchString(o.Value), "a registry host, optionally with a port (registry.example.com:5000)"
	case o.Component == Registry:
		ok, want = registryPart.MatchString(o.Value), "letters, digits, '.', '-' and ':' to append to the registry (.cn)"
	case o.Component == Repository && o.Operator == OverriderOpReplace:
		ok, want = wholeRepository.MatchString(o.Value), "a repository path of lowercase components (library/nginx)"
	case o.Component == Repository:
		ok, want = repositoryPart.MatchString(o.Value), "lowercase letters, digits, '.', '_', '-' and '/' to append to the repository (/slim)"
	case o.Component == Tag && o.Operator == OverriderOpReplace:
		ok, want = wholeTag.MatchString(o.Value) || wholeDigest.MatchString(o.Value), "a tag (letters, digits, '_', '.', '-', at most 128, not starting with '.' or '-') or a digest (sha256:...)"
	case o.Component == Tag:
		ok, want = tagPart.MatchString(o.Value), "letters, digits, '_', '.' and '-' to append to the tag (-alpine)"
	default:
		return nil // the CRD's enums refuse other components and operators
	}
	if ok {
		return nil
	}
	return field.ErrorList{field.Invalid(fldPath, o.Value, fmt.Sprintf("not a valid %s value for %s: want %s", o.Component, o.Operator, want))}
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

// ValidatePropagationSpec checks the PropagationPolicy and ClusterPropagationPolicy rules that
// the CRD's CEL rules cannot express within the API server's cost budget, standing in for that
// part of Karmada's validating webhook: every fieldSelector of the placement (clusterAffinity,
// each clusterAffinities term and its overflowAffinities, each staticWeightList targetCluster)
// uses only the keys provider, region and zone and the operators In and NotIn; the
// clusterAffinities terms are named by label keys and their overflowAffinities are used as
// Karmada allows (validateOverflowAffinities); the
// clusterTolerations are well formed (validateClusterTolerations); every label selector
// (spec.resourceSelectors and the placement's cluster affinities) is well formed
// (validateLabelSelector); the workloadAffinity groupByLabelKeys are label keys and the
// failover statePreservation aliasLabelNames label names, as Karmada's webhook requires.
// Errors carry field paths rooted at "spec"; an empty list means the spec is valid.
func ValidatePropagationSpec(spec *PropagationSpec) field.ErrorList {
	if spec == nil {
		return nil
	}
	placement := field.NewPath("spec", "placement")
	p := &spec.Placement
	errs := validateResourceSelectors(spec.ResourceSelectors, field.NewPath("spec", "resourceSelectors"))
	errs = append(errs, validateClusterAffinity(p.ClusterAffinity, placement.Child("clusterAffinity"))...)
	for i := range p.ClusterAffinities {
		term := &p.ClusterAffinities[i]
		termPath := placement.Child("clusterAffinities").Index(i)
		errs = append(errs, validateLabelKey(term.AffinityName, termPath.Child("affinityName"))...)
		errs = append(errs, validateClusterAffinity(&term.ClusterAffinity, termPath)...)
		errs = append(errs, validateOverflowAffinities(term, p.ReplicaScheduling, termPath)...)
	}
	errs = append(errs, validateClusterTolerations(p.ClusterTolerations, placement.Child("clusterTolerations"))...)
	if rs := p.ReplicaScheduling; rs != nil && rs.WeightPreference != nil {
		for i := range rs.WeightPreference.StaticWeightList {
			errs = append(errs, validateClusterAffinity(&rs.WeightPreference.StaticWeightList[i].TargetCluster,
				placement.Child("replicaScheduling", "weightPreference", "staticWeightList").Index(i).Child("targetCluster"))...)
		}
	}
	if wa := p.WorkloadAffinity; wa != nil {
		if wa.Affinity != nil {
			errs = append(errs, validateLabelKey(wa.Affinity.GroupByLabelKey, placement.Child("workloadAffinity", "affinity", "groupByLabelKey"))...)
		}
		if wa.AntiAffinity != nil {
			errs = append(errs, validateLabelKey(wa.AntiAffinity.GroupByLabelKey, placement.Child("workloadAffinity", "antiAffinity", "groupByLabelKey"))...)
		}
	}
	if f := spec.Failover; f != nil {
		failover := field.NewPath("spec", "failover")
		if f.Cluster != nil {
			errs = append(errs, validateStatePreservation(f.Cluster.StatePreservation, failover.Child("cluster", "statePreservation"))...)
		}
		if f.Application != nil {
			errs = append(errs, validateStatePreservation(f.Application.StatePreservation, failover.Child("application", "statePreservation"))...)
		}
	}
	return errs
}

// validateOverflowAffinities checks a clusterAffinities term's overflowAffinities as Karmada's
// webhook does: only with replicas Divided by dynamic weight or Aggregated, only beside a
// non-empty inline affinity (the preferred group), each named by a label key that is unique
// within the term and differs from the term's own affinityName.
func validateOverflowAffinities(term *ClusterAffinityTerm, rs *ReplicaSchedulingStrategy, termPath *field.Path) field.ErrorList {
	if term.OverflowAffinities == nil {
		return nil
	}
	var errs field.ErrorList
	path := termPath.Child("overflowAffinities")
	if !OverflowSchedulingAllowed(rs) {
		errs = append(errs, field.Forbidden(path, "overflowAffinities can only be used together with dynamic weight or aggregated scheduling"))
	}
	a := &term.ClusterAffinity
	if a.LabelSelector == nil && a.FieldSelector == nil && len(a.ClusterNames) == 0 && len(a.ExcludeClusters) == 0 {
		errs = append(errs, field.Forbidden(path, "overflowAffinities can only be used together with the inline ClusterAffinity"))
	}
	seen := map[string]bool{term.AffinityName: true}
	for j := range term.OverflowAffinities {
		o := &term.OverflowAffinities[j]
		namePath := path.Index(j).Child("affinityName")
		errs = append(errs, validateLabelKey(o.AffinityName, namePath)...)
		if seen[o.AffinityName] {
			errs = append(errs, field.Invalid(namePath, o.AffinityName, "overflow affinity name must be unique and must not duplicate the primary group's affinityName"))
		}
		seen[o.AffinityName] = true
		errs = append(errs, validateClusterAffinity(&o.ClusterAffinity, path.Index(j))...)
	}
	return errs
}

// OverflowSchedulingAllowed reports whether rs is a replica scheduling that overflowAffinities
// work with: Divided, and Aggregated or Weighted by dynamic weight (Karmada's
// IsOverflowSchedulingAllowed). An empty replicaDivisionPreference counts as Weighted, the
// default Karmada's webhook fills in.
func OverflowSchedulingAllowed(rs *ReplicaSchedulingStrategy) bool {
	if rs == nil || rs.ReplicaSchedulingType != ReplicaSchedulingTypeDivided {
		return false
	}
	switch rs.ReplicaDivisionPreference {
	case ReplicaDivisionPreferenceAggregated:
		return true
	case ReplicaDivisionPreferenceWeighted, "":
		return rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
	}
	return false
}

// validateResourceSelectors checks the label selector of each resource selector.
func validateResourceSelectors(selectors []ResourceSelector, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i := range selectors {
		errs = append(errs, validateLabelSelector(selectors[i].LabelSelector, fldPath.Index(i).Child("labelSelector"))...)
	}
	return errs
}

// validateLabelSelector checks a label selector as Kubernetes checks a workload's: matchLabels
// keys and values have label syntax, and each matchExpressions requirement has a label key,
// an operator In, NotIn, Exists or DoesNotExist, values for In and NotIn and none for Exists
// and DoesNotExist. Karmada turns such a selector into a label query when it matches, where
// a malformed one matches nothing; refusing it at admission says why. Nil is valid.
func validateLabelSelector(sel *metav1.LabelSelector, fldPath *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	return metav1validation.ValidateLabelSelector(sel, metav1validation.LabelSelectorValidationOptions{}, fldPath)
}

// validateLabelKey checks that key is a label key (an optional DNS-subdomain prefix and "/",
// then a name of at most 63 characters).
func validateLabelKey(key string, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range validation.IsQualifiedName(key) {
		errs = append(errs, field.Invalid(fldPath, key, msg))
	}
	return errs
}

// validateStatePreservation checks that each rule's aliasLabelName is a label key, since the
// preserved value is handed to the new cluster under that label (nil is valid).
func validateStatePreservation(sp *StatePreservation, fldPath *field.Path) field.ErrorList {
	if sp == nil {
		return nil
	}
	var errs field.ErrorList
	for i, r := range sp.Rules {
		errs = append(errs, validateLabelKey(r.AliasLabelName, fldPath.Child("rules").Index(i).Child("aliasLabelName"))...)
	}
	return errs
}

// validateClusterTolerations checks placement.clusterTolerations as Kubernetes checks a pod's
// tolerations, with Karmada's restriction: the operator is Exists or Equal (Karmada refuses Lt
// and Gt for clusters), Exists takes no value, the effect is NoSchedule, PreferNoSchedule or
// NoExecute (or empty, for all), the key is a qualified name (empty only with Exists), the value
// a label value, and tolerationSeconds only goes with NoExecute.
func validateClusterTolerations(tolerations []corev1.Toleration, fldPath *field.Path) field.ErrorList {
	var errs field.ErrorList
	for i, t := range tolerations {
		p := fldPath.Index(i)
		if t.Key != "" {
			for _, msg := range validation.IsQualifiedName(t.Key) {
				errs = append(errs, field.Invalid(p.Child("key"), t.Key, msg))
			}
		}
		switch t.Operator {
		case corev1.TolerationOpEqual, "":
			if t.Key == "" {
				errs = append(errs, field.Invalid(p.Child("operator"), t.Operator, "operator must be Exists when key is empty"))
			}
			for _, msg := range validation.IsValidLabelValue(t.Value) {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, msg))
			}
		case corev1.TolerationOpExists:
			if t.Value != "" {
				errs = append(errs, field.Invalid(p.Child("value"), t.Value, "value must be empty when operator is Exists"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), t.Operator, []string{string(corev1.TolerationOpEqual), string(corev1.TolerationOpExists)}))
		}
		switch t.Effect {
		case corev1.TaintEffectNoSchedule, corev1.TaintEffectPreferNoSchedule, corev1.TaintEffectNoExecute, "":
		default:
			errs = append(errs, field.NotSupported(p.Child("effect"), t.Effect,
				[]string{string(corev1.TaintEffectNoSchedule), string(corev1.TaintEffectPreferNoSchedule), string(corev1.TaintEffectNoExecute)}))
		}
		if t.TolerationSeconds != nil && t.Effect != corev1.TaintEffectNoExecute {
			errs = append(errs, field.Invalid(p.Child("effect"), t.Effect, "effect must be NoExecute when tolerationSeconds is set"))
		}
	}
	return errs
}

// validateClusterAffinity checks the fieldSelector (ValidateFieldSelector) and the
// labelSelector (validateLabelSelector) of a ClusterAffinity (nil is valid).
func validateClusterAffinity(a *ClusterAffinity, fldPath *field.Path) field.ErrorList {
	if a == nil {
		return nil
	}
	errs := ValidateFieldSelector(a.FieldSelector, fldPath.Child("fieldSelector"))
	return append(errs, validateLabelSelector(a.LabelSelector, fldPath.Child("labelSelector"))...)
}

// ValidateClusterTaintPolicySpec checks what the ClusterTaintPolicy CRD's schema cannot: each
// taint's key is a label key (qualified name), its value a label value and its effect
// NoSchedule, PreferNoSchedule or NoExecute, as a cluster's taints must be, and the
// targetClusters labelSelector is well formed. Its fieldSelector is not held to the policies'
// rule (keys provider, region, zone): Karmada's ClusterTaintPolicy webhook accepts any key, which
// then matches no cluster. Errors carry field paths rooted at "spec"; an empty list means the
// spec is valid.
func ValidateClusterTaintPolicySpec(spec *ClusterTaintPolicySpec) field.ErrorList {
	if spec == nil {
		return nil
	}
	specPath := field.NewPath("spec")
	var errs field.ErrorList
	if spec.TargetClusters != nil {
		errs = validateLabelSelector(spec.TargetClusters.LabelSelector, specPath.Child("targetClusters", "labelSelector"))
	}
	for i, t := range spec.Taints {
		errs = append(errs, clusterv1alpha1.ValidateTaint(t.Key, t.Value, t.Effect, specPath.Child("taints").Index(i))...)
	}
	return errs
}

// ValidateFieldSelector checks a cluster fieldSelector as Karmada's webhook does: each
// requirement's key is provider, region or zone, and its operator In or NotIn. The errors
// (one per bad requirement, at fldPath.matchExpressions[i]) carry Karmada's wording, such as
// `unsupported key "color", must be provider, region, or zone`. A nil selector is valid.
func ValidateFieldSelector(fs *FieldSelector, fldPath *field.Path) field.ErrorList {
	if fs == nil {
		return nil
	}
	var errs field.ErrorList
	for i, req := range fs.MatchExpressions {
		reqPath := fldPath.Child("matchExpressions").Index(i)
		switch req.Key {
		case ProviderField, RegionField, ZoneField:
		default:
			errs = append(errs, field.Invalid(reqPath.Child("key"), req.Key,
				fmt.Sprintf("unsupported key %q, must be provider, region, or zone", req.Key)))
		}
		switch req.Operator {
		case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn:
		default:
			errs = append(errs, field.Invalid(reqPath.Child("operator"), req.Operator,
				fmt.Sprintf("unsupported operator %q, must be In or NotIn", req.Operator)))
		}
	}
	return errs
}
