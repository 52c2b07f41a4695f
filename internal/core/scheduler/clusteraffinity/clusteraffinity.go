// Package clusteraffinity decides whether a member cluster satisfies a Karmada ClusterAffinity:
// the clusterNames, exclude, labelSelector and fieldSelector of placement.clusterAffinity, of
// each placement.clusterAffinities term, and of the targetCluster of static weights and
// override rules.
package clusteraffinity

import (
	"fmt"
	"slices"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/sets"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Matcher is a compiled ClusterAffinity. The zero value and a Matcher compiled from nil
// match every cluster.
type Matcher struct {
	path     string
	names    sets.Set[string]
	exclude  sets.Set[string]
	selector labels.Selector
	fields   []corev1.NodeSelectorRequirement
}

// Compile checks and compiles affinity. path names the affinity in rejection reasons, for
// example "clusterAffinity" or "clusterAffinities[backup]". It returns an error when the label
// selector is invalid, or when a field selector uses a key other than provider, region and
// zone or an operator other than In, NotIn, Exists and DoesNotExist.
func Compile(path string, affinity *policyv1alpha1.ClusterAffinity) (*Matcher, error) {
	m := &Matcher{path: path}
	if affinity == nil {
		return m, nil
	}
	if len(affinity.ClusterNames) > 0 {
		m.names = sets.New(affinity.ClusterNames...)
	}
	if len(affinity.ExcludeClusters) > 0 {
		m.exclude = sets.New(affinity.ExcludeClusters...)
	}
	if affinity.LabelSelector != nil {
		selector, err := metav1.LabelSelectorAsSelector(affinity.LabelSelector)
		if err != nil {
			return nil, fmt.Errorf("%s.labelSelector: %w", path, err)
		}
		m.selector = selector
	}
	if affinity.FieldSelector != nil {
		for _, req := range affinity.FieldSelector.MatchExpressions {
			if err := checkFieldRequirement(req); err != nil {
				return nil, fmt.Errorf("%s.fieldSelector: %w", path, err)
			}
		}
		m.fields = affinity.FieldSelector.MatchExpressions
	}
	return m, nil
}

func checkFieldRequirement(req corev1.NodeSelectorRequirement) error {
	switch req.Key {
	case policyv1alpha1.ProviderField, policyv1alpha1.RegionField, policyv1alpha1.ZoneField:
	default:
		return fmt.Errorf("unsupported key %q (want provider, region or zone)", req.Key)
	}
	switch req.Operator {
	case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
		return nil
	default:
		return fmt.Errorf("unsupported operator %q for key %q (want In, NotIn, Exists or DoesNotExist)", req.Operator, req.Key)
	}
}

// Match reports whether cluster satisfies the affinity: it is not excluded, it is listed in
// clusterNames (when set), and its labels and fields match the selectors.
func (m *Matcher) Match(cluster *clusterv1alpha1.Cluster) bool {
	part, _ := m.mismatch(cluster)
	return part == ""
}

// Reason returns why cluster does not satisfy the affinity, for example
// "not in clusterAffinity.clusterNames", or "" when it does. Parts are checked in the order
// exclude, clusterNames, labelSelector, fieldSelector, and the first failing one is named.
func (m *Matcher) Reason(cluster *clusterv1alpha1.Cluster) string {
	part, req := m.mismatch(cluster)
	switch part {
	case "":
		return ""
	case "exclude":
		return fmt.Sprintf("in %s.exclude", m.path)
	case "fieldSelector":
		return fmt.Sprintf("%s does not match %s.fieldSelector (%s %s %v)",
			describeField(cluster, req.Key), m.path, req.Key, req.Operator, req.Values)
	case "clusterNames":
		return fmt.Sprintf("not in %s.clusterNames", m.path)
	default:
		return fmt.Sprintf("labels do not match %s.%s", m.path, part)
	}
}

// mismatch names the first part of the affinity the cluster fails, and for the field
// selector the failing requirement; it allocates nothing, as it runs for every cluster.
func (m *Matcher) mismatch(cluster *clusterv1alpha1.Cluster) (string, *corev1.NodeSelectorRequirement) {
	switch {
	case m.exclude.Has(cluster.Name):
		return "exclude", nil
	case m.names != nil && !m.names.Has(cluster.Name):
		return "clusterNames", nil
	case m.selector != nil && !m.selector.Matches(labels.Set(cluster.Labels)):
		return "labelSelector", nil
	}
	for i := range m.fields {
		if !fieldMatches(cluster, m.fields[i]) {
			return "fieldSelector", &m.fields[i]
		}
	}
	return "", nil
}

// Matches is a convenience for a one-off check: it compiles affinity and matches cluster.
// An affinity that does not compile matches nothing.
func Matches(cluster *clusterv1alpha1.Cluster, affinity *policyv1alpha1.ClusterAffinity) bool {
	m, err := Compile("", affinity)
	return err == nil && m.Match(cluster)
}

// FieldValues returns the values a cluster has for a field selector or spreadByField key:
// spec.provider for "provider", spec.region for "region", and spec.zones (or the deprecated
// spec.zone when zones is empty) for "zone". Empty values are left out, so an unset field
// gives an empty slice.
func FieldValues(cluster *clusterv1alpha1.Cluster, key string) []string {
	var values []string
	switch key {
	case policyv1alpha1.ProviderField:
		values = []string{cluster.Spec.Provider}
	case policyv1alpha1.RegionField:
		values = []string{cluster.Spec.Region}
	case policyv1alpha1.ZoneField:
		values = cluster.Spec.Zones
		if len(values) == 0 {
			values = []string{cluster.Spec.Zone}
		}
	}
	return slices.DeleteFunc(slices.Clone(values), func(v string) bool { return v == "" })
}

// fieldMatches applies one requirement. For zone, a multi-zone cluster matches In when any of
// its zones is listed, and NotIn when none is (Karmada's relaxed zone matching).
func fieldMatches(cluster *clusterv1alpha1.Cluster, req corev1.NodeSelectorRequirement) bool {
	values := FieldValues(cluster, req.Key)
	listed := slices.ContainsFunc(values, func(v string) bool { return slices.Contains(req.Values, v) })
	switch req.Operator {
	case corev1.NodeSelectorOpIn:
		return listed
	case corev1.NodeSelectorOpNotIn:
		return !listed
	case corev1.NodeSelectorOpExists:
		return len(values) > 0
	case corev1.NodeSelectorOpDoesNotExist:
		return len(values) == 0
	}
	return false
}

func describeField(cluster *clusterv1alpha1.Cluster, key string) string {
	values := FieldValues(cluster, key)
	switch len(values) {
	case 0:
		return key + " (unset)"
	case 1:
		return fmt.Sprintf("%s %q", key, values[0])
	default:
		return fmt.Sprintf("%s %q", key, values)
	}
}
