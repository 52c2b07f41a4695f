// Package override is Karmada's override engine as pure functions: given a resource
// template, one member cluster and the OverridePolicies and ClusterOverridePolicies in force, it
// computes the manifest that member cluster receives, and records which override rules were
// applied so the caller can write Karmada's policy.karmada.io/applied-overrides and
// policy.karmada.io/applied-cluster-overrides annotations on the Work.
//
// The order of application is Karmada's: ClusterOverridePolicies before OverridePolicies; within
// each kind, the policy that selects the template less precisely first (implicit priority:
// empty resourceSelectors, then apiVersion/kind only, then labelSelector, then name), ties broken
// by policy name; within a policy, overrideRules in list order; within a rule, the overrider
// kinds in Karmada's documented order (see applyOverriders). A later change wins over an earlier
// one, so the most specific policy has the last word.
package override

import (
	"errors"
	"fmt"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/clusteraffinity"
)

// Policy kinds, as named in Error.PolicyKind.
const (
	// KindOverridePolicy is the kind of Karmada's namespaced override policy.
	KindOverridePolicy = "OverridePolicy"
	// KindClusterOverridePolicy is the kind of Karmada's cluster-scoped override policy.
	KindClusterOverridePolicy = "ClusterOverridePolicy"
)

// Apply applies every ClusterOverridePolicy and OverridePolicy that selects manifest to a copy of
// it, for the member cluster cluster, in Karmada's order (see the package documentation), and
// returns the overridden copy together with the rules that were applied. manifest is not
// modified.
//
// Selection follows Karmada's resourceSelectors rules (policymatch.SelectorMatches): an
// OverridePolicy only ever selects objects in its own namespace, a ClusterOverridePolicy selects
// namespaced and cluster-scoped objects alike, and an empty resourceSelectors list selects every
// object the policy can see. Policies are selected against manifest as given, before any
// override. Nil policies, policies being deleted and OverridePolicies without a namespace are
// skipped.
//
// A rule applies when its targetCluster (a ClusterAffinity; nil means every cluster) matches
// cluster. A policy without overrideRules but with the deprecated top-level targetCluster and
// overriders is treated as that single rule; when overrideRules is set the deprecated fields are
// ignored. Rules whose overriders are all empty are skipped and not recorded.
//
// The returned error is an *Error naming the policy, the rule (as a field path such as
// spec.overrideRules[1].overriders.plaintext[0]) and the JSON pointer that could not be
// overridden; nothing is returned alongside it. A nil manifest or cluster is an error too.
func Apply(manifest *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	ops []*policyv1alpha1.OverridePolicy, cops []*policyv1alpha1.ClusterOverridePolicy) (*unstructured.Unstructured, Applied, error) {
	if manifest == nil || manifest.Object == nil {
		return nil, Applied{}, errors.New("override: nil manifest")
	}
	if cluster == nil {
		return nil, Applied{}, errors.New("override: nil cluster")
	}
	out := manifest.DeepCopy()
	var applied Applied
	for _, p := range selectPolicies(manifest, ops, cops) {
		rules, err := applyPolicy(out, cluster, p)
		if err != nil {
			return nil, Applied{}, err
		}
		if p.kind == KindClusterOverridePolicy {
			applied.ClusterOverrides = append(applied.ClusterOverrides, rules...)
		} else {
			applied.Overrides = append(applied.Overrides, rules...)
		}
	}
	return out, applied, nil
}

// rule is one override rule of a policy, in either the current or the deprecated form.
type rule struct {
	// field is the rule's location in the policy, for error messages: "spec.overrideRules[i]",
	// or "spec" for the deprecated top-level form.
	field      string
	target     *policyv1alpha1.ClusterAffinity
	overriders *policyv1alpha1.Overriders
}

// rulesOf lists the rules of spec: overrideRules when set, otherwise the deprecated
// targetCluster/overriders pair when it overrides anything.
func rulesOf(spec *policyv1alpha1.OverrideSpec) []rule {
	if len(spec.OverrideRules) > 0 {
		rules := make([]rule, 0, len(spec.OverrideRules))
		for i := range spec.OverrideRules {
			r := &spec.OverrideRules[i]
			rules = append(rules, rule{
				field:      fmt.Sprintf("spec.overrideRules[%d]", i),
				target:     r.TargetCluster,
				overriders: &r.Overriders,
			})
		}
		return rules
	}
	if overridersEmpty(&spec.Overriders) {
		return nil
	}
	return []rule{{field: "spec", target: spec.TargetCluster, overriders: &spec.Overriders}}
}

