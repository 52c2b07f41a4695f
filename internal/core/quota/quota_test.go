package quota

import (
	"testing"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func cpu(q string) corev1.ResourceList {
	return corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(q)}
}

func rb(name string, request string, clusters ...workv1alpha2.TargetCluster) workv1alpha2.ResourceBinding {
	return workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: workv1alpha2.ResourceBindingSpec{ReplicaRequirements: &workv1alpha2.ReplicaRequirements{ResourceRequest: cpu(request)}, Clusters: clusters}}
}

func TestUsage(t *testing.T) {
	b := rb("web", "500m", workv1alpha2.TargetCluster{Name: "member1", Replicas: 2}, workv1alpha2.TargetCluster{Name: "member2", Replicas: 1})
	if got := Usage(&b.Spec, b.Spec.Clusters)[corev1.ResourceCPU]; got.String() != "1500m" {
		t.Errorf("3 replicas of 500m use %s CPU, want 1500m", got.String())
	}
	if got := Usage(&b.Spec, nil); len(got) != 0 {
		t.Errorf("no clusters use %v, want nothing", got)
	}
	// Components: one full set per cluster.
	c := workv1alpha2.ResourceBindingSpec{Components: []workv1alpha2.Component{
		{Name: "leader", Replicas: 1, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpu("4")}},
		{Name: "worker", Replicas: 4, ReplicaRequirements: &workv1alpha2.ComponentReplicaRequirements{ResourceRequest: cpu("2")}},
	}}
	if got := Usage(&c, []workv1alpha2.TargetCluster{{Name: "member1"}})[corev1.ResourceCPU]; got.String() != "12" {
		t.Errorf("a 4+4×2 CPU set uses %s CPU, want 12", got.String())
	}
}

func TestNamespaceAndExceeded(t *testing.T) {
	overall := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}
	bindings := []workv1alpha2.ResourceBinding{rb("a", "1", workv1alpha2.TargetCluster{Name: "m1", Replicas: 1})}
	used := Namespace(overall, bindings, map[string]corev1.ResourceList{"b": cpu("1500m")})
	if got := used[corev1.ResourceCPU]; got.String() != "2500m" {
		t.Errorf("used %s CPU, want a's 1 and b's decided 1500m", got.String())
	}
	if got := Exceeded(overall, used); len(got) != 1 || got[0] != "cpu: 2500m requested, 2 allowed" {
		t.Errorf("Exceeded() = %v", got)
	}
	if !Grows(overall, cpu("1"), cpu("2")) || Grows(overall, cpu("2"), cpu("1")) {
		t.Error("Grows() is wrong")
	}
	if got := Sum(overall, corev1.ResourceList{corev1.ResourceMemory: resource.MustParse("1Gi")}); len(got) != 1 || !got.Cpu().IsZero() {
		t.Errorf("a resource overall does not name counts, and one nothing uses is zero: %v", got)
	}
	// ResourceQuota's names: requests.cpu is cpu, requests.example.com/gpu is example.com/gpu.
	prefixed := corev1.ResourceList{"requests.cpu": resource.MustParse("1"), "requests.example.com/gpu": resource.MustParse("1"), corev1.ResourceCPU: resource.MustParse("1")}
	gpu := workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Name: "gpu"}}
	used = Namespace(prefixed, []workv1alpha2.ResourceBinding{gpu}, map[string]corev1.ResourceList{
		"gpu": {"example.com/gpu": resource.MustParse("2")}, "web": cpu("1500m")})
	if got := used["requests.cpu"]; got.String() != "1500m" {
		t.Errorf("requests.cpu used %s, want the cpu requests, 1500m", got.String())
	}
	if got := used[corev1.ResourceCPU]; got.String() != "1500m" {
		t.Errorf("cpu used %s beside requests.cpu, want 1500m", got.String())
	}
	if got := Exceeded(prefixed, used); len(got) != 3 {
		t.Errorf("Exceeded() = %v, want cpu, requests.cpu and requests.example.com/gpu", got)
	}
}
