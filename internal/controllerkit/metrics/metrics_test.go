package metrics

import (
	"errors"
	"maps"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	dto "github.com/prometheus/client_model/go"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	ctrlmetrics "sigs.k8s.io/controller-runtime/pkg/metrics"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
)

// series returns the metrics c holds, keyed by their label pairs.
func series(t *testing.T, c prometheus.Collector) map[string]*dto.Metric {
	t.Helper()
	ch := make(chan prometheus.Metric, 1000)
	c.Collect(ch)
	close(ch)
	out := map[string]*dto.Metric{}
	for m := range ch {
		d := &dto.Metric{}
		if err := m.Write(d); err != nil {
			t.Fatal(err)
		}
		key := ""
		for _, l := range d.GetLabel() {
			key += l.GetName() + "=" + l.GetValue() + ","
		}
		out[key] = d
	}
	return out
}

// value is the value of c's series with exactly labels (name=value,
// sorted by name, each followed by a comma): a counter's or gauge's value,
// a histogram's count of observations; -1 when there is no such series.
func value(t *testing.T, c prometheus.Collector, labels string) float64 {
	t.Helper()
	m, ok := series(t, c)[labels]
	switch {
	case !ok:
		return -1
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Histogram != nil:
		return float64(m.GetHistogram().GetSampleCount())
	}
	t.Fatalf("unexpected metric type: %v", m)
	return 0
}

// delta runs record and returns by how much c's series with labels grew.
func delta(t *testing.T, c prometheus.Collector, labels string, record func()) float64 {
	t.Helper()
	before := max(value(t, c, labels), 0)
	record()
	return value(t, c, labels) - before
}

var errBoom = errors.New("boom")

func TestRecordClusterStatusFollowsTheClusterAndForgetClusterDropsIt(t *testing.T) {
	const name = "gauges-member"
	labels := "cluster_name=" + name + ",member_cluster=" + name + ","
	status := &clusterv1alpha1.ClusterStatus{
		Conditions:  []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}},
		NodeSummary: &clusterv1alpha1.NodeSummary{TotalNum: 3, ReadyNum: 2},
		ResourceSummary: &clusterv1alpha1.ResourceSummary{
			Allocatable: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("24"), corev1.ResourceMemory: resource.MustParse("96Gi"), corev1.ResourcePods: resource.MustParse("330")},
			Allocated:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("1500m"), corev1.ResourceMemory: resource.MustParse("512Mi"), corev1.ResourcePods: resource.MustParse("7")},
		},
	}
	RecordClusterStatus(name, status)
	got := map[string]float64{}
	for metric, c := range map[string]prometheus.Collector{
		"cluster_ready_state": clusterReady, "cluster_node_number": clusterNodes, "cluster_ready_node_number": clusterReadyNodes,
		"cluster_cpu_allocatable_number": clusterCPUAllocatable, "cluster_memory_allocatable_bytes": clusterMemoryAllocatable, "cluster_pod_allocatable_number": clusterPodAllocatable,
		"cluster_cpu_allocated_number": clusterCPUAllocated, "cluster_memory_allocated_bytes": clusterMemoryAllocated, "cluster_pod_allocated_number": clusterPodAllocated,
	} {
		got[metric] = value(t, c, labels)
	}
	want := map[string]float64{
		"cluster_ready_state": 1, "cluster_node_number": 3, "cluster_ready_node_number": 2,
		"cluster_cpu_allocatable_number": 24, "cluster_memory_allocatable_bytes": 96 << 30, "cluster_pod_allocatable_number": 330,
		"cluster_cpu_allocated_number": 1.5, "cluster_memory_allocated_bytes": 512 << 20, "cluster_pod_allocated_number": 7,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gauges of a Ready cluster (-want +got):\n%s", diff)
	}

	// Not Ready any more, and a status without summaries: the gauges keep
	// their last values, as in Karmada.
	RecordClusterStatus(name, &clusterv1alpha1.ClusterStatus{Conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse}}})
	if v := value(t, clusterReady, labels); v != 0 {
		t.Errorf("cluster_ready_state of a cluster not Ready = %v, want 0", v)
	}
	if v := value(t, clusterNodes, labels); v != 3 {
		t.Errorf("cluster_node_number without a node summary = %v, want the last value 3", v)
	}

	if d := delta(t, clusterSyncStatus, labels, func() { ObserveClusterSyncStatus(name, 30*time.Millisecond) }); d != 1 {
		t.Errorf("cluster_sync_status_duration_seconds observations grew by %v, want 1", d)
	}

	ForgetCluster(name)
	for _, c := range clusterCollectors() {
		if _, ok := series(t, c)[labels]; ok {
			t.Errorf("%v still has a series of the deleted cluster", c)
		}
	}
}

