package clusteraffinity

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

func fields(reqs ...corev1.NodeSelectorRequirement) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{FieldSelector: &policyv1alpha1.FieldSelector{MatchExpressions: reqs}}
}

func req(key string, op corev1.NodeSelectorOperator, values ...string) corev1.NodeSelectorRequirement {
	return corev1.NodeSelectorRequirement{Key: key, Operator: op, Values: values}
}

func TestMatch(t *testing.T) {
	member := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member1", Labels: map[string]string{"env": "prod"}},
		Spec:       clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "us-east-1", Zones: []string{"use1-a", "use1-b"}},
	}
	legacyZone := &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: "member2"},
		Spec:       clusterv1alpha1.ClusterSpec{Zone: "old-zone"},
	}
	tests := []struct {
		name       string
		cluster    *clusterv1alpha1.Cluster
		affinity   *policyv1alpha1.ClusterAffinity
		want       bool
		wantReason string
	}{
		{name: "nil affinity matches every cluster", cluster: member, want: true},
		{name: "clusterNames admits listed clusters", cluster: member, affinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}}, want: true},
		{name: "clusterNames rejects others", cluster: member, affinity: &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member9"}},
			wantReason: "not in clusterAffinity.clusterNames"},
		{name: "exclude wins over clusterNames", cluster: member,
			affinity:   &policyv1alpha1.ClusterAffinity{ClusterNames: []string{"member1"}, ExcludeClusters: []string{"member1"}},
			wantReason: "in clusterAffinity.exclude"},
		{name: "labelSelector expressions", cluster: member, want: true, affinity: &policyv1alpha1.ClusterAffinity{
			LabelSelector: &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
				{Key: "env", Operator: metav1.LabelSelectorOpIn, Values: []string{"prod", "staging"}}}}}},
		{name: "provider In", cluster: member, affinity: fields(req("provider", corev1.NodeSelectorOpIn, "aws", "gcp")), want: true},
		{name: "region NotIn", cluster: member, affinity: fields(req("region", corev1.NodeSelectorOpNotIn, "us-east-1")),
			wantReason: `region "us-east-1" does not match clusterAffinity.fieldSelector (region NotIn [us-east-1])`},
		{name: "zone In matches when any zone is listed", cluster: member, affinity: fields(req("zone", corev1.NodeSelectorOpIn, "use1-b")), want: true},
		{name: "zone NotIn rejects when any zone is listed", cluster: member, affinity: fields(req("zone", corev1.NodeSelectorOpNotIn, "use1-b")),
			wantReason: `zone ["use1-a" "use1-b"] does not match clusterAffinity.fieldSelector (zone NotIn [use1-b])`},
		{name: "the deprecated spec.zone still counts", cluster: legacyZone, affinity: fields(req("zone", corev1.NodeSelectorOpIn, "old-zone")), want: true},
		{name: "In on an unset field does not match", cluster: legacyZone, affinity: fields(req("region", corev1.NodeSelectorOpIn, "x")),
			wantReason: `region (unset) does not match clusterAffinity.fieldSelector (region In [x])`},
		{name: "NotIn on an unset field matches", cluster: legacyZone, affinity: fields(req("provider", corev1.NodeSelectorOpNotIn, "aws")), want: true},
		{name: "Exists and DoesNotExist", cluster: legacyZone, want: true,
			affinity: fields(req("zone", corev1.NodeSelectorOpExists), req("region", corev1.NodeSelectorOpDoesNotExist))},
		{name: "all requirements must hold", cluster: member,
			affinity:   fields(req("provider", corev1.NodeSelectorOpIn, "aws"), req("region", corev1.NodeSelectorOpIn, "eu")),
			wantReason: `region "us-east-1" does not match clusterAffinity.fieldSelector (region In [eu])`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := Compile("clusterAffinity", tt.affinity)
			if err != nil {
				t.Fatalf("Compile() error: %v", err)
			}
			got, reason := m.Match(tt.cluster), m.Reason(tt.cluster)
			if got != tt.want || reason != tt.wantReason {
				t.Errorf("Match() = %v, %q; want %v, %q", got, reason, tt.want, tt.wantReason)
			}
			if Matches(tt.cluster, tt.affinity) != tt.want {
				t.Errorf("Matches() disagrees with Match()")
			}
		})
	}
}

func TestCompileRejectsWhatKarmadaRejects(t *testing.T) {
	tests := []struct {
		name     string
		affinity *policyv1alpha1.ClusterAffinity
	}{
		{name: "field key other than provider, region, zone", affinity: fields(req("metadata.name", corev1.NodeSelectorOpIn, "a"))},
		{name: "numeric operators", affinity: fields(req("region", corev1.NodeSelectorOpGt, "1"))},
		{name: "invalid label selector", affinity: &policyv1alpha1.ClusterAffinity{LabelSelector: &metav1.LabelSelector{
			MatchExpressions: []metav1.LabelSelectorRequirement{{Key: "env", Operator: metav1.LabelSelectorOpIn}}}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Compile("clusterAffinity", tt.affinity); err == nil {
				t.Errorf("Compile() accepted %+v", tt.affinity)
			}
		})
	}
}
