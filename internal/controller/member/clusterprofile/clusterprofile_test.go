package clusterprofile

import (
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	inventoryv1alpha1 "github.com/flotilla-io/flotilla/api/clusterinventory/v1alpha1"
)

func TestProfileFollowsTheCluster(t *testing.T) {
	r := &Reconciler{Namespace: "fleet", Server: "https://cp.example:6443/", CAData: []byte("ca")}
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "member1", UID: "u1"},
		Spec: clusterv1alpha1.ClusterSpec{Provider: "aws", Region: "eu-west-1", Zones: []string{"a", "b"}, SyncMode: clusterv1alpha1.Pull}}
	c.Status.KubernetesVersion = "v1.37.2"
	c.Status.Conditions = []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: "ClusterNotReachable", Message: "cluster is not reachable"}}
	p := r.Profile(c, &inventoryv1alpha1.ClusterProfile{})
	if p.Namespace != "fleet" || p.Name != "member1" || p.Labels[inventoryv1alpha1.LabelClusterManagerKey] != "flotilla" ||
		p.Spec.ClusterManager.Name != "flotilla" || p.Spec.DisplayName != "member1" {
		t.Errorf("identity: %+v %+v", p.ObjectMeta, p.Spec)
	}
	if len(p.OwnerReferences) != 1 || p.OwnerReferences[0].UID != "u1" || p.OwnerReferences[0].Kind != "Cluster" {
		t.Errorf("owner: %+v", p.OwnerReferences)
	}
	if p.Status.Version.Kubernetes != "v1.37.2" {
		t.Errorf("version %q", p.Status.Version.Kubernetes)
	}
	props := map[string]string{}
	for _, pr := range p.Status.Properties {
		props[pr.Name] = pr.Value
	}
	if props["provider"] != "aws" || props["region"] != "eu-west-1" || props["zones"] != "a,b" || props["syncMode"] != "Pull" {
		t.Errorf("properties %v", props)
	}
	var healthy, joined *metav1.Condition
	for i := range p.Status.Conditions {
		switch p.Status.Conditions[i].Type {
		case inventoryv1alpha1.ConditionControlPlaneHealthy:
			healthy = &p.Status.Conditions[i]
		case inventoryv1alpha1.ConditionJoined:
			joined = &p.Status.Conditions[i]
		}
	}
	if healthy == nil || healthy.Status != metav1.ConditionFalse || healthy.Reason != "ClusterNotReachable" || healthy.Message != "cluster is not reachable" {
		t.Errorf("ControlPlaneHealthy %+v", healthy)
	}
	if joined == nil || joined.Status != metav1.ConditionTrue {
		t.Errorf("Joined %+v", joined)
	}
	want := "https://cp.example:6443/apis/cluster.karmada.io/v1alpha1/clusters/member1/proxy"
	if len(p.Status.AccessProviders) != 1 || p.Status.AccessProviders[0].Name != "flotilla-proxy" || p.Status.AccessProviders[0].Cluster.Server != want ||
		string(p.Status.AccessProviders[0].Cluster.CertificateAuthorityData) != "ca" || len(p.Status.CredentialProviders) != 1 {
		t.Errorf("access providers %+v / %+v", p.Status.AccessProviders, p.Status.CredentialProviders)
	}
	// An unchanged property keeps when it was observed.
	p.Status.Properties[0].LastObservedTime = metav1.Unix(1000, 0)
	again := r.Profile(c, p)
	if !again.Status.Properties[0].LastObservedTime.Equal(&p.Status.Properties[0].LastObservedTime) {
		t.Errorf("an unchanged property was re-stamped: %v", again.Status.Properties[0].LastObservedTime)
	}
}