func TestPropagationRecordsCountByResult(t *testing.T) {
	ok, failed := "result=success,", "result=error,"
	for _, tc := range []struct {
		name      string
		collector prometheus.Collector
		record    func(error)
	}{
		{"resource_apply_policy_duration_seconds", applyPolicy, func(err error) { ObserveApplyPolicy(err, time.Millisecond) }},
		{"policy_apply_attempts_total", policyApplyAttempts, func(err error) { ObserveApplyPolicy(err, time.Millisecond) }},
		{"binding_sync_work_duration_seconds", bindingSyncWork, func(err error) { ObserveBindingSyncWork(err, time.Millisecond) }},
		{"work_sync_workload_duration_seconds", workSyncWorkload, func(err error) { ObserveWorkSyncWorkload(err, time.Millisecond) }},
		{"policy_preemption_total", policyPreemption, CountPolicyPreemption},
		{"cronfederatedhpa_process_duration_seconds", cronProcess, func(err error) { ObserveCronFederatedHPAProcess(err, time.Millisecond) }},
		{"cronfederatedhpa_rule_process_duration_seconds", cronRule, func(err error) { ObserveCronFederatedHPARule(err, time.Millisecond) }},
		{"federatedhpa_process_duration_seconds", federatedHPAProcess, func(err error) { ObserveFederatedHPAProcess(err, time.Millisecond) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if n := testutil.CollectAndCount(tc.collector, tc.name); n != 2 {
				t.Errorf("%s has %d series before any record, want 2 (success and error, at zero)", tc.name, n)
			}
			if d := delta(t, tc.collector, ok, func() { tc.record(nil) }); d != 1 {
				t.Errorf("a success grew {%s} by %v, want 1", ok, d)
			}
			if d := delta(t, tc.collector, failed, func() { tc.record(errBoom) }); d != 1 {
				t.Errorf("an error grew {%s} by %v, want 1", failed, d)
			}
		})
	}
}

func TestMatchPolicyHasNoLabels(t *testing.T) {
	if d := delta(t, matchPolicy, "", func() { ObserveMatchPolicy(2 * time.Millisecond) }); d != 1 {
		t.Errorf("resource_match_policy_duration_seconds observations grew by %v, want 1", d)
	}
}

func TestDurationsLandInKarmadasBuckets(t *testing.T) {
	ObserveBindingSyncWork(nil, 3*time.Millisecond)
	h := series(t, bindingSyncWork)["result=success,"].GetHistogram()
	var bounds []float64
	for _, b := range h.GetBucket() {
		bounds = append(bounds, b.GetUpperBound())
	}
	if want := prometheus.ExponentialBuckets(0.001, 2, 12); !slices.Equal(bounds, want) {
		t.Errorf("binding_sync_work_duration_seconds buckets = %v, want %v (1 ms doubling, 12)", bounds, want)
	}
	if got := len(series(t, federatedHPAProcess)["result=success,"].GetHistogram().GetBucket()); got != 12 {
		t.Errorf("federatedhpa_process_duration_seconds has %d buckets, want 12 from 10 ms", got)
	}
	if got := series(t, e2eScheduling)["result=scheduled,scheduleType=FirstSchedule,schedule_type=FirstSchedule,"].GetHistogram().GetBucket(); len(got) != 15 || got[0].GetUpperBound() != 0.001 {
		t.Errorf("karmada_scheduler_e2e_scheduling_duration_seconds buckets = %v, want 15 from 1 ms", got)
	}
}

