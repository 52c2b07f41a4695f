package native

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

type items = []workv1alpha2.AggregatedStatusItem

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
			name:     "active jobs sorted by name and UID, whatever the order of the clusters' reports",
			template: cronJob("c").obj(),
			items: items{
				item("b", `{"active":[{"kind":"Job","name":"c-2","uid":"u-b2"},{"kind":"Job","name":"c-1","uid":"u-b1"}]}`),
				item("a", `{"active":[{"kind":"Job","name":"c-2","uid":"u-a2"}]}`),
			},
			want: `{"active":[{"kind":"Job","name":"c-1","uid":"u-b1"},{"kind":"Job","name":"c-2","uid":"u-a2"},{"kind":"Job","name":"c-2","uid":"u-b2"}]}`,
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
	lb := func() *objBuilder {
		return service("s").spec(`{"type":"LoadBalancer","ports":[{"port":80,"protocol":"TCP"}]}`)
	}
	runAggregateCases(t, []aggCase{
		{
			name:     "LoadBalancer on member1 and member2: both IPs, sorted, no hostname added",
			template: lb().obj(),
			items: items{
				item("member1", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}`),
				item("member2", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"},{"ip":"192.0.2.20"}]}}`,
		},
		{
			name:     "LoadBalancer: the same IP reported by both members is listed once",
			template: lb().obj(),
			items: items{
				item("member1", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}`),
				item("member2", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}`,
		},
		{
			name:     "LoadBalancer: hostnames and IPs of all clusters, sorted by IP then hostname, clusters not reported skipped",
			template: lb().obj(),
			items: items{
				item("a", `{"loadBalancer":{"ingress":[{"ip":"198.51.100.1"}]}}`),
				item("b", `{"loadBalancer":{"ingress":[{"hostname":"lb.example.com"},{"ip":"192.0.2.7"}]}}`),
				item("c", `{"loadBalancer":{}}`),
				item("d", ""),
				item("e", `{"loadBalancer":{"ingress":[{"hostname":"a.example.com"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"hostname":"a.example.com"},{"hostname":"lb.example.com"},
				{"ip":"192.0.2.7"},{"ip":"198.51.100.1"}]}}`,
		},
		{
			name:     "LoadBalancer: the same IP with different ports or IP modes are different points",
			template: lb().obj(),
			items: items{
				item("a", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1","ipMode":"VIP","ports":[{"port":443,"protocol":"TCP"}]}]}}`),
				item("b", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1","ipMode":"VIP","ports":[{"port":80,"protocol":"TCP"}]},{"ip":"192.0.2.1","ipMode":"Proxy"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1","ipMode":"Proxy"},
				{"ip":"192.0.2.1","ipMode":"VIP","ports":[{"port":80,"protocol":"TCP"}]},
				{"ip":"192.0.2.1","ipMode":"VIP","ports":[{"port":443,"protocol":"TCP"}]}]}}`,
		},
		{
			name:     "LoadBalancer: the cluster-name hostnames an older aggregation wrote are replaced",
			template: lb().status(`{"loadBalancer":{"ingress":[{"ip":"192.0.2.20","hostname":"member1"},{"ip":"192.0.2.10","hostname":"member2"}]}}`).obj(),
			items: items{
				item("member1", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}`),
				item("member2", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"},{"ip":"192.0.2.20"}]}}`,
		},
		{
			name:     "LoadBalancer: unchanged, the template itself",
			template: lb().status(`{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"},{"ip":"192.0.2.20"}]}}`).obj(),
			items: items{
				item("member2", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}`),
				item("member1", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"},{"ip":"192.0.2.20"}]}}`,
			same: true,
		},
		{
			name:     "ClusterIP Service: left alone",
			template: service("s").spec(`{"type":"ClusterIP"}`).obj(),
			items:    items{item("a", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1"}]}}`)},
			same:     true,
		},
		{
			name:     "Ingress: distinct ingress points of every cluster, sorted, as reported",
			template: ingress("i").obj(),
			items: items{
				item("a", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.1","ports":[{"port":443,"protocol":"TCP"}]}]}}`),
				item("b", `{"loadBalancer":{"ingress":[{"hostname":"b.example.com"},{"ip":"192.0.2.1","ports":[{"port":443,"protocol":"TCP"}]}]}}`),
			},
			want: `{"loadBalancer":{"ingress":[{"hostname":"b.example.com"},{"ip":"192.0.2.1","ports":[{"port":443,"protocol":"TCP"}]}]}}`,
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
	// restartPolicy Never: a terminated container may not be reported running again.
	never := func() *objBuilder {
		return pod("p").spec(`{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}`)
	}
	running := `{"phase":"Running","qosClass":"BestEffort","containerStatuses":[{"name":"c","ready":true,"state":{"running":{"startedAt":"2026-03-01T10:00:00Z"}}}]}`
	done := `{"phase":"Succeeded","containerStatuses":[{"name":"c","ready":false,"state":{"terminated":{"exitCode":0,"startedAt":null,"finishedAt":null}}}]}`
	// aggregated container statuses, as the typed status serialises them
	runningCS := `{"name":"","ready":true,"restartCount":0,"image":"","imageID":"","state":{"running":{"startedAt":"2026-03-01T10:00:00Z"}},"lastState":{}}`
	doneCS := `{"name":"","ready":false,"restartCount":0,"image":"","imageID":"","state":{"terminated":{"exitCode":0,"startedAt":null,"finishedAt":null}},"lastState":{}}`
	runAggregateCases(t, []aggCase{
		{
			name:     "Running everywhere: Running, container readiness and state kept, names dropped",
			template: never().obj(),
			items:    items{item("a", running), item("b", running)},
			want:     `{"phase":"Running","containerStatuses":[` + runningCS + `,` + runningCS + `]}`,
		},
		{
			name:     "container statuses in cluster order, each cluster's by container name",
			template: never().obj(),
			items: items{
				item("b", running),
				item("a", `{"phase":"Running","containerStatuses":[{"name":"z","ready":false,"state":{"waiting":{"reason":"PodInitializing"}}},
					{"name":"c","ready":true,"state":{"running":{"startedAt":"2026-03-01T10:00:00Z"}}}]}`),
			},
			want: `{"phase":"Running","containerStatuses":[` + runningCS + `,
				{"name":"","ready":false,"restartCount":0,"image":"","imageID":"","state":{"waiting":{"reason":"PodInitializing"}},"lastState":{}},` + runningCS + `]}`,
		},
		{
			name:     "a container terminated in one cluster: only terminated container statuses are listed",
			template: never().obj(),
			items:    items{item("a", running), item("b", done)},
			want:     `{"phase":"Running","containerStatuses":[` + doneCS + `]}`,
		},
		{
			name:     "once the template shows a terminated container, containers still running are left out",
			template: never().status(`{"phase":"Running","containerStatuses":[` + doneCS + `]}`).obj(),
			items:    items{item("a", running), item("b", done)},
			want:     `{"phase":"Running","containerStatuses":[` + doneCS + `]}`,
			same:     true,
		},
		{
			name:     "a list an older aggregation wrote with a terminated container next to a running one is cut to the terminated one",
			template: never().status(`{"phase":"Running","containerStatuses":[` + runningCS + `,` + doneCS + `]}`).obj(),
			items:    items{item("a", running), item("b", done)},
			want:     `{"phase":"Running","containerStatuses":[` + doneCS + `]}`,
		},
		{
			name:     "qosClass, set by the API server at creation and immutable, is kept",
			template: never().status(`{"phase":"Pending","qosClass":"BestEffort"}`).obj(),
			items:    items{item("a", `{"phase":"Running","qosClass":"Burstable"}`)},
			want:     `{"phase":"Running","qosClass":"BestEffort"}`,
		},
		{
			name:     "Failed anywhere wins",
			template: never().obj(),
			items:    items{item("a", `{"phase":"Pending"}`), item("b", `{"phase":"Failed"}`), item("c", `{"phase":"Running"}`)},
			want:     `{"phase":"Failed"}`,
		},
		{
			name:     "Pending anywhere beats Running",
			template: never().obj(),
			items:    items{item("a", `{"phase":"Running"}`), item("b", `{"phase":"Pending"}`)},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "a cluster not reported yet counts as Pending",
			template: never().obj(),
			items:    items{item("a", `{"phase":"Succeeded"}`), item("b", "")},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "Running beats Succeeded",
			template: never().obj(),
			items:    items{item("a", `{"phase":"Succeeded"}`), item("b", `{"phase":"Running"}`)},
			want:     `{"phase":"Running"}`,
		},
		{
			name:     "Succeeded everywhere",
			template: never().status(`{"phase":"Running"}`).obj(),
			items:    items{item("a", `{"phase":"Succeeded"}`)},
			want:     `{"phase":"Succeeded"}`,
		},
		{
			name:     "no clusters: left alone",
			template: never().status(`{"phase":"Running"}`).obj(),
			want:     `{"phase":"Running"}`,
			same:     true,
		},
	})
}

func TestAggregateStatusVolumes(t *testing.T) {
	claim := func() *objBuilder {
		return pvc("c").spec(`{"accessModes":["ReadWriteOnce"],"resources":{"requests":{"storage":"1Gi"}}}`)
	}
	pv := func() *objBuilder {
		return newObj("v1", "PersistentVolume", "pv").namespace("").
			spec(`{"accessModes":["ReadWriteOnce"],"capacity":{"storage":"1Gi"},"hostPath":{"path":"/data"}}`)
	}
	runAggregateCases(t, []aggCase{
		{
			name:     "PVC bound everywhere: Bound, other fields dropped",
			template: claim().obj(),
			items:    items{item("a", `{"phase":"Bound","capacity":{"storage":"1Gi"}}`), item("b", `{"phase":"Bound"}`)},
			want:     `{"phase":"Bound"}`,
		},
		{
			name:     "PVC pending in one cluster: Pending",
			template: claim().status(`{"phase":"Bound"}`).obj(),
			items:    items{item("a", `{"phase":"Bound"}`), item("b", `{"phase":"Pending"}`)},
			want:     `{"phase":"Pending"}`,
		},
		{
			name:     "PVC lost in one cluster: Lost, whatever the clusters after it",
			template: claim().obj(),
			items:    items{item("a", `{"phase":"Pending"}`), item("b", `{"phase":"Lost"}`), item("c", `{"phase":"Pending"}`)},
			want:     `{"phase":"Lost"}`,
		},
		{
			name:     "PVC in a cluster not reported yet: skipped, as Karmada does",
			template: claim().obj(),
			items:    items{item("a", `{"phase":"Bound"}`), item("b", "")},
			want:     `{"phase":"Bound"}`,
		},
		{
			name:     "PVC unchanged: the template itself",
			template: claim().status(`{"phase":"Bound"}`).obj(),
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

func TestAggregateStatusHorizontalPodAutoscaler(t *testing.T) {
	hpa := func() *objBuilder {
		return newObj("autoscaling/v2", "HorizontalPodAutoscaler", "web").
			spec(`{"scaleTargetRef":{"apiVersion":"apps/v1","kind":"Deployment","name":"web"},"minReplicas":1,"maxReplicas":10}`)
	}
	runAggregateCases(t, []aggCase{
		{
			name:     "currentReplicas and desiredReplicas summed over the clusters",
			template: hpa().obj(),
			items: items{
				item("a", `{"currentReplicas":2,"desiredReplicas":3}`),
				item("b", `{"currentReplicas":1,"desiredReplicas":1}`),
				item("c", ""),
			},
			want: `{"currentReplicas":3,"desiredReplicas":4}`,
		},
		{
			name:     "other status fields of the template are kept",
			template: hpa().status(`{"desiredReplicas":1,"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-03-01T10:00:00Z"}]}`).obj(),
			items:    items{item("a", `{"currentReplicas":2,"desiredReplicas":2}`)},
			want:     `{"currentReplicas":2,"desiredReplicas":2,"conditions":[{"type":"AbleToScale","status":"True","lastTransitionTime":"2026-03-01T10:00:00Z"}]}`,
		},
		{
			name:     "desiredReplicas is written even when it falls to zero",
			template: hpa().status(`{"currentReplicas":2,"desiredReplicas":2}`).obj(),
			items:    items{item("a", `{"currentReplicas":0,"desiredReplicas":0}`)},
			want:     `{"desiredReplicas":0}`,
		},
		{
			name:     "unchanged: the template itself",
			template: hpa().status(`{"currentReplicas":2,"desiredReplicas":2}`).obj(),
			items:    items{item("a", `{"currentReplicas":2,"desiredReplicas":2}`)},
			want:     `{"currentReplicas":2,"desiredReplicas":2}`,
			same:     true,
		},
		{
			name:     "a malformed member status is an error",
			template: hpa().obj(),
			items:    items{item("a", `{"currentReplicas":"two"}`)},
			wantErr:  true,
		},
	})
}

// TestAggregateStatusPodOverTime feeds each aggregated Pod status back as the template's and
// checks that the API server accepts every write.
func TestAggregateStatusPodOverTime(t *testing.T) {
	running := func(ready bool) string {
		return fmt.Sprintf(`{"phase":"Running","containerStatuses":[{"name":"c","ready":%t,"state":{"running":{}}}]}`, ready)
	}
	done := `{"phase":"Succeeded","containerStatuses":[{"name":"c","ready":false,"state":{"terminated":{"exitCode":0}}}]}`
	tests := []struct {
		name  string
		spec  string
		steps []items
		want  string
	}{
		{
			name: "restartPolicy Never: one cluster finishes while the other runs and keeps changing, then finishes",
			spec: `{"restartPolicy":"Never","containers":[{"name":"c","image":"busybox"}]}`,
			steps: []items{
				{item("member1", running(true)), item("member2", running(false))},
				{item("member1", done), item("member2", running(false))},
				{item("member1", done), item("member2", running(true))},
				{item("member1", done), item("member2", done)},
			},
			want: `{"phase":"Succeeded","containerStatuses":[
				{"name":"","ready":false,"restartCount":0,"image":"","imageID":"","state":{"terminated":{"exitCode":0,"startedAt":null,"finishedAt":null}},"lastState":{}},
				{"name":"","ready":false,"restartCount":0,"image":"","imageID":"","state":{"terminated":{"exitCode":0,"startedAt":null,"finishedAt":null}},"lastState":{}}]}`,
		},
		{
			name: "restartPolicy Always: a container seen terminated restarts; the list empties once, then shows it running",
			spec: `{"restartPolicy":"Always","containers":[{"name":"c","image":"busybox"}]}`,
			steps: []items{
				{item("member1", running(true))},
				{item("member1", `{"phase":"Running","containerStatuses":[{"name":"c","ready":false,"state":{"terminated":{"exitCode":1}}}]}`)},
				{item("member1", running(true))},
				{item("member1", running(true))},
			},
			want: `{"phase":"Running","containerStatuses":[
				{"name":"","ready":true,"restartCount":0,"image":"","imageID":"","state":{"running":{"startedAt":null}},"lastState":{}}]}`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			template := pod("p").spec(tt.spec).obj()
			template = aggregateSteps(t, template, tt.steps)
			if diff := cmp.Diff(decodeJSON(t, []byte(tt.want)), statusJSON(t, template)); diff != "" {
				t.Errorf("final status mismatch (-want +got):\n%s", diff)
			}
		})
	}
}

// TestAggregateStatusOrderOfItems checks that the order in which the clusters' reports arrive
// does not change the result of any kind that merges lists from several clusters.
func TestAggregateStatusOrderOfItems(t *testing.T) {
	tests := []struct {
		name     string
		template *objBuilder
		items    items
	}{
		{
			name:     "LoadBalancer Service ingress",
			template: service("s").spec(`{"type":"LoadBalancer"}`),
			items: items{
				item("member1", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.20"},{"hostname":"x.example.com"}]}}`),
				item("member2", `{"loadBalancer":{"ingress":[{"ip":"192.0.2.10"}]}}`),
			},
		},
		{
			name:     "Pod container statuses",
			template: pod("p"),
			items: items{
				item("member1", `{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}},{"name":"b","ready":false,"state":{"waiting":{}}}]}`),
				item("member2", `{"phase":"Running","containerStatuses":[{"name":"a","ready":false,"state":{"terminated":{"exitCode":1}}}]}`),
				item("member3", `{"phase":"Running","containerStatuses":[{"name":"a","ready":true,"state":{"running":{}}}]}`),
			},
		},
		{
			name:     "CronJob active Jobs",
			template: cronJob("c"),
			items: items{
				item("member1", `{"active":[{"name":"c-2"},{"name":"c-1"}]}`),
				item("member2", `{"active":[{"name":"c-1","uid":"x"}]}`),
			},
		},
		{
			name:     "Job failure message",
			template: job("j"),
			items: items{
				item("member2", memberJob(0, 0, 1, "10:00", "Failed 10:01")),
				item("member1", memberJob(0, 0, 1, "10:00", "Failed 10:02")),
			},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want, err := AggregateStatus(tt.template.obj(), tt.items)
			if err != nil {
				t.Fatal(err)
			}
			reversed := make(items, len(tt.items))
			for i, it := range tt.items {
				reversed[len(tt.items)-1-i] = it
			}
			got, err := AggregateStatus(tt.template.obj(), reversed)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmpDiffStatus(t, want, got); diff != "" {
				t.Errorf("status depends on the order of the reports (-in order +reversed):\n%s", diff)
			}
		})
	}
}
