// Package policymatch decides which PropagationPolicy or ClusterPropagationPolicy claims a
// resource template, following Karmada's matching rules: selector semantics, explicit priority,
// implicit priority (name > labelSelector > kind), then policy name, with PropagationPolicies
// always preferred over ClusterPropagationPolicies. All functions are pure: callers list the
// policies (typically from informer caches) and act on the returned Claim.
//
// BestMatch answers "which policy would claim this template now", for a template no policy
// holds. Preemption, taking a template from the policy that holds it, is a separate decision
// (MayPreempt and Preemptor, in preemption.go): a claim is sticky unless a policy allowed to
// preempt outranks its holder.
package policymatch

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// MatchLevel is how precisely a resource selector matches an object; Karmada calls it the
// implicit priority. A higher level wins a tie between policies of equal spec.priority.
type MatchLevel int

const (
	// MatchNone means the selector does not match.
	MatchNone MatchLevel = iota
	// MatchByKind means apiVersion and kind (and namespace, where given) match, and the selector
	// names neither a name nor a label selector.
	MatchByKind
	// MatchByLabelSelector means the selector's labelSelector matches the object's labels.
	MatchByLabelSelector
	// MatchByName means the selector names the object.
	MatchByName
)

// String returns the level's name, for logs and test output.
func (l MatchLevel) String() string {
	switch l {
	case MatchByKind:
		return "ByKind"
	case MatchByLabelSelector:
		return "ByLabelSelector"
	case MatchByName:
		return "ByName"
	default:
		return "None"
	}
}

// SelectorMatches reports whether one resource selector of a policy matches obj, and how
// precisely. policyNamespace is the namespace of the PropagationPolicy that holds the selector,
// or "" for a ClusterPropagationPolicy.
//
// The rules are Karmada's:
//   - apiVersion and kind must equal the object's;
//   - for a PropagationPolicy an empty selector namespace means the policy's namespace (what
//     Karmada's mutating webhook fills in), and the object must live in the policy's namespace
//     whatever the selector says, so cluster-scoped objects never match;
//   - for a ClusterPropagationPolicy an empty selector namespace matches every namespace and
//     cluster-scoped objects; a non-empty one must equal the object's namespace;
//   - a non-empty name must equal the object's name, and the label selector is then ignored;
//   - otherwise a label selector, when set, must match the object's labels (an invalid label
//     selector matches nothing).
//
// On a mismatch it returns (MatchNone, false).
func SelectorMatches(sel policyv1alpha1.ResourceSelector, policyNamespace string, obj *unstructured.Unstructured) (MatchLevel, bool) {
	if obj == nil || sel.APIVersion != obj.GetAPIVersion() || sel.Kind != obj.GetKind() {
		return MatchNone, false
	}
	if !namespaceMatches(sel.Namespace, policyNamespace, obj.GetNamespace()) {
		return MatchNone, false
	}
	if sel.Name != "" {
		if sel.Name != obj.GetName() {
			return MatchNone, false
		}
		return MatchByName, true
	}
	if sel.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil || !s.Matches(labels.Set(obj.GetLabels())) {
			return MatchNone, false
		}
		return MatchByLabelSelector, true
	}
	return MatchByKind, true
}

func namespaceMatches(selectorNamespace, policyNamespace, objNamespace string) bool {
	if policyNamespace != "" {
		if objNamespace != policyNamespace {
			return false
		}
		return selectorNamespace == "" || selectorNamespace == policyNamespace
	}
	return selectorNamespace == "" || selectorNamespace == objNamespace
}

// Claim identifies the policy that claims a resource template.
type Claim struct {
	// Kind is KindPropagationPolicy or KindClusterPropagationPolicy.
	Kind string
	// Namespace of the PropagationPolicy; empty for a ClusterPropagationPolicy.
	Namespace string
	// Name of the policy.
	Name string
	// PermanentID is the value of the policy's permanent-id label
	// (PropagationPolicyPermanentIDLabel or ClusterPropagationPolicyPermanentIDLabel); empty
	// when the policy does not carry it.
	PermanentID string
	// Priority is the policy's spec.priority; 0 when unset.
	Priority int32
	// MatchLevel is the best level at which one of the policy's selectors matched.
	MatchLevel MatchLevel
	// Preemption is the policy's spec.preemption; empty (as in a policy the API server has not
	// defaulted) means Never.
	Preemption policyv1alpha1.PreemptionBehavior
}

// Same reports whether c and o name the same policy: kind, namespace and name.
func (c Claim) Same(o Claim) bool {
	return c.Kind == o.Kind && c.Namespace == o.Namespace && c.Name == o.Name
}

// String names the policy as Karmada's events do: "PropagationPolicy(ns/name)" or
// "ClusterPropagationPolicy(name)".
func (c Claim) String() string {
	if c.Kind == KindClusterPropagationPolicy {
		return c.Kind + "(" + c.Name + ")"
	}
	return c.Kind + "(" + c.Namespace + "/" + c.Name + ")"
}

