package native

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
)

func TestReflectStatus(t *testing.T) {
	tests := []struct {
		name    string
		obj     *unstructured.Unstructured
		want    string // JSON; "" means no status reflected
		wantErr bool
	}{
		{
			name: "Deployment: counters, observedGeneration, member and template generations",
			obj: deploy("d").generation(5).annotate(ResourceTemplateGenerationAnnotation, "3").
				status(`{"observedGeneration":5,"replicas":3,"updatedReplicas":3,"readyReplicas":2,"availableReplicas":2,"unavailableReplicas":1,
					"conditions":[{"type":"Available","status":"True"}],"collisionCount":1}`).obj(),
			want: `{"observedGeneration":5,"replicas":3,"updatedReplicas":3,"readyReplicas":2,"availableReplicas":2,"unavailableReplicas":1,
				"generation":5,"resourceTemplateGeneration":3}`,
		},
		{
			name: "Deployment: zero counters and a missing annotation are omitted",
			obj:  deploy("d").generation(1).status(`{"observedGeneration":1,"replicas":0}`).obj(),
			want: `{"observedGeneration":1,"generation":1}`,
		},
		{
			name:    "Deployment: a malformed template generation annotation is an error",
			obj:     deploy("d").generation(1).annotate(ResourceTemplateGenerationAnnotation, "x").status(`{}`).obj(),
			wantErr: true,
		},
		{name: "Deployment without status reflects nothing", obj: deploy("d").generation(1).obj()},
		{
			name: "StatefulSet: its counters and generations",
			obj: statefulSet("s").generation(2).annotate(ResourceTemplateGenerationAnnotation, "2").
				status(`{"observedGeneration":2,"replicas":3,"readyReplicas":3,"currentReplicas":3,"updatedReplicas":3,"availableReplicas":3,"currentRevision":"r1"}`).obj(),
			want: `{"observedGeneration":2,"replicas":3,"readyReplicas":3,"currentReplicas":3,"updatedReplicas":3,"availableReplicas":3,
				"generation":2,"resourceTemplateGeneration":2}`,
		},
		{
			name: "ReplicaSet: its counters and generations",
			obj:  replicaSet("r").generation(1).status(`{"observedGeneration":1,"replicas":2,"fullyLabeledReplicas":2,"readyReplicas":1,"availableReplicas":1}`).obj(),
			want: `{"observedGeneration":1,"replicas":2,"fullyLabeledReplicas":2,"readyReplicas":1,"availableReplicas":1,"generation":1}`,
		},
		{
			name: "DaemonSet: its counters and generations",
			obj: daemonSet("ds").generation(4).annotate(ResourceTemplateGenerationAnnotation, "7").
				status(`{"observedGeneration":4,"currentNumberScheduled":3,"numberMisscheduled":1,"desiredNumberScheduled":3,"numberReady":2,
					"updatedNumberScheduled":3,"numberAvailable":2,"numberUnavailable":1}`).obj(),
			want: `{"observedGeneration":4,"currentNumberScheduled":3,"numberMisscheduled":1,"desiredNumberScheduled":3,"numberReady":2,
				"updatedNumberScheduled":3,"numberAvailable":2,"numberUnavailable":1,"generation":4,"resourceTemplateGeneration":7}`,
		},
		{
			name: "LoadBalancer Service: only the load balancer",
			obj: service("s").spec(`{"type":"LoadBalancer"}`).
				status(`{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]},"conditions":[{"type":"x","status":"True"}]}`).obj(),
			want: `{"loadBalancer":{"ingress":[{"ip":"1.2.3.4"}]}}`,
		},
		{name: "ClusterIP Service reflects nothing", obj: service("s").spec(`{"type":"ClusterIP"}`).status(`{"loadBalancer":{}}`).obj()},
		{
			name: "Job: counts, conditions and times",
			obj: job("j").status(`{"active":1,"succeeded":2,"failed":1,"ready":1,"startTime":"2026-01-01T00:00:00Z",
				"conditions":[{"type":"Complete","status":"False"}],"uncountedTerminatedPods":{}}`).obj(),
			want: `{"active":1,"succeeded":2,"failed":1,"startTime":"2026-01-01T00:00:00Z","conditions":[{"type":"Complete","status":"False"}]}`,
		},
		{
			name: "HorizontalPodAutoscaler: current and desired replicas",
			obj:  newObj("autoscaling/v2", "HorizontalPodAutoscaler", "h").status(`{"currentReplicas":2,"desiredReplicas":4,"currentMetrics":[]}`).obj(),
			want: `{"currentReplicas":2,"desiredReplicas":4}`,
		},
		{
			name: "PodDisruptionBudget: its counters",
			obj: newObj("policy/v1", "PodDisruptionBudget", "p").
				status(`{"disruptionsAllowed":1,"expectedPods":3,"desiredHealthy":2,"currentHealthy":3,"observedGeneration":1}`).obj(),
			want: `{"disruptionsAllowed":1,"expectedPods":3,"desiredHealthy":2,"currentHealthy":3}`,
		},
		{
			name: "Pod: the whole status",
			obj:  pod("p").status(`{"phase":"Running","podIP":"10.1.1.1","containerStatuses":[{"name":"c","ready":true}]}`).obj(),
			want: `{"phase":"Running","podIP":"10.1.1.1","containerStatuses":[{"name":"c","ready":true}]}`,
		},
		{
			name: "Ingress: the whole status",
			obj:  ingress("i").status(`{"loadBalancer":{"ingress":[{"hostname":"h"}]}}`).obj(),
			want: `{"loadBalancer":{"ingress":[{"hostname":"h"}]}}`,
		},
		{
			name: "custom kind: the whole status",
			obj:  newObj("example.io/v1", "Widget", "w").status(`{"ready":true,"nested":{"n":1}}`).obj(),
			want: `{"ready":true,"nested":{"n":1}}`,
		},
		{name: "kind without status reflects nothing", obj: newObj("v1", "ConfigMap", "c").obj()},
		{name: "non-object status is an error", obj: newObj("example.io/v1", "Widget", "w").set("ok", "status").obj(), wantErr: true},
		{name: "nil object reflects nothing", obj: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var before *unstructured.Unstructured
			if tt.obj != nil {
				before = tt.obj.DeepCopy()
			}
			got, err := ReflectStatus(tt.obj)
			if (err != nil) != tt.wantErr {
				t.Fatalf("ReflectStatus() error = %v, wantErr %v", err, tt.wantErr)
			}
			var raw []byte
			if got != nil {
				raw = got.Raw
			}
			if diff := cmp.Diff(decodeJSON(t, []byte(tt.want)), decodeJSON(t, raw)); diff != "" {
				t.Errorf("ReflectStatus() mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before, tt.obj); diff != "" {
				t.Errorf("ReflectStatus() mutated its input (-before +after):\n%s", diff)
			}
		})
	}
}