func overridersEmpty(o *policyv1alpha1.Overriders) bool {
	return len(o.Plaintext) == 0 && len(o.ImageOverrider) == 0 && len(o.CommandOverrider) == 0 &&
		len(o.ArgsOverrider) == 0 && len(o.LabelsOverrider) == 0 && len(o.AnnotationsOverrider) == 0 &&
		len(o.FieldOverrider) == 0
}

// applyPolicy applies the rules of one selected policy that target cluster, in order, and
// returns them as applied records.
func applyPolicy(obj *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster, p selected) ([]AppliedOverride, error) {
	var applied []AppliedOverride
	for _, r := range rulesOf(p.spec) {
		if overridersEmpty(r.overriders) {
			continue
		}
		m, err := clusteraffinity.Compile(r.field+".targetCluster", r.target)
		if err != nil {
			return nil, p.wrap(&Error{Field: r.field + ".targetCluster", Err: err})
		}
		if !m.Match(cluster) {
			continue
		}
		if err := applyOverriders(obj, r.overriders, r.field+".overriders"); err != nil {
			return nil, p.wrap(err)
		}
		applied = append(applied, AppliedOverride{PolicyName: p.name, Overriders: *r.overriders.DeepCopy()})
	}
	return applied, nil
}

// Error is the error Apply returns when a policy cannot be applied: an invalid targetCluster, or
// an overrider that does not fit the manifest (a JSON pointer that does not resolve, a value of
// the wrong type, an image reference that cannot be parsed, ...).
type Error struct {
	// PolicyKind is KindOverridePolicy or KindClusterOverridePolicy.
	PolicyKind string
	// PolicyNamespace is the OverridePolicy's namespace; empty for a ClusterOverridePolicy.
	PolicyNamespace string
	// PolicyName is the policy's name.
	PolicyName string
	// Field locates the failing part of the policy, including the rule index, for example
	// "spec.overrideRules[1].overriders.plaintext[0]", or "spec.overriders.imageOverrider[0]" for
	// the deprecated form.
	Field string
	// Path is the JSON pointer in the manifest the overrider acted on, for example
	// "/spec/template/spec/containers/0/image"; empty when the failure is not about one field.
	Path string
	// Err is the cause.
	Err error
}

// Error formats the policy, field, path and cause on one line.
func (e *Error) Error() string {
	policy := e.PolicyName
	if e.PolicyNamespace != "" {
		policy = e.PolicyNamespace + "/" + e.PolicyName
	}
	msg := fmt.Sprintf("%s %s: %s", e.PolicyKind, policy, e.Field)
	if e.Path != "" {
		msg += fmt.Sprintf(" (path %q)", e.Path)
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// ApplyForWork is Apply for a controller that writes a Work: it returns
// the overridden manifest, what was applied, and the annotations Karmada
// records on the Work (not on the manifest, so they never reach the
// member): policy.karmada.io/applied-overrides and
// applied-cluster-overrides, naming the policies and rules that took
// effect (Applied.Annotations). With no policies at all, manifest itself
// is returned, with nothing applied and no annotations. Errors are
// Apply's, wrapped with the cluster's name; errors.As finds the *Error
// naming the policy that failed.
func ApplyForWork(manifest *unstructured.Unstructured, cluster *clusterv1alpha1.Cluster,
	ops []*policyv1alpha1.OverridePolicy, cops []*policyv1alpha1.ClusterOverridePolicy) (*unstructured.Unstructured, Applied, map[string]string, error) {
	if len(ops) == 0 && len(cops) == 0 {
		return manifest, Applied{}, nil, nil
	}
	out, applied, err := Apply(manifest, cluster, ops, cops)
	if err != nil {
		return nil, Applied{}, nil, fmt.Errorf("override for cluster %s: %w", cluster.GetName(), err)
	}
	annotations, err := applied.Annotations()
	if err != nil {
		return nil, Applied{}, nil, fmt.Errorf("override for cluster %s: %w", cluster.GetName(), err)
	}
	return out, applied, annotations, nil
}
