package native

import (
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

func TestInterpretHealth(t *testing.T) {
	const (
		healthy   = workv1alpha1.ResourceHealthy
		unhealthy = workv1alpha1.ResourceUnhealthy
		unknown   = workv1alpha1.ResourceUnknown
	)
	tests := []struct {
		name string
		obj  *unstructured.Unstructured
		want workv1alpha1.ResourceHealth
	}{
		{
			name: "Deployment rolled out",
			obj:  deploy("d").generation(2).spec(`{"replicas":3}`).status(`{"observedGeneration":2,"updatedReplicas":3,"availableReplicas":3}`).obj(),
			want: healthy,
		},
		{
			name: "Deployment with a generation not yet observed",
			obj:  deploy("d").generation(3).spec(`{"replicas":3}`).status(`{"observedGeneration":2,"updatedReplicas":3,"availableReplicas":3}`).obj(),
			want: unhealthy,
		},
		{
			name: "Deployment still updating replicas",
			obj:  deploy("d").generation(2).spec(`{"replicas":3}`).status(`{"observedGeneration":2,"updatedReplicas":2,"availableReplicas":2}`).obj(),
			want: unhealthy,
		},
		{
			name: "Deployment with updated replicas not available",
			obj:  deploy("d").generation(2).spec(`{"replicas":3}`).status(`{"observedGeneration":2,"updatedReplicas":3,"availableReplicas":1}`).obj(),
			want: unhealthy,
		},
		{
			name: "Deployment scaled to zero",
			obj:  deploy("d").generation(4).spec(`{"replicas":0}`).status(`{"observedGeneration":4}`).obj(),
			want: healthy,
		},
		{
			name: "StatefulSet rolled out",
			obj:  statefulSet("s").generation(1).spec(`{"replicas":2}`).status(`{"observedGeneration":1,"updatedReplicas":2,"availableReplicas":2}`).obj(),
			want: healthy,
		},
		{
			name: "StatefulSet partitioned update done above the partition",
			obj: statefulSet("s").generation(1).spec(`{"replicas":4,"updateStrategy":{"type":"RollingUpdate","rollingUpdate":{"partition":3}}}`).
				status(`{"observedGeneration":1,"updatedReplicas":1,"availableReplicas":4}`).obj(),
			want: healthy,
		},
		{
			name: "StatefulSet with a pod not available",
			obj:  statefulSet("s").generation(1).spec(`{"replicas":2}`).status(`{"observedGeneration":1,"updatedReplicas":2,"availableReplicas":1}`).obj(),
			want: unhealthy,
		},
		{
			name: "ReplicaSet with all replicas available",
			obj:  replicaSet("r").generation(1).spec(`{"replicas":2}`).status(`{"observedGeneration":1,"availableReplicas":2}`).obj(),
			want: healthy,
		},
		{
			name: "ReplicaSet short of available replicas",
			obj:  replicaSet("r").generation(1).spec(`{"replicas":2}`).status(`{"observedGeneration":1,"availableReplicas":1}`).obj(),
			want: unhealthy,
		},
		{
			name: "DaemonSet rolled out",
			obj:  daemonSet("ds").generation(1).status(`{"observedGeneration":1,"desiredNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":3}`).obj(),
			want: healthy,
		},
		{
			name: "DaemonSet still updating",
			obj:  daemonSet("ds").generation(1).status(`{"observedGeneration":1,"desiredNumberScheduled":3,"updatedNumberScheduled":2,"numberAvailable":3}`).obj(),
			want: unhealthy,
		},
		{
			name: "DaemonSet with updated pods not available",
			obj:  daemonSet("ds").generation(1).status(`{"observedGeneration":1,"desiredNumberScheduled":3,"updatedNumberScheduled":3,"numberAvailable":2}`).obj(),
			want: unhealthy,
		},
		{name: "ClusterIP Service is healthy", obj: service("s").spec(`{"type":"ClusterIP"}`).obj(), want: healthy},
		{
			name: "LoadBalancer Service with an ingress IP",
			obj:  service("s").spec(`{"type":"LoadBalancer"}`).status(`{"loadBalancer":{"ingress":[{"ip":"10.0.0.1"}]}}`).obj(),
			want: healthy,
		},
		{
			name: "LoadBalancer Service without ingress",
			obj:  service("s").spec(`{"type":"LoadBalancer"}`).status(`{"loadBalancer":{}}`).obj(),
			want: unhealthy,
		},
		{
			name: "Ingress with a hostname",
			obj:  ingress("i").status(`{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"}]}}`).obj(),
			want: healthy,
		},
		{name: "Ingress without a load balancer", obj: ingress("i").obj(), want: unhealthy},
		{name: "PVC Bound", obj: pvc("c").status(`{"phase":"Bound"}`).obj(), want: healthy},
		{name: "PVC Pending", obj: pvc("c").status(`{"phase":"Pending"}`).obj(), want: unhealthy},
		{name: "Pod Succeeded", obj: pod("p").status(`{"phase":"Succeeded"}`).obj(), want: healthy},
		{
			name: "Pod Running and Ready",
			obj:  pod("p").status(`{"phase":"Running","conditions":[{"type":"Ready","status":"True"}]}`).obj(),
			want: healthy,
		},
		{
			name: "Pod Running but not Ready",
			obj:  pod("p").status(`{"phase":"Running","conditions":[{"type":"Ready","status":"False"}]}`).obj(),
			want: unhealthy,
		},
		{name: "Pod Pending", obj: pod("p").status(`{"phase":"Pending"}`).obj(), want: unhealthy},
		{name: "Pod Failed", obj: pod("p").status(`{"phase":"Failed"}`).obj(), want: unhealthy},
		{
			name: "PodDisruptionBudget satisfied",
			obj:  newObj("policy/v1", "PodDisruptionBudget", "pdb").status(`{"currentHealthy":3,"desiredHealthy":2}`).obj(),
			want: healthy,
		},
		{
			name: "PodDisruptionBudget violated",
			obj:  newObj("policy/v1", "PodDisruptionBudget", "pdb").status(`{"currentHealthy":1,"desiredHealthy":2}`).obj(),
			want: unhealthy,
		},
		{name: "ConfigMap has no rule and is healthy", obj: newObj("v1", "ConfigMap", "c").obj(), want: healthy},
		{name: "Job has no rule and is healthy", obj: job("j").status(`{"failed":3}`).obj(), want: healthy},
		{name: "custom kind has no rule and is healthy", obj: newObj("example.io/v1", "Widget", "w").obj(), want: healthy},
		{name: "malformed object cannot be judged", obj: deploy("d").status(`{"updatedReplicas":"many"}`).obj(), want: unknown},
		{name: "nil object cannot be judged", obj: nil, want: unknown},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := InterpretHealth(tt.obj); got != tt.want {
				t.Errorf("InterpretHealth() = %q, want %q", got, tt.want)
			}
		})
	}
}
