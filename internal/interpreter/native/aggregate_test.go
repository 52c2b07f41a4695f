package native

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

// aggCase is one AggregateStatus scenario.
type aggCase struct {
	name     string
	template *unstructured.Unstructured
	items    []workv1alpha2.AggregatedStatusItem
	want     string // the result's .status as JSON; "" means no status
	same     bool   // the template itself must come back, unchanged
	wantErr  bool
}

// runAggregateCases checks the result's status, that the template is never mutated, that an
// unchanged status returns the template pointer, that the API server would accept the result
// as a status update of the template, and that aggregating again is a no-op.
func runAggregateCases(t *testing.T, cases []aggCase) {
	t.Helper()
	for _, tt := range cases {
		t.Run(tt.name, func(t *testing.T) {
			before := tt.template.DeepCopy()
			got, err := AggregateStatus(tt.template, tt.items)
			if (err != nil) != tt.wantErr {
				t.Fatalf("AggregateStatus() error = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(before, tt.template); diff != "" {
				t.Errorf("AggregateStatus() mutated the template (-before +after):\n%s", diff)
			}
			if tt.wantErr {
				return
			}
			if tt.same != (got == tt.template) {
				t.Errorf("AggregateStatus() returned the template itself = %v, want %v", got == tt.template, tt.same)
			}
			if diff := cmp.Diff(decodeJSON(t, []byte(tt.want)), statusJSON(t, got)); diff != "" {
				t.Errorf("AggregateStatus() status mismatch (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(before.Object["spec"], got.Object["spec"]); diff != "" {
				t.Errorf("AggregateStatus() changed the spec (-before +after):\n%s", diff)
			}
			if errs := statusUpdateErrors(t, tt.template, got); len(errs) > 0 {
				t.Errorf("the API server would reject the aggregated status: %v", errs.ToAggregate())
			}
			again, err := AggregateStatus(got, tt.items)
			if err != nil || again != got {
				t.Errorf("aggregating the result again is not a no-op (err %v, same pointer %v)", err, again == got)
			}
		})
	}
}

func statusJSON(t *testing.T, obj *unstructured.Unstructured) any {
	t.Helper()
	s, ok := obj.Object["status"]
	if !ok {
		return nil
	}
	raw, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSON(t, raw)
}

func TestAggregateStatusDeployment(t *testing.T) {
	// The template is at generation 3; its status was last computed for generation 2.
	template := func() *objBuilder {
		return deploy("web").generation(3).spec(`{"replicas":3}`).
			status(`{"observedGeneration":2,"replicas":3,"readyReplicas":3,"conditions":[{"type":"Available","status":"True"}]}`)
	}
	current := func(cluster string, n int, memberGen int) workv1alpha2.AggregatedStatusItem {
		return item(cluster, fmt.Sprintf(`{"replicas":%d,"readyReplicas":%d,"updatedReplicas":%d,"availableReplicas":%d,
			"generation":%d,"observedGeneration":%d,"resourceTemplateGeneration":3}`, n, n, n, n, memberGen, memberGen))
	}
	runAggregateCases(t, []aggCase{
		{
			name:     "every cluster runs the template's generation: counters summed, observedGeneration current",
			template: template().obj(),
			items:    []workv1alpha2.AggregatedStatusItem{current("a", 2, 7), current("b", 1, 1)},
			want: `{"observedGeneration":3,"replicas":3,"readyReplicas":3,"updatedReplicas":3,"availableReplicas":3,
				"conditions":[{"type":"Available","status":"True"}]}`,
		},
		{
			name:     "a cluster still runs an older template generation: observedGeneration kept",
			template: template().obj(),
			items: []workv1alpha2.AggregatedStatusItem{
				current("a", 2, 7),
				item("b", `{"replicas":1,"readyReplicas":1,"generation":4,"observedGeneration":4,"resourceTemplateGeneration":2}`),
			},
			want: `{"observedGeneration":2,"replicas":3,"readyReplicas":3,"updatedReplicas":2,"availableReplicas":2,
				"conditions":[{"type":"Available","status":"True"}]}`,
		},
		{
			name:     "a member controller has not observed its own generation: observedGeneration kept",
			template: template().obj(),
			items: []workv1alpha2.AggregatedStatusItem{
				current("a", 2, 7),
				item("b", `{"replicas":1,"readyReplicas":1,"updatedReplicas":1,"availableReplicas":1,
					"generation":5,"observedGeneration":4,"resourceTemplateGeneration":3}`),
			},
			want: `{"observedGeneration":2,"replicas":3,"readyReplicas":3,"updatedReplicas":3,"availableReplicas":3,
				"conditions":[{"type":"Available","status":"True"}]}`,
		},
		{
			name:     "a cluster not reported yet: observedGeneration kept, counters from the others",
			template: template().obj(),
			items:    []workv1alpha2.AggregatedStatusItem{current("a", 2, 7), item("b", "")},
			want: `{"observedGeneration":2,"replicas":2,"readyReplicas":2,"updatedReplicas":2,"availableReplicas":2,
				"conditions":[{"type":"Available","status":"True"}]}`,
		},
		{
			name: "nothing changed: the template itself comes back",
			template: deploy("web").generation(3).
				status(`{"observedGeneration":3,"replicas":3,"readyReplicas":3,"updatedReplicas":3,"availableReplicas":3}`).obj(),
			items: []workv1alpha2.AggregatedStatusItem{current("a", 2, 7), current("b", 1, 1)},
			want:  `{"observedGeneration":3,"replicas":3,"readyReplicas":3,"updatedReplicas":3,"availableReplicas":3}`,
			same:  true,
		},
		{
			name:     "counters falling to zero are dropped",
			template: deploy("web").generation(3).status(`{"observedGeneration":3,"replicas":3,"unavailableReplicas":3}`).obj(),
			items:    []workv1alpha2.AggregatedStatusItem{current("a", 0, 2)},
			want:     `{"observedGeneration":3}`,
		},
		{
			name:     "a template without status gets one",
			template: deploy("web").generation(1).obj(),
			items: []workv1alpha2.AggregatedStatusItem{item("a", `{"replicas":1,"unavailableReplicas":1,
				"generation":1,"observedGeneration":1,"resourceTemplateGeneration":1}`)},
			want: `{"observedGeneration":1,"replicas":1,"unavailableReplicas":1}`,
		},
		{
			name:     "no clusters: zero replicas, generation observed",
			template: template().obj(),
			want:     `{"observedGeneration":3,"conditions":[{"type":"Available","status":"True"}]}`,
		},
		{
			name:     "a status that is not JSON is an error",
			template: template().obj(),
			items:    []workv1alpha2.AggregatedStatusItem{item("a", `{"replicas":`)},
			wantErr:  true,
		},
		{
			name:     "a counter of the wrong type is an error",
			template: deploy("web").generation(1).obj(),
			items:    []workv1alpha2.AggregatedStatusItem{item("a", `{"replicas":"two","readyReplicas":1}`)},
			wantErr:  true,
		},
	})
}

func TestAggregateStatusOtherWorkloads(t *testing.T) {
	runAggregateCases(t, []aggCase{
		{
			name:     "StatefulSet: counters summed, generation observed",
			template: statefulSet("db").generation(2).obj(),
			items: []workv1alpha2.AggregatedStatusItem{
				item("a", `{"replicas":2,"readyReplicas":2,"currentReplicas":2,"updatedReplicas":2,"availableReplicas":2,
					"generation":3,"observedGeneration":3,"resourceTemplateGeneration":2}`),
				item("b", `{"replicas":1,"readyReplicas":0,"currentReplicas":1,"updatedReplicas":1,"availableReplicas":0,
					"generation":1,"observedGeneration":1,"resourceTemplateGeneration":2}`),
			},
			want: `{"observedGeneration":2,"replicas":3,"readyReplicas":2,"currentReplicas":3,"updatedReplicas":3,"availableReplicas":2}`,
		},
		{
			name:     "StatefulSet: a stale cluster keeps the previous observedGeneration",
			template: statefulSet("db").generation(2).status(`{"observedGeneration":1}`).obj(),
			items: []workv1alpha2.AggregatedStatusItem{
				item("a", `{"replicas":2,"generation":3,"observedGeneration":3,"resourceTemplateGeneration":1}`),
			},
			want: `{"observedGeneration":1,"replicas":2}`,
		},
		{
			name:     "ReplicaSet: counters summed, generation observed",
			template: replicaSet("rs").generation(1).obj(),
			items: []workv1alpha2.AggregatedStatusItem{
				item("a", `{"replicas":2,"fullyLabeledReplicas":2,"readyReplicas":2,"availableReplicas":1,"generation":1,"observedGeneration":1,"resourceTemplateGeneration":1}`),
				item("b", `{"replicas":2,"fullyLabeledReplicas":1,"readyReplicas":1,"availableReplicas":1,"generation":1,"observedGeneration":1,"resourceTemplateGeneration":1}`),
			},
			want: `{"observedGeneration":1,"replicas":4,"fullyLabeledReplicas":3,"readyReplicas":3,"availableReplicas":2}`,
		},
		{
			name:     "DaemonSet: all seven counters summed, generation observed",
			template: daemonSet("ds").generation(4).obj(),
			items: []workv1alpha2.AggregatedStatusItem{
				item("a", `{"currentNumberScheduled":3,"numberMisscheduled":1,"desiredNumberScheduled":3,"numberReady":3,
					"updatedNumberScheduled":3,"numberAvailable":3,"generation":2,"observedGeneration":2,"resourceTemplateGeneration":4}`),
				item("b", `{"currentNumberScheduled":2,"desiredNumberScheduled":2,"numberReady":1,
					"updatedNumberScheduled":2,"numberAvailable":1,"numberUnavailable":1,"generation":9,"observedGeneration":9,"resourceTemplateGeneration":4}`),
			},
			want: `{"observedGeneration":4,"currentNumberScheduled":5,"numberMisscheduled":1,"desiredNumberScheduled":5,"numberReady":4,
				"updatedNumberScheduled":5,"numberAvailable":4,"numberUnavailable":1}`,
		},
		{
			name:     "kinds without a rule come back as they are",
			template: newObj("example.io/v1", "Widget", "w").status(`{"ready":false}`).obj(),
			items:    []workv1alpha2.AggregatedStatusItem{item("a", `{"ready":true}`)},
			want:     `{"ready":false}`,
			same:     true,
		},
		{
			name:     "kinds without a rule come back as they are even with unreadable items",
			template: newObj("v1", "ConfigMap", "c").obj(),
			items:    []workv1alpha2.AggregatedStatusItem{item("a", `nope`)},
			same:     true,
		},
	})
}

// TestReflectThenAggregate runs member Deployments through ReflectStatus and feeds the result to
// AggregateStatus, as the work status and binding status controllers do in sequence.
func TestReflectThenAggregate(t *testing.T) {
	template := deploy("web").generation(6).spec(`{"replicas":5}`).obj()
	member := func(gen, observed int64, templateGen string, replicas int64) *unstructured.Unstructured {
		return deploy("web").generation(gen).annotate(ResourceTemplateGenerationAnnotation, templateGen).
			set(map[string]any{"observedGeneration": observed, "replicas": replicas, "readyReplicas": replicas,
				"updatedReplicas": replicas, "availableReplicas": replicas}, "status").obj()
	}
	reflect := func(cluster string, obj *unstructured.Unstructured) workv1alpha2.AggregatedStatusItem {
		raw, err := ReflectStatus(obj)
		if err != nil {
			t.Fatal(err)
		}
		return workv1alpha2.AggregatedStatusItem{ClusterName: cluster, Status: raw, Applied: true}
	}

	rolling := []workv1alpha2.AggregatedStatusItem{reflect("a", member(2, 2, "6", 3)), reflect("b", member(4, 3, "6", 2))}
	got, err := AggregateStatus(template, rolling)
	if err != nil {
		t.Fatal(err)
	}
	if g, _, _ := unstructured.NestedInt64(got.Object, "status", "observedGeneration"); g != 0 {
		t.Errorf("while cluster b rolls out, observedGeneration = %d, want 0 (not yet observed)", g)
	}

	done := []workv1alpha2.AggregatedStatusItem{reflect("a", member(2, 2, "6", 3)), reflect("b", member(4, 4, "6", 2))}
	got, err = AggregateStatus(got, done)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"observedGeneration": int64(6), "replicas": int64(5), "readyReplicas": int64(5),
		"updatedReplicas": int64(5), "availableReplicas": int64(5)}
	if diff := cmp.Diff(want, got.Object["status"]); diff != "" {
		t.Errorf("aggregated status mismatch (-want +got):\n%s", diff)
	}
}

// BenchmarkAggregateStatusDeployment10Clusters aggregates a Deployment spread over 10 member
// clusters, once when the status changes and once when it is already up to date.
func BenchmarkAggregateStatusDeployment10Clusters(b *testing.B) {
	items := make([]workv1alpha2.AggregatedStatusItem, 10)
	for i := range items {
		items[i] = item(fmt.Sprintf("member-%d", i), `{"replicas":3,"readyReplicas":3,"updatedReplicas":3,"availableReplicas":3,
			"observedGeneration":2,"generation":2,"resourceTemplateGeneration":4}`)
	}
	template := deploy("web").generation(4).spec(`{"replicas":30,"selector":{"matchLabels":{"app":"web"}},
		"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27",
		"ports":[{"containerPort":80}],"resources":{"requests":{"cpu":"100m","memory":"128Mi"}}}]}}}`).
		status(`{"observedGeneration":3,"replicas":27}`).obj()
	upToDate, err := AggregateStatus(template, items)
	if err != nil {
		b.Fatal(err)
	}

	b.Run("changed", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, err := AggregateStatus(template, items); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if got, err := AggregateStatus(upToDate, items); err != nil || got != upToDate {
				b.Fatal("expected a no-op", err)
			}
		}
	})
}

// cmpDiffStatus compares the statuses of two objects as JSON.
func cmpDiffStatus(t *testing.T, a, b *unstructured.Unstructured) string {
	t.Helper()
	return cmp.Diff(statusJSON(t, a), statusJSON(t, b))
}
