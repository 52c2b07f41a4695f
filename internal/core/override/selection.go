package override

import (
	"cmp"
	"slices"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
)

// implicitPriority is how precisely an override policy selects a resource template. Karmada
// applies the policies of one kind in ascending implicit priority, so the most precise one is
// applied last and wins.
type implicitPriority int

const (
	priorityNone implicitPriority = iota
	// priorityAll: the policy has no resourceSelectors and so selects everything it can see.
	priorityAll
	// priorityKind: a selector matches by apiVersion and kind (and namespace) only.
	priorityKind
	// priorityLabelSelector: a selector matches by its labelSelector.
	priorityLabelSelector
	// priorityName: a selector names the template.
	priorityName
)

// selected is a policy that selects the template, seen through what applying it needs.
type selected struct {
	kind      string
	namespace string
	name      string
	spec      *policyv1alpha1.OverrideSpec
	priority  implicitPriority
}

// wrap fills in the policy identity of an *Error raised while applying the policy.
func (p selected) wrap(err *Error) *Error {
	err.PolicyKind, err.PolicyNamespace, err.PolicyName = p.kind, p.namespace, p.name
	return err
}

// selectPolicies returns the policies that select obj in application order: the
// ClusterOverridePolicies, then the OverridePolicies, each sorted by ascending implicit
// priority and then by name.
func selectPolicies(obj *unstructured.Unstructured, ops []*policyv1alpha1.OverridePolicy, cops []*policyv1alpha1.ClusterOverridePolicy) []selected {
	clusterWide := matching(obj, KindClusterOverridePolicy, cops, copSpec)
	namespaced := matching(obj, KindOverridePolicy, ops, opSpec)
	return append(clusterWide, namespaced...)
}

func opSpec(p *policyv1alpha1.OverridePolicy) *policyv1alpha1.OverrideSpec { return &p.Spec }

func copSpec(p *policyv1alpha1.ClusterOverridePolicy) *policyv1alpha1.OverrideSpec { return &p.Spec }

// policyObject is either override policy kind, seen through its metadata.
type policyObject interface {
	comparable
	metav1.Object
}

// matching is the core shared by both policy kinds: it keeps the policies of one kind that
// select obj and sorts them into application order.
func matching[P policyObject](obj *unstructured.Unstructured, kind string, policies []P, specOf func(P) *policyv1alpha1.OverrideSpec) []selected {
	var zero P
	var out []selected
	for _, p := range policies {
		if p == zero || p.GetDeletionTimestamp() != nil {
			continue
		}
		policyNamespace := ""
		if kind == KindOverridePolicy {
			// A namespaced policy without a namespace is malformed; never let it act cluster-wide.
			if p.GetNamespace() == "" {
				continue
			}
			policyNamespace = p.GetNamespace()
		}
		spec := specOf(p)
		priority := selectorPriority(spec.ResourceSelectors, policyNamespace, obj)
		if priority == priorityNone {
			continue
		}
		out = append(out, selected{kind: kind, namespace: policyNamespace, name: p.GetName(), spec: spec, priority: priority})
	}
	slices.SortStableFunc(out, func(a, b selected) int {
		if c := cmp.Compare(a.priority, b.priority); c != 0 {
			return c
		}
		return cmp.Compare(a.name, b.name)
	})
	return out
}

// selectorPriority returns how precisely the best of selectors matches obj, or priorityNone.
// policyNamespace is the OverridePolicy's namespace, or "" for a ClusterOverridePolicy.
func selectorPriority(selectors []policyv1alpha1.ResourceSelector, policyNamespace string, obj *unstructured.Unstructured) implicitPriority {
	if len(selectors) == 0 {
		if policyNamespace != "" && obj.GetNamespace() != policyNamespace {
			return priorityNone
		}
		return priorityAll
	}
	best := priorityNone
	for i := range selectors {
		level, ok := policymatch.SelectorMatches(selectors[i], policyNamespace, obj)
		if !ok {
			continue
		}
		best = max(best, priorityOf(level))
	}
	return best
}

func priorityOf(level policymatch.MatchLevel) implicitPriority {
	switch level {
	case policymatch.MatchByName:
		return priorityName
	case policymatch.MatchByLabelSelector:
		return priorityLabelSelector
	case policymatch.MatchByKind:
		return priorityKind
	default:
		return priorityNone
	}
}
