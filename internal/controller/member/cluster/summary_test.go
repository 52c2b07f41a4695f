package cluster

import (
	"context"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes/fake"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/member/registry"
)

// The resource summary counts bound pods as allocated and pods waiting for a node as
// allocating, as Karmada's does, so the scheduler's estimate does not count a pending
// replica's request as free.
func TestSummary(t *testing.T) {
	cpu := func(q string) corev1.ResourceList {
		return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
	}
	pod := func(name, node string, containers, inits corev1.ResourceList) *corev1.Pod {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: "default"}, Spec: corev1.PodSpec{NodeName: node,
			Containers: []corev1.Container{{Name: "app", Resources: corev1.ResourceRequirements{Requests: containers}}}}}
		if inits != nil {
			p.Spec.InitContainers = []corev1.Container{{Name: "init", Resources: corev1.ResourceRequirements{Requests: inits}}}
		}
		return p
	}
	node := &corev1.Node{ObjectMeta: metav1.ObjectMeta{Name: "n1"}, Status: corev1.NodeStatus{
		Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8"), corev1.ResourcePods: resource.MustParse("110")},
		Conditions:  []corev1.NodeCondition{{Type: corev1.NodeReady, Status: corev1.ConditionTrue}}}}
	kube := fake.NewClientset(node, pod("running", "n1", cpu("2"), nil), pod("pending", "", cpu("3"), cpu("4")))
	status := &clusterv1alpha1.ClusterStatus{}
	m := &registry.Member{Name: "member1", Kube: kube}
	if err := summarize(context.Background(), m, clusterv1alpha1.DefaultResourceModels(), status); err != nil {
		t.Fatal(err)
	}
	got := status.ResourceSummary
	for _, c := range []struct {
		what string
		list corev1.ResourceList
		name corev1.ResourceName
		want string
	}{
		{"allocatable cpu", got.Allocatable, corev1.ResourceCPU, "8"},
		{"allocated cpu", got.Allocated, corev1.ResourceCPU, "2"},
		{"allocated pods", got.Allocated, corev1.ResourcePods, "1"},
		{"allocating cpu (the init container's 4 outweighs the app's 3)", got.Allocating, corev1.ResourceCPU, "4"},
		{"allocating pods", got.Allocating, corev1.ResourcePods, "1"},
	} {
		q := c.list[c.name]
		if q.Cmp(resource.MustParse(c.want)) != 0 {
			t.Errorf("%s = %s, want %s", c.what, q.String(), c.want)
		}
	}

	// n1 has 8 - 2 = 6 CPU free and no memory: grade 0 (memory decides).
	if m := got.AllocatableModelings; len(m) != 9 || m[0].Count != 1 {
		t.Errorf("allocatableModelings = %v, want n1 counted in grade 0 of 9", m)
	}

	// The summary follows the member: a second node and the pending pod bound to it.
	big := node.DeepCopy()
	big.Name = "n2"
	big.Status.Allocatable[corev1.ResourceMemory] = resource.MustParse("64Gi")
	if _, err := kube.CoreV1().Nodes().Create(context.Background(), big, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	bound := pod("pending", "n2", cpu("3"), cpu("4"))
	if _, err := kube.CoreV1().Pods("default").Update(context.Background(), bound, metav1.UpdateOptions{}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		status = &clusterv1alpha1.ClusterStatus{}
		if err := summarize(context.Background(), m, clusterv1alpha1.DefaultResourceModels(), status); err != nil {
			t.Fatal(err)
		}
		s := status.ResourceSummary
		cpuAllocated := s.Allocated[corev1.ResourceCPU]
		if status.NodeSummary.ReadyNum == 2 && cpuAllocated.Cmp(resource.MustParse("6")) == 0 && s.Allocating.Pods().IsZero() &&
			s.AllocatableModelings[3].Count == 1 { // n2: 8 - 4 = 4 CPU, 64Gi: grade 3
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the summary does not follow the member: nodes %+v, resources %+v", status.NodeSummary, s)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