func TestFederatedHPAPullMetricsByMetricType(t *testing.T) {
	for _, mt := range []string{MetricTypeResource, MetricTypeRaw, MetricTypeObject, MetricTypeExternal} {
		if d := delta(t, federatedHPAPull, "metricType="+mt+",result=error,", func() { ObserveFederatedHPAPullMetrics(mt, errBoom, time.Second) }); d != 1 {
			t.Errorf("a failed %s pull grew its series by %v, want 1", mt, d)
		}
	}
	before := series(t, federatedHPAPull)
	ObserveFederatedHPAPullMetrics("PodsMetric", nil, time.Second)
	if after := series(t, federatedHPAPull); len(after) != len(before) || len(after) != 8 {
		t.Errorf("an unknown metricType made a series: %d series, want 8", len(after))
	}
}

func TestSchedulerAttemptsCarryResultAndScheduleType(t *testing.T) {
	for _, tc := range []struct {
		kind   ScheduleType
		err    error
		labels string
	}{
		{FirstSchedule, nil, "result=scheduled,scheduleType=FirstSchedule,schedule_type=FirstSchedule,"},
		{ScaleSchedule, nil, "result=scheduled,scheduleType=ScaleSchedule,schedule_type=ScaleSchedule,"},
		{ReconcileSchedule, errBoom, "result=error,scheduleType=ReconcileSchedule,schedule_type=ReconcileSchedule,"},
	} {
		count := delta(t, scheduleAttempts, tc.labels, func() {
			if d := delta(t, e2eScheduling, tc.labels, func() { ObserveScheduleAttempt(tc.kind, tc.err, 5*time.Millisecond) }); d != 1 {
				t.Errorf("karmada_scheduler_e2e_scheduling_duration_seconds{%s} grew by %v, want 1", tc.labels, d)
			}
		})
		if count != 1 {
			t.Errorf("karmada_scheduler_schedule_attempts_total{%s} grew by %v, want 1", tc.labels, count)
		}
	}
	if got := testutil.CollectAndCount(scheduleAttempts); got != 6 {
		t.Errorf("karmada_scheduler_schedule_attempts_total has %d series, want 6 (2 results x 3 schedule types)", got)
	}
}

func TestSchedulerStepsAndQueueEvents(t *testing.T) {
	for _, step := range []string{StepFilter, StepSelect, StepAssignReplicas} {
		if d := delta(t, schedulingAlgorithm, "scheduleStep="+step+",schedule_step="+step+",", func() { ObserveScheduleStep(step, time.Millisecond) }); d != 1 {
			t.Errorf("scheduling_algorithm_duration_seconds{%s} grew by %v, want 1", step, d)
		}
	}
	ObserveScheduleStep("Score", time.Millisecond)
	if got := testutil.CollectAndCount(schedulingAlgorithm); got != 3 {
		t.Errorf("an unknown step made a series: %d series, want 3", got)
	}
	if d := delta(t, queueIncoming, "event=ClusterNotReady,", func() { CountIncomingBindings(EventClusterNotReady, 4) }); d != 4 {
		t.Errorf("queue_incoming_bindings_total{event=ClusterNotReady} grew by %v, want 4", d)
	}
	if d := delta(t, queueIncoming, "event=BindingAdd,", func() { CountIncomingBindings(EventBindingAdd, 1) }); d != 1 {
		t.Errorf("queue_incoming_bindings_total{event=BindingAdd} grew by %v, want 1", d)
	}
}

// names lists the metric names a registry with cs serves.
func names(t *testing.T, cs []prometheus.Collector) []string {
	t.Helper()
	r := prometheus.NewPedanticRegistry()
	register(r, cs...)
	register(r, cs...) // idempotent
	families, err := r.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, f := range families {
		out = append(out, f.GetName())
	}
	return out
}

