package dashboard

import (
	"math"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
)

func TestQuantileInterpolatesWithinTheBucket(t *testing.T) {
	h := histogram{Bounds: []float64{0.01, 0.1, 1, math.Inf(1)}, Buckets: []float64{50, 90, 100, 100}, Count: 100}
	for _, tc := range []struct{ q, want float64 }{{0.5, 0.01}, {0.25, 0.005}, {0.7, 0.055}, {0.99, 0.91}} {
		if got := h.quantile(tc.q); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("q%.2f = %v, want %v", tc.q, got, tc.want)
		}
	}
	if !math.IsNaN((histogram{}).quantile(0.5)) {
		t.Error("an empty histogram's quantile is not NaN")
	}
	all := histogram{Bounds: []float64{1, math.Inf(1)}, Buckets: []float64{0, 10}, Count: 10}
	if got := all.quantile(0.5); got != 1 {
		t.Errorf("every observation past the last bound: %v, want the last finite bound 1", got)
	}
}

func TestDeltaCountsFromZeroAfterAReset(t *testing.T) {
	prev := histogram{Bounds: []float64{1}, Buckets: []float64{10}, Count: 10}
	cur := histogram{Bounds: []float64{1}, Buckets: []float64{15}, Count: 15}
	if d := cur.delta(prev); d.Count != 5 || d.Buckets[0] != 5 {
		t.Errorf("delta %+v", d)
	}
	restarted := histogram{Bounds: []float64{1}, Buckets: []float64{2}, Count: 2}
	if d := restarted.delta(prev); d.Count != 2 {
		t.Errorf("after a restart: %+v, want the new counts", d)
	}
}

func TestParseScrapeSumsLabelSetsAndReadsQueues(t *testing.T) {
	text := `# TYPE binding_sync_work_duration_seconds histogram
binding_sync_work_duration_seconds_bucket{result="success",le="0.01"} 3
binding_sync_work_duration_seconds_bucket{result="success",le="+Inf"} 4
binding_sync_work_duration_seconds_sum{result="success"} 0.1
binding_sync_work_duration_seconds_count{result="success"} 4
binding_sync_work_duration_seconds_bucket{result="error",le="0.01"} 1
binding_sync_work_duration_seconds_bucket{result="error",le="+Inf"} 1
binding_sync_work_duration_seconds_sum{result="error"} 0.001
binding_sync_work_duration_seconds_count{result="error"} 1
# TYPE workqueue_depth gauge
workqueue_depth{controller="x",name="detector"} 7
`
	sc, err := parseScrape(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	h := sc.Hist["binding_sync_work_duration_seconds"]
	if h.Count != 5 || h.Buckets[0] != 4 || h.Buckets[1] != 5 {
		t.Errorf("histogram %+v", h)
	}
	if sc.Queues["detector"] != 7 {
		t.Errorf("queues %v", sc.Queues)
	}
	if _, err := parseScrape(strings.NewReader("not { metrics")); err == nil {
		t.Error("garbage parsed")
	}
}

func TestCellsSayWhatEachClusterReported(t *testing.T) {
	spec := &workv1alpha2.ResourceBindingSpec{Replicas: 3, Clusters: []workv1alpha2.TargetCluster{{Name: "a", Replicas: 2}, {Name: "b", Replicas: 1}, {Name: "c"}}}
	status := &workv1alpha2.ResourceBindingStatus{AggregatedStatus: []workv1alpha2.AggregatedStatusItem{
		{ClusterName: "a", Applied: true, Health: workv1alpha2.ResourceHealthy},
		{ClusterName: "b", Applied: false, AppliedMessage: "conflict"},
	}}
	cells, health := cells([]string{"a", "b", "c", "d"}, spec, status)
	if cells[0].Class != "ok" || cells[0].Replicas != "2" || cells[1].Class != "bad" || !strings.Contains(cells[1].Hint, "conflict") ||
		cells[2].Class != "pending" || cells[3].Placed {
		t.Errorf("cells %+v", cells)
	}
	if health != "Unhealthy" {
		t.Errorf("overall health %q, want the worst: Unhealthy", health)
	}
}

func TestCardPutsTroubleFirstAndSaysWhy(t *testing.T) {
	c := &clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: "m1"},
		Spec: clusterv1alpha1.ClusterSpec{SyncMode: clusterv1alpha1.Push, Taints: []corev1.Taint{
			{Key: clusterv1alpha1.TaintClusterUnschedulable, Effect: corev1.TaintEffectNoSchedule}}},
		Status: clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse, Reason: "ClusterNotReachable"}},
			ResourceSummary: &clusterv1alpha1.ResourceSummary{
				Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("8")},
				Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2")}}}}
	cc := card(c)
	if !cc.Cordoned || len(cc.Trouble) != 2 || !strings.Contains(cc.Trouble[0], "ClusterNotReachable") {
		t.Errorf("card %+v", cc)
	}
	if len(cc.Resources) != 1 || cc.Resources[0].Percent != 25 || cc.Resources[0].Free != "6.0" {
		t.Errorf("resources %+v", cc.Resources)
	}
}

func TestSafeNextStaysOnTheSite(t *testing.T) {
	for in, want := range map[string]string{"/workloads?x=1": "/workloads?x=1", "//evil.example": "/fleet", "https://evil.example": "/fleet", "": "/fleet", "/\\evil": "/fleet"} {
		if got := safeNext(in); got != want {
			t.Errorf("safeNext(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHubCoalescesAndFiltersTopics(t *testing.T) {
	h := newHub()
	s := h.subscribe([]string{"clusters"})
	h.publish("clusters")
	h.publish("clusters")
	h.publish("works")
	select {
	case <-s.wake:
	case <-time.After(time.Second):
		t.Fatal("no wake-up")
	}
	if got := s.take(); len(got) != 1 || got[0] != "clusters" {
		t.Errorf("took %v", got)
	}
	h.unsubscribe(s)
	h.publish("clusters")
	if got := s.take(); len(got) != 0 {
		t.Errorf("after unsubscribing: %v", got)
	}
}

func TestTemplatesParse(t *testing.T) {
	if _, err := parseTemplates(); err != nil {
		t.Fatal(err)
	}
}

func TestOptionsValidateSaysWhatToFix(t *testing.T) {
	o := Options{SecurePort: 0, MetricsURLs: []string{"nourl"}, SessionTTL: time.Hour, ScrapeInterval: time.Second}
	err := o.Validate()
	for _, want := range []string{"--tls-cert-file", "--secure-port", "name=http"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Validate() = %v, want it to mention %s", err, want)
		}
	}
}