// TemplateLabels returns the labels Karmada puts on a resource template claimed by this policy:
// the policy kind's permanent-id label, when the policy has a permanent ID. It returns nil
// otherwise.
func (c Claim) TemplateLabels() map[string]string {
	if c.PermanentID == "" {
		return nil
	}
	if c.Kind == KindClusterPropagationPolicy {
		return map[string]string{ClusterPropagationPolicyPermanentIDLabel: c.PermanentID}
	}
	return map[string]string{PropagationPolicyPermanentIDLabel: c.PermanentID}
}

// TemplateAnnotations returns the annotations Karmada puts on a resource template claimed by
// this policy: the policy's name, and for a PropagationPolicy also its namespace.
func (c Claim) TemplateAnnotations() map[string]string {
	if c.Kind == KindClusterPropagationPolicy {
		return map[string]string{ClusterPropagationPolicyNameAnnotation: c.Name}
	}
	return map[string]string{
		PropagationPolicyNameAnnotation:      c.Name,
		PropagationPolicyNamespaceAnnotation: c.Namespace,
	}
}

// BestMatch returns the policy that claims obj, following Karmada's rules:
//   - PropagationPolicies in obj's namespace are considered first; ClusterPropagationPolicies
//     only when no PropagationPolicy matches, whatever their priorities. Cluster-scoped objects
//     can only be claimed by ClusterPropagationPolicies;
//   - among the matching policies of one kind, the highest spec.priority wins (nil counts as 0);
//     on a tie, the higher MatchLevel of the policy's best selector; then the policy name that
//     sorts first;
//   - policies being deleted (deletionTimestamp set) are skipped.
//
// Nil entries in either list are skipped. It reports false when no policy matches.
func BestMatch(obj *unstructured.Unstructured, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy) (Claim, bool) {
	if obj == nil {
		return Claim{}, false
	}
	return bestAmong(obj, pps, cpps, nil)
}

// bestAmong is BestMatch over the policies whose claim keep accepts (all when keep is nil).
func bestAmong(obj *unstructured.Unstructured, pps []*policyv1alpha1.PropagationPolicy, cpps []*policyv1alpha1.ClusterPropagationPolicy, keep func(Claim) bool) (Claim, bool) {
	if obj.GetNamespace() != "" {
		if c, ok := bestOf(obj, KindPropagationPolicy, PropagationPolicyPermanentIDLabel, pps, ppSpec, keep); ok {
			return c, true
		}
	}
	return bestOf(obj, KindClusterPropagationPolicy, ClusterPropagationPolicyPermanentIDLabel, cpps, cppSpec, keep)
}

func ppSpec(p *policyv1alpha1.PropagationPolicy) *policyv1alpha1.PropagationSpec {
	return &p.Spec
}

func cppSpec(p *policyv1alpha1.ClusterPropagationPolicy) *policyv1alpha1.PropagationSpec {
	return &p.Spec
}

// policyObject is either policy kind, seen through its metadata.
type policyObject interface {
	comparable
	metav1.Object
}

// bestOf is the core shared by both policy kinds: it ranks the matching policies of one kind
// whose claim keep accepts (all when keep is nil).
func bestOf[P policyObject](obj *unstructured.Unstructured, kind, permanentIDLabel string, policies []P, specOf func(P) *policyv1alpha1.PropagationSpec, keep func(Claim) bool) (Claim, bool) {
	var zero P
	var best Claim
	found := false
	for _, p := range policies {
		if p == zero || p.GetDeletionTimestamp() != nil {
			continue
		}
		// A namespaced policy without a namespace is malformed; never let it act as a cluster one.
		if kind == KindPropagationPolicy && p.GetNamespace() == "" {
			continue
		}
		policyNamespace := ""
		if kind == KindPropagationPolicy {
			policyNamespace = p.GetNamespace()
		}
		spec := specOf(p)
		level := bestSelectorLevel(spec.ResourceSelectors, policyNamespace, obj)
		if level == MatchNone {
			continue
		}
		c := Claim{
			Kind:        kind,
			Namespace:   policyNamespace,
			Name:        p.GetName(),
			PermanentID: p.GetLabels()[permanentIDLabel],
			Priority:    priorityOf(spec),
			MatchLevel:  level,
			Preemption:  spec.Preemption,
		}
		if keep != nil && !keep(c) {
			continue
		}
		if !found || outranks(c, best) {
			best, found = c, true
		}
	}
	return best, found
}

func bestSelectorLevel(selectors []policyv1alpha1.ResourceSelector, policyNamespace string, obj *unstructured.Unstructured) MatchLevel {
	best := MatchNone
	for i := range selectors {
		if level, ok := SelectorMatches(selectors[i], policyNamespace, obj); ok && level > best {
			best = level
		}
	}
	return best
}

func priorityOf(spec *policyv1alpha1.PropagationSpec) int32 {
	if spec.Priority == nil {
		return 0
	}
	return *spec.Priority
}

// outranks orders claims of the same policy kind: explicit priority, implicit priority, name.
func outranks(a, b Claim) bool {
	if a.Priority != b.Priority {
		return a.Priority > b.Priority
	}
	if a.MatchLevel != b.MatchLevel {
		return a.MatchLevel > b.MatchLevel
	}
	return a.Name < b.Name
}