func TestEachComponentServesKarmadasSet(t *testing.T) {
	cluster := []string{"cluster_cpu_allocatable_number", "cluster_cpu_allocated_number", "cluster_memory_allocatable_bytes", "cluster_memory_allocated_bytes",
		"cluster_node_number", "cluster_pod_allocatable_number", "cluster_pod_allocated_number", "cluster_ready_node_number", "cluster_ready_state", "cluster_sync_status_duration_seconds"}
	// Series of a cluster exist once it reports; the set names the rest.
	RecordClusterStatus("set-member", &clusterv1alpha1.ClusterStatus{NodeSummary: &clusterv1alpha1.NodeSummary{}, ResourceSummary: &clusterv1alpha1.ResourceSummary{
		Allocatable: corev1.ResourceList{}, Allocated: corev1.ResourceList{}}})
	ObserveClusterSyncStatus("set-member", time.Millisecond)
	defer ForgetCluster("set-member")
	ObserveMatchPolicy(time.Millisecond)
	want := map[string][]string{
		"controller-manager": slices.Sorted(slices.Values(append(slices.Clone(cluster),
			"binding_sync_work_duration_seconds", "cronfederatedhpa_process_duration_seconds", "cronfederatedhpa_rule_process_duration_seconds",
			"federatedhpa_process_duration_seconds", "federatedhpa_pull_metrics_duration_seconds", "policy_apply_attempts_total", "policy_preemption_total",
			"resource_apply_policy_duration_seconds", "resource_match_policy_duration_seconds", "work_sync_workload_duration_seconds"))),
		"agent": slices.Sorted(slices.Values(append(slices.Clone(cluster), "work_sync_workload_duration_seconds"))),
		"scheduler": {"karmada_scheduler_e2e_scheduling_duration_seconds", "karmada_scheduler_queue_incoming_bindings_total",
			"karmada_scheduler_schedule_attempts_total", "karmada_scheduler_scheduling_algorithm_duration_seconds", "scheduler_pending_bindings"},
	}
	got := map[string][]string{
		"controller-manager": names(t, controllerManagerCollectors()),
		"agent":              names(t, agentCollectors()),
		"scheduler":          names(t, schedulerCollectors()),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metric names served (-want +got):\n%s", diff)
	}
}

func TestRegisterJoinsControllerRuntimesRegistry(t *testing.T) {
	RegisterControllerManager()
	RegisterScheduler()
	RegisterAgent()
	RegisterControllerManager() // a second manager in the process
	families, err := ctrlmetrics.Registry.Gather()
	if err != nil {
		t.Fatal(err)
	}
	served := map[string]bool{}
	for _, f := range families {
		served[f.GetName()] = true
	}
	for _, name := range []string{"policy_preemption_total", "work_sync_workload_duration_seconds", "karmada_scheduler_schedule_attempts_total"} {
		if !served[name] {
			t.Errorf("%s is not in controller-runtime's registry; served: %v", name, slices.Sorted(maps.Keys(served)))
		}
	}
}

func TestPendingBindingsSumsEverySchedulerQueue(t *testing.T) {
	c := &pendingCollector{desc: pendingBindings.desc}
	c.add(func() PendingBindings { return PendingBindings{Active: 2, Unschedulable: 1} })
	remove := c.add(func() PendingBindings { return PendingBindings{Active: 1, Backoff: 3} })
	r := prometheus.NewPedanticRegistry()
	register(r, c)
	gather := func() map[string]float64 {
		t.Helper()
		families, err := r.Gather()
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]float64{}
		for _, f := range families {
			for _, m := range f.GetMetric() {
				got[f.GetName()+"{"+m.GetLabel()[0].GetValue()+"}"] = m.GetGauge().GetValue()
			}
		}
		return got
	}
	want := map[string]float64{"scheduler_pending_bindings{active}": 3, "scheduler_pending_bindings{backoff}": 3, "scheduler_pending_bindings{unschedulable}": 1}
	if diff := cmp.Diff(want, gather()); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	remove() // the second scheduler stopped
	want = map[string]float64{"scheduler_pending_bindings{active}": 2, "scheduler_pending_bindings{backoff}": 0, "scheduler_pending_bindings{unschedulable}": 1}
	if diff := cmp.Diff(want, gather()); diff != "" {
		t.Errorf("after a source is removed (-want +got):\n%s", diff)
	}
}
