package scheduler

import (
	"strconv"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// deployment is the resource most tests schedule.
var deployment = workv1alpha2.ObjectReference{APIVersion: "apps/v1", Kind: "Deployment", Namespace: "default", Name: "nginx"}

// clusterBuilder builds a member cluster that, unless told otherwise, is Ready and serves
// apps/v1 Deployment and v1 ConfigMap, with no resource summary (unlimited capacity).
type clusterBuilder struct{ c *clusterv1alpha1.Cluster }

func cluster(name string) *clusterBuilder {
	return &clusterBuilder{c: &clusterv1alpha1.Cluster{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec:       clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push},
		Status: clusterv1alpha1.ClusterStatus{
			Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
			APIEnablements: []clusterv1alpha1.APIEnablement{
				{GroupVersion: "apps/v1", Resources: []clusterv1alpha1.APIResource{{Name: "deployments", Kind: "Deployment"}}},
				{GroupVersion: "v1", Resources: []clusterv1alpha1.APIResource{{Name: "configmaps", Kind: "ConfigMap"}}},
			},
		},
	}}
}

func (b *clusterBuilder) labels(kv ...string) *clusterBuilder {
	if b.c.Labels == nil {
		b.c.Labels = map[string]string{}
	}
	for i := 0; i+1 < len(kv); i += 2 {
		b.c.Labels[kv[i]] = kv[i+1]
	}
	return b
}

func (b *clusterBuilder) notReady() *clusterBuilder {
	b.c.Status.Conditions[0].Status = metav1.ConditionFalse
	return b
}

func (b *clusterBuilder) apis(enablements ...clusterv1alpha1.APIEnablement) *clusterBuilder {
	b.c.Status.APIEnablements = enablements
	return b
}

func (b *clusterBuilder) region(r string) *clusterBuilder   { b.c.Spec.Region = r; return b }
func (b *clusterBuilder) provider(p string) *clusterBuilder { b.c.Spec.Provider = p; return b }
func (b *clusterBuilder) zones(z ...string) *clusterBuilder { b.c.Spec.Zones = z; return b }

func (b *clusterBuilder) taint(key, value string, effect corev1.TaintEffect) *clusterBuilder {
	b.c.Spec.Taints = append(b.c.Spec.Taints, corev1.Taint{Key: key, Value: value, Effect: effect})
	return b
}

// pods gives the cluster room for exactly n more pods (and so n replicas without requests).
func (b *clusterBuilder) pods(n int) *clusterBuilder {
	b.c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{
		Allocatable: corev1.ResourceList{corev1.ResourcePods: resource.MustParse(strconv.Itoa(n))},
	}
	return b
}

// resources sets the resource summary: allocatable and allocated as resource lists.
func (b *clusterBuilder) resources(allocatable, allocated corev1.ResourceList) *clusterBuilder {
	b.c.Status.ResourceSummary = &clusterv1alpha1.ResourceSummary{Allocatable: allocatable, Allocated: allocated}
	return b
}

func (b *clusterBuilder) build() *clusterv1alpha1.Cluster { return b.c }

func clusters(bs ...*clusterBuilder) []*clusterv1alpha1.Cluster {
	out := make([]*clusterv1alpha1.Cluster, len(bs))
	for i, b := range bs {
		out[i] = b.build()
	}
	return out
}

func resources(kv ...string) corev1.ResourceList {
	list := corev1.ResourceList{}
	for i := 0; i+1 < len(kv); i += 2 {
		list[corev1.ResourceName(kv[i])] = resource.MustParse(kv[i+1])
	}
	return list
}

// targets builds an expected result from name/replicas pairs.
func targets(pairs ...any) []workv1alpha2.TargetCluster {
	out := []workv1alpha2.TargetCluster{}
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, workv1alpha2.TargetCluster{Name: pairs[i].(string), Replicas: int32(pairs[i+1].(int))})
	}
	return out
}

func names(n ...string) *policyv1alpha1.ClusterAffinity {
	return &policyv1alpha1.ClusterAffinity{ClusterNames: n}
}

func duplicatedScheduling() *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{ReplicaSchedulingType: policyv1alpha1.ReplicaSchedulingTypeDuplicated}
}

func divided(pref policyv1alpha1.ReplicaDivisionPreference) *policyv1alpha1.ReplicaSchedulingStrategy {
	return &policyv1alpha1.ReplicaSchedulingStrategy{
		ReplicaSchedulingType:     policyv1alpha1.ReplicaSchedulingTypeDivided,
		ReplicaDivisionPreference: pref,
	}
}

func staticWeights(entries ...policyv1alpha1.StaticClusterWeight) *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
	rs.WeightPreference = &policyv1alpha1.ClusterPreferences{StaticWeightList: entries}
	return rs
}

func weight(w int64, names ...string) policyv1alpha1.StaticClusterWeight {
	return policyv1alpha1.StaticClusterWeight{TargetCluster: policyv1alpha1.ClusterAffinity{ClusterNames: names}, Weight: w}
}

func dynamicWeights() *policyv1alpha1.ReplicaSchedulingStrategy {
	rs := divided(policyv1alpha1.ReplicaDivisionPreferenceWeighted)
	rs.WeightPreference = &policyv1alpha1.ClusterPreferences{DynamicWeight: policyv1alpha1.DynamicWeightByAvailableReplicas}
	return rs
}

func spreadBy(field policyv1alpha1.SpreadFieldValue, minGroups, maxGroups int) policyv1alpha1.SpreadConstraint {
	return policyv1alpha1.SpreadConstraint{SpreadByField: field, MinGroups: minGroups, MaxGroups: maxGroups}
}
