package override

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Annotations Karmada writes on a Work to record the overrides applied to its manifest. Their
// values are produced by Applied.Annotations.
const (
	// AppliedOverridesAnnotation records the applied OverridePolicy rules.
	AppliedOverridesAnnotation = "policy.karmada.io/applied-overrides"
	// AppliedClusterOverridesAnnotation records the applied ClusterOverridePolicy rules.
	AppliedClusterOverridesAnnotation = "policy.karmada.io/applied-cluster-overrides"
)

// AppliedOverride is one override rule that was applied: the name of its policy and the rule's
// overriders. It marshals to Karmada's record shape, {"policyName": ..., "overriders": {...}}.
type AppliedOverride struct {
	// PolicyName is the name of the policy (without namespace, as Karmada records it).
	PolicyName string `json:"policyName"`
	// Overriders are the overriders of the applied rule.
	Overriders policyv1alpha1.Overriders `json:"overriders"`
}

// Applied lists the override rules Apply applied, per policy kind, in the order they were
// applied. A policy with several rules that target the cluster appears once per rule.
type Applied struct {
	// ClusterOverrides are the applied ClusterOverridePolicy rules.
	ClusterOverrides []AppliedOverride
	// Overrides are the applied OverridePolicy rules.
	Overrides []AppliedOverride
}

// OverridePolicyNames returns the names of the OverridePolicies that were applied, each once,
// in application order.
func (a Applied) OverridePolicyNames() []string { return policyNames(a.Overrides) }

// ClusterOverridePolicyNames returns the names of the ClusterOverridePolicies that were applied,
// each once, in application order.
func (a Applied) ClusterOverridePolicyNames() []string { return policyNames(a.ClusterOverrides) }

func policyNames(items []AppliedOverride) []string {
	var names []string
	for _, item := range items {
		if !slices.Contains(names, item.PolicyName) {
			names = append(names, item.PolicyName)
		}
	}
	return names
}

// Annotations returns the annotations Karmada puts on the Work for these overrides:
// AppliedOverridesAnnotation when an OverridePolicy was applied and
// AppliedClusterOverridesAnnotation when a ClusterOverridePolicy was, each a JSON array of
// AppliedOverride sorted by policy name (rules of one policy stay in application order), for
// example
//
//	[{"policyName":"nginx-op","overriders":{"labelsOverrider":[{"operator":"add","value":{"env":"dev"}}]}}]
//
// It returns an empty map when nothing was applied. It fails only if an overrider value cannot
// be marshalled, which a policy decoded from the API server never causes.
func (a Applied) Annotations() (map[string]string, error) {
	annotations := map[string]string{}
	for _, kind := range []struct {
		key   string
		items []AppliedOverride
	}{
		{AppliedOverridesAnnotation, a.Overrides},
		{AppliedClusterOverridesAnnotation, a.ClusterOverrides},
	} {
		if len(kind.items) == 0 {
			continue
		}
		items := slices.Clone(kind.items)
		slices.SortStableFunc(items, func(x, y AppliedOverride) int { return strings.Compare(x.PolicyName, y.PolicyName) })
		value, err := json.Marshal(items)
		if err != nil {
			return nil, fmt.Errorf("marshal %s: %w", kind.key, err)
		}
		annotations[kind.key] = string(value)
	}
	return annotations, nil
}
