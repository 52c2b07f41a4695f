package remedy

import (
	"slices"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	remedyv1alpha1 "github.com/flotilla-io/flotilla/api/remedy/v1alpha1"
)

func TestActions(t *testing.T) {
	cluster := func(name string, conds ...metav1.Condition) *clusterv1alpha1.Cluster {
		c := &clusterv1alpha1.Cluster{}
		c.Name = name
		c.Status.Conditions = conds
		return c
	}
	dnsFalse := metav1.Condition{Type: string(remedyv1alpha1.ServiceDomainNameResolutionReady), Status: metav1.ConditionFalse}
	dnsTrue := metav1.Condition{Type: string(remedyv1alpha1.ServiceDomainNameResolutionReady), Status: metav1.ConditionTrue}
	match := func(op remedyv1alpha1.ClusterConditionOperator, status string) []remedyv1alpha1.DecisionMatch {
		return []remedyv1alpha1.DecisionMatch{{ClusterConditionMatch: &remedyv1alpha1.ClusterConditionRequirement{
			ConditionType: remedyv1alpha1.ServiceDomainNameResolutionReady, Operator: op, ConditionStatus: status}}}
	}
	remedy := func(names []string, m []remedyv1alpha1.DecisionMatch) remedyv1alpha1.Remedy {
		r := remedyv1alpha1.Remedy{Spec: remedyv1alpha1.RemedySpec{DecisionMatches: m, Actions: []remedyv1alpha1.RemedyAction{remedyv1alpha1.TrafficControl}}}
		if names != nil {
			r.Spec.ClusterAffinity = &remedyv1alpha1.ClusterAffinity{ClusterNames: names}
		}
		return r
	}
	traffic := []string{"TrafficControl"}
	for _, tc := range []struct {
		name     string
		remedies []remedyv1alpha1.Remedy
		cluster  *clusterv1alpha1.Cluster
		want     []string
	}{
		{"no remedy", nil, cluster("member2", dnsFalse), nil},
		{"NotEqual True on a failing cluster", []remedyv1alpha1.Remedy{remedy(nil, match(remedyv1alpha1.ClusterConditionNotEqual, "True"))}, cluster("member2", dnsFalse), traffic},
		{"NotEqual True on a healthy cluster", []remedyv1alpha1.Remedy{remedy(nil, match(remedyv1alpha1.ClusterConditionNotEqual, "True"))}, cluster("member2", dnsTrue), nil},
		{"Equal False", []remedyv1alpha1.Remedy{remedy(nil, match(remedyv1alpha1.ClusterConditionEqual, "False"))}, cluster("member2", dnsFalse), traffic},
		{"a condition the cluster lacks matches neither way", []remedyv1alpha1.Remedy{remedy(nil, match(remedyv1alpha1.ClusterConditionNotEqual, "True"))}, cluster("member2"), nil},
		{"no decision matches: always", []remedyv1alpha1.Remedy{remedy([]string{"member2"}, nil)}, cluster("member2"), traffic},
		{"affinity leaves the cluster out", []remedyv1alpha1.Remedy{remedy([]string{"member1"}, nil)}, cluster("member2"), nil},
		{"an empty affinity selects no cluster", []remedyv1alpha1.Remedy{remedy([]string{}, nil)}, cluster("member2"), nil},
		{"two remedies, one action", []remedyv1alpha1.Remedy{remedy(nil, nil), remedy([]string{"member2"}, nil)}, cluster("member2"), traffic},
	} {
		if got := Actions(tc.remedies, tc.cluster); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
