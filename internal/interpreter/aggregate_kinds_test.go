package interpreter

import (
	"testing"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

type items = []workv1alpha2.AggregatedStatusItem

func TestAggregateStatusJob(t *testing.T) {
	running := `{"active":2,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`
	runAggregateCases(t, []aggCase{
		{
			name:     "running everywhere: counts summed, earliest start, no conditions",
			template: job("j").obj(),
			items:    items{item("a", running), item("b", `{"active":1,"failed":1,"startTime":"2026-03-01T09:00:00Z"}`)},
			want:     `{"active":3,"succeeded":1,"failed":1,"startTime":"2026-03-01T09:00:00Z"}`,
		},
		{
			name:     "complete everywhere: Complete condition and the latest completion time",
			template: job("j").status(running).obj(),
			items: items{
				item("a", `{"succeeded":3,"startTime":"2026-03-01T10:00:00Z","completionTime":"2026-03-01T10:05:00Z",
					"conditions":[{"type":"Complete","status":"True","lastTransitionTime":"2026-03-01T10:05:00Z"}]}`),
				item("b", `{"succeeded":2,"startTime":"2026-03-01T10:01:00Z","completionTime":"2026-03-01T10:07:00Z",
					"conditions":[{"type":"Complete","status":"True","lastTransitionTime":"2026-03-01T10:07:00Z"}]}`),
			},
			want: `{"succeeded":5,"startTime":"2026-03-01T10:00:00Z","completionTime":"2026-03-01T10:07:00Z",
				"conditions":[{"type":"SuccessCriteriaMet","status":"True","reason":"Completed","message":"Job completed",
					"lastProbeTime":"2026-03-01T10:07:00Z","lastTransitionTime":"2026-03-01T10:07:00Z"},
					{"type":"Complete","status":"True","reason":"Completed","message":"Job completed",
					"lastProbeTime":"2026-03-01T10:07:00Z","lastTransitionTime":"2026-03-01T10:07:00Z"}]}`,
		},
		{
			name:     "complete in one cluster only: no Complete condition, no completion time",
			template: job("j").obj(),
			items: items{
				item("a", `{"succeeded":3,"completionTime":"2026-03-01T10:05:00Z","conditions":[{"type":"Complete","status":"True"}]}`),
				item("b", `{"active":1}`),
			},
			want: `{"active":1,"succeeded":3}`,
		},
		{
			name:     "failed in some clusters: Failed condition naming them",
			template: job("j").obj(),
			items: items{
				item("a", `{"failed":6,"conditions":[{"type":"Failed","status":"True","lastTransitionTime":"2026-03-01T11:00:00Z"}]}`),
				item("b", `{"active":1}`),
				item("c", `{"failed":6,"conditions":[{"type":"Failed","status":"True","lastTransitionTime":"2026-03-01T11:30:00Z"}]}`),
			},
			want: `{"active":1,"failed":12,"conditions":[{"type":"FailureTarget","status":"True","reason":"JobFailed",
				"message":"Job executed failed in member clusters a,c",
				"lastProbeTime":"2026-03-01T11:30:00Z","lastTransitionTime":"2026-03-01T11:30:00Z"},
				{"type":"Failed","status":"True","reason":"JobFailed",
				"message":"Job executed failed in member clusters a,c",
				"lastProbeTime":"2026-03-01T11:30:00Z","lastTransitionTime":"2026-03-01T11:30:00Z"}]}`,
		},
		{
			name:     "a finished template is final",
			template: job("j").status(`{"succeeded":5,"conditions":[{"type":"Complete","status":"True"}]}`).obj(),
			items:    items{item("a", `{"active":1}`)},
			want:     `{"succeeded":5,"conditions":[{"type":"Complete","status":"True"}]}`,
			same:     true,
		},
		{
			name:     "no clusters: left alone rather than declared complete",
			template: job("j").status(`{"active":1}`).obj(),
			want:     `{"active":1}`,
			same:     true,
		},
		{
			name:     "a cluster not reported yet keeps the Job incomplete",
			template: job("j").obj(),
			items: items{
				item("a", `{"succeeded":1,"completionTime":"2026-03-01T10:05:00Z","conditions":[{"type":"Complete","status":"True"}]}`),
				item("b", ""),
			},
			want: `{"succeeded":1}`,
		},
		{
			name:     "unchanged status: the template itself",
			template: job("j").status(`{"active":3,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`).obj(),
			items:    items{item("a", running), item("b", `{"active":1}`)},
			want:     `{"active":3,"succeeded":1,"startTime":"2026-03-01T10:00:00Z"}`,
			same:     true,
		},
		{name: "a malformed member status is an error", template: job("j").obj(), items: items{item("a", `{"active":"x"}`)}, wantErr: true},
	})
}

func TestAggregateStatusCronJob(t *testing.T) {
	runAggregateCases(t, []aggCase{
		{
			name:     "active jobs of all clusters, latest schedule and success",
			template: cronJob("c").obj(),
			items: items{
				item("a", `{"active":[{"kind":"Job","name":"c-1"}],"lastScheduleTime":"2026-03-01T10:00:00Z","lastSuccessfulTime":"2026-03-01T09:00:00Z"}`),
				item("b", `{"active":[{"kind":"Job","name":"c-2"}],"lastScheduleTime":"2026-03-01T11:00:00Z"}`),
				item("c", ""),
			},
			want: `{"active":[{"kind":"Job","name":"c-1"},{"kind":"Job","name":"c-2"}],
				"lastScheduleTime":"2026-03-01T11:00:00Z","lastSuccessfulTime":"2026-03-01T09:00:00Z"}`,
		},
		{
			name:     "unchanged: the template itself",
			template: cronJob("c").status(`{"lastScheduleTime":"2026-03-01T10:00:00Z"}`).obj(),
			items:    items{item("a", `{"lastScheduleTime":"2026-03-01T10:00:00Z"}`)},
			want:     `{"lastScheduleTime":"2026-03-01T10:00:00Z"}`,
			same:     true,
		},
	})
}

func TestAggregateStatusServiceAndIngress(t *testing.T) {
	lb := func() *objBuilder { return service("s").spec(`{"type":"LoadBalancer"}`) }
	runAggregateCases(t, []aggCase{
		{
			name:     "LoadBalancer: union of ingress points, hostname defaulted to the cluster",
			template: lb().obj(),
			items: items{
				item("a", `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1"}]}}`),
				item("b", `{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"},{"ip":"2.2.2.2"}]}}`),
				item("c", `{"loadBalancer":{}}`),
				item("d", ""),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1","hostname":"a"},{"hostname":"lb.example.com"},{"ip":"2.2.2.2","hostname":"b"}]}}`,
		},
		{
			name:     "LoadBalancer: identical points are listed once",
			template: lb().obj(),
			items: items{
				item("a", `{"loadBalancer":{"ingress":[{"hostname":"global.example.com"}]}}`),
				item("b", `{"loadBalancer":{"ingress":[{"hostname":"global.example.com"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"hostname":"global.example.com"}]}}`,
		},
		{
			name:     "LoadBalancer: unchanged, the template itself",
			template: lb().status(`{"loadBalancer":{"ingress":[{"ip":"1.1.1.1","hostname":"a"}]}}`).obj(),
			items:    items{item("a", `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1"}]}}`)},
			want:     `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1","hostname":"a"}]}}`,
			same:     true,
		},
		{
			name:     "ClusterIP Service: left alone",
			template: service("s").spec(`{"type":"ClusterIP"}`).obj(),
			items:    items{item("a", `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1"}]}}`)},
			same:     true,
		},
		{
			name:     "Ingress: union of ingress points, hostname defaulted to the cluster",
			template: ingress("i").obj(),
			items: items{
				item("a", `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1","ports":[{"port":443,"protocol":"TCP"}]}]}}`),
				item("b", `{"loadBalancer":{"ingress":[{"hostname":"b.example.com"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"1.1.1.1","hostname":"a","ports":[{"port":443,"protocol":"TCP"}]},{"hostname":"b.example.com"}]}}`,
		},
		{
			name:     "Ingress: a malformed member status is an error",
			template: ingress("i").obj(),
			items:    items{item("a", `{"loadBalancer":{"ingress":"x"}}`)},
			wantErr:  true,
		},
	})
}

func TestAggregateStatusPod(t *testing.T) {
	running := `{"phase":"Running","containerStatuses":[{"name":"c","ready":true,"state":{"running":{"startedAt":"2026-03-01T10:00:00Z"}}}]}`
	runAggregateCases(t, []aggCase{
		{
			name:     "Running everywhere: Running, container readiness and state kept, names dropped",
			template: pod("p").obj(),
			items:    items{item("a", running), item("b", running)},
			want: `{"phase":"Running","containerStatuses":[
				{"name":"","ready":true,"restartCount":0,"image":"","imageID":"","state":{"running":{"startedAt":"2026-03-01T10:00:00Z"}},"lastState":{}},
				{"name":"","ready":true,"restartCount":0,"image":"","imageID":"","state":{"running":{"startedAt":"2026-03-01T10:00:00Z"}},"lastState":{}}]}`,
		},
		{
			name:     "Failed anywhere wins",
			template: pod("p").obj(),
			items:    items{item("a", `{"phase":"Pending"}`), item("b", `{"phase":"Failed"}`), item("c", `{"phase":"Running"}`)},
			want:     `{"phase":"Failed"}`,
		},
		{
			name:     "Pending anywhere beats Running",
			template: pod("p").obj(),
			items:    items{item("a", `{"phase":"Running"}`), item("b", `{"phase":"Pending"}`)},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "a cluster not reported yet counts as Pending",
			template: pod("p").obj(),
			items:    items{item("a", `{"phase":"Succeeded"}`), item("b", "")},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "Running beats Succeeded",
			template: pod("p").obj(),
			items:    items{item("a", `{"phase":"Succeeded"}`), item("b", `{"phase":"Running"}`)},
			want:     `{"phase":"Running"}`,
		},
		{
			name:     "Succeeded everywhere",
			template: pod("p").status(`{"phase":"Running"}`).obj(),
			items:    items{item("a", `{"phase":"Succeeded"}`)},
			want:     `{"phase":"Succeeded"}`,
		},
		{
			name:     "no clusters: left alone",
			template: pod("p").status(`{"phase":"Running"}`).obj(),
			want:     `{"phase":"Running"}`,
			same:     true,
		},
	})
}

func TestAggregateStatusVolumes(t *testing.T) {
	pv := func() *objBuilder { return newObj("v1", "PersistentVolume", "pv").namespace("") }
	runAggregateCases(t, []aggCase{
		{
			name:     "PVC bound everywhere: Bound, other fields dropped",
			template: pvc("c").obj(),
			items:    items{item("a", `{"phase":"Bound","capacity":{"storage":"1Gi"}}`), item("b", `{"phase":"Bound"}`)},
			want:     `{"phase":"Bound"}`,
		},
		{
			name:     "PVC pending in one cluster: Pending",
			template: pvc("c").status(`{"phase":"Bound"}`).obj(),
			items:    items{item("a", `{"phase":"Bound"}`), item("b", `{"phase":"Pending"}`)},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "PVC lost in one cluster: Lost, whatever the others",
			template: pvc("c").obj(),
			items:    items{item("a", `{"phase":"Pending"}`), item("b", `{"phase":"Lost"}`), item("c", `{"phase":"Pending"}`)},
			want:     `{"phase":"Lost"}`,
		},
		{
			name:     "PVC in a cluster not reported yet: Pending",
			template: pvc("c").obj(),
			items:    items{item("a", `{"phase":"Bound"}`), item("b", "")},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "PVC unchanged: the template itself",
			template: pvc("c").status(`{"phase":"Bound"}`).obj(),
			items:    items{item("a", `{"phase":"Bound"}`)},
			want:     `{"phase":"Bound"}`,
			same:     true,
		},
		{
			name:     "PV: Failed beats Pending beats Available beats Bound beats Released",
			template: pv().obj(),
			items:    items{item("a", `{"phase":"Bound"}`), item("b", `{"phase":"Available"}`), item("c", `{"phase":"Released"}`)},
			want:     `{"phase":"Available"}`,
		},
		{
			name:     "PV not reported yet: Pending",
			template: pv().obj(),
			items:    items{item("a", `{"phase":"Bound"}`), item("b", "")},
			want:     `{"phase":"Pending"}`,
		},
	})
}

func TestAggregateStatusPodDisruptionBudget(t *testing.T) {
	runAggregateCases(t, []aggCase{
		{
			name:     "counters summed, disrupted pods keyed by cluster",
			template: newObj("policy/v1", "PodDisruptionBudget", "pdb").obj(),
			items: items{
				item("a", `{"currentHealthy":3,"desiredHealthy":2,"expectedPods":3,"disruptionsAllowed":1,
					"disruptedPods":{"web-1":"2026-03-01T10:00:00Z"}}`),
				item("b", `{"currentHealthy":2,"desiredHealthy":2,"expectedPods":2,"disruptionsAllowed":0}`),
			},
			want: `{"currentHealthy":5,"desiredHealthy":4,"expectedPods":5,"disruptionsAllowed":1,
				"disruptedPods":{"a/web-1":"2026-03-01T10:00:00Z"}}`,
		},
	})
}
