package override

import (
	"encoding/json"
	"errors"
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

// SetWorkAnnotations returns a Work's annotations with the applied-override
// records replaced by those in applied (as from ApplyForWork): a record no
// longer in applied is removed. annotations may be nil; it is modified and
// returned.
func SetWorkAnnotations(annotations, applied map[string]string) map[string]string {
	for _, k := range []string{AppliedOverridesAnnotation, AppliedClusterOverridesAnnotation} {
		v, ok := applied[k]
		switch {
		case ok && annotations == nil:
			annotations = map[string]string{k: v}
		case ok:
			annotations[k] = v
		default:
			delete(annotations, k)
		}
	}
	return annotations
}

// SameWorkAnnotations reports whether a Work's annotations already hold
// exactly the applied-override records in applied.
func SameWorkAnnotations(annotations, applied map[string]string) bool {
	for _, k := range []string{AppliedOverridesAnnotation, AppliedClusterOverridesAnnotation} {
		v, ok := annotations[k]
		w, want := applied[k]
		if ok != want || v != w {
			return false
		}
	}
	return true
}

// PolicyOutcome is what became of one override policy for one cluster, as
// Karmada reports it in ApplyOverridePolicySucceed and
// ApplyOverridePolicyFailed events on the resource template.
type PolicyOutcome struct {
	// Kind is KindOverridePolicy or KindClusterOverridePolicy; Namespace is
	// the OverridePolicy's (empty for a ClusterOverridePolicy).
	Kind, Namespace, Name string
	// Cluster is the member cluster the copy was rendered for.
	Cluster string
	// Err is why the policy could not be applied; nil when it was.
	Err error
}

// Instance identifies the policy and cluster, so that each has outcomes of
// its own.
func (o PolicyOutcome) Instance() string {
	return o.Kind + "/" + o.Namespace + "/" + o.Name + "@" + o.Cluster
}

// Message is Karmada's event message, "Apply override policy(ns/name) for
// cluster(member1) succeed." or "Apply cluster override policy(name) for
// cluster(member1) failed: <cause>" (Karmada stops at "failed."; the cause
// says what to fix).
func (o PolicyOutcome) Message() string {
	what := fmt.Sprintf("Apply override policy(%s/%s) for cluster(%s)", o.Namespace, o.Name, o.Cluster)
	if o.Kind == KindClusterOverridePolicy {
		what = fmt.Sprintf("Apply cluster override policy(%s) for cluster(%s)", o.Name, o.Cluster)
	}
	if o.Err != nil {
		return what + " failed: " + o.Err.Error()
	}
	return what + " succeed."
}

// Failure is the failure as an error whose text is the whole Message, for
// a Warning event; nil when the policy was applied.
func (o PolicyOutcome) Failure() error {
	if o.Err == nil {
		return nil
	}
	return errors.New(o.Message())
}

// Outcomes lists the policy outcomes of rendering a copy of a resource in
// namespace for cluster: with err nil, a success for every policy in
// applied, ClusterOverridePolicies first, each once; with err an *Error
// (as from Apply or ApplyForWork), the failure of the policy it names;
// with another error, none.
func Outcomes(namespace, cluster string, applied Applied, err error) []PolicyOutcome {
	if err != nil {
		var oerr *Error
		if !errors.As(err, &oerr) {
			return nil
		}
		return []PolicyOutcome{{Kind: oerr.PolicyKind, Namespace: oerr.PolicyNamespace, Name: oerr.PolicyName, Cluster: cluster, Err: oerr.Err}}
	}
	var out []PolicyOutcome
	for _, name := range applied.ClusterOverridePolicyNames() {
		out = append(out, PolicyOutcome{Kind: KindClusterOverridePolicy, Name: name, Cluster: cluster})
	}
	for _, name := range applied.OverridePolicyNames() {
		out = append(out, PolicyOutcome{Kind: KindOverridePolicy, Namespace: namespace, Name: name, Cluster: cluster})
	}
	return out
}
