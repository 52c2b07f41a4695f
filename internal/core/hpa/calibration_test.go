package hpa

import (
	"context"
	"errors"
	"math"
	"testing"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	metricsclient "k8s.io/kubernetes/pkg/controller/podautoscaler/metrics"
	clocktesting "k8s.io/utils/clock/testing"
)

// mapMetrics is a metrics client that answers from maps: pod metrics under the keys given
// (PodKey or bare name), one Object value, External series.
type mapMetrics struct {
	cpu      map[string]int64 // milli-CPU per pod key
	raw      map[string]int64 // Pods metric per pod key
	object   int64
	external []int64
}

func (m mapMetrics) GetResourceMetric(context.Context, corev1.ResourceName, string, labels.Selector, string) (metricsclient.PodMetricsInfo, time.Time, error) {
	return podMetrics(m.cpu)
}

func (m mapMetrics) GetRawMetric(string, string, labels.Selector, labels.Selector) (metricsclient.PodMetricsInfo, time.Time, error) {
	return podMetrics(m.raw)
}

func (m mapMetrics) GetObjectMetric(string, string, *autoscalingv2.CrossVersionObjectReference, labels.Selector) (int64, time.Time, error) {
	return m.object, testNow, nil
}

func (m mapMetrics) GetExternalMetric(string, string, labels.Selector) ([]int64, time.Time, error) {
	return m.external, testNow, nil
}

func podMetrics(values map[string]int64) (metricsclient.PodMetricsInfo, time.Time, error) {
	if len(values) == 0 {
		return nil, time.Time{}, errors.New("no metrics returned")
	}
	out := metricsclient.PodMetricsInfo{}
	for k, v := range values {
		out[k] = metricsclient.PodMetric{Value: v, Timestamp: testNow, Window: time.Minute}
	}
	return out, testNow, nil
}

// runningPod is a Ready pod that started long ago, requesting cpuRequest.
func runningPod(cluster, name, cpuRequest string) Pod {
	return Pod{Cluster: cluster, Pod: &corev1.Pod{
		ObjectMeta: metav1.ObjectMeta{Name: name, Namespace: testNamespace},
		Spec: corev1.PodSpec{Containers: []corev1.Container{{
			Name:      "app",
			Resources: corev1.ResourceRequirements{Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse(cpuRequest)}},
		}}},
		Status: corev1.PodStatus{
			Phase:      corev1.PodRunning,
			StartTime:  &metav1.Time{Time: testNow.Add(-time.Hour)},
			Conditions: []corev1.PodCondition{{Type: corev1.PodReady, Status: corev1.ConditionTrue, LastTransitionTime: metav1.Time{Time: testNow.Add(-time.Hour)}}},
		},
	}}
}

// podsIn returns one running pod per name in cluster, each requesting 1 CPU.
func podsIn(cluster string, names ...string) []Pod {
	out := make([]Pod, len(names))
	for i, n := range names {
		out[i] = runningPod(cluster, n, "1")
	}
	return out
}

func newMapCalculator(m mapMetrics) *ReplicaCalculator {
	return NewReplicaCalculator(m, DefaultCPUInitializationPeriod, DefaultInitialReadinessDelay, clocktesting.NewFakePassiveClock(testNow))
}

var everyTenth = Tolerances{ScaleDown: DefaultTolerance, ScaleUp: DefaultTolerance}

// TestCalibration checks Karmada's calibration: with a Duplicated placement each member runs
// every replica, so the pods of all members are calibration times the template's replicas,
// and each proposal counted in pods is divided by it.
func TestCalibration(t *testing.T) {
	// A Deployment of 3 replicas Duplicated to member1 and member2: 6 pods, calibration 2.
	duplicated := append(podsIn("member1", "web-a", "web-b", "web-c"), podsIn("member2", "web-d", "web-e", "web-f")...)
	// The same Deployment of 4 replicas Divided 2+2: calibration 1.
	divided := append(podsIn("member1", "web-a", "web-b"), podsIn("member2", "web-c", "web-d")...)
	allAt := func(pods []Pod, v int64) map[string]int64 {
		out := map[string]int64{}
		for _, p := range pods {
			out[p.Key()] = v
		}
		return out
	}
	dup := Workload{Namespace: testNamespace, Selector: labels.Everything(), Pods: duplicated, SpecReplicas: 3, StatusReplicas: 6, Calibration: 2}
	div := Workload{Namespace: testNamespace, Selector: labels.Everything(), Pods: divided, SpecReplicas: 4, StatusReplicas: 4, Calibration: 1}

	tests := []struct {
		name    string
		metrics mapMetrics
		w       Workload
		compute func(*ReplicaCalculator, Workload) (int32, error)
		want    int32
	}{
		{
			name: "Duplicated over 2 clusters: CPU at twice the target doubles the template's 3 replicas to 6, not 12",
			w:    dup, metrics: mapMetrics{cpu: allAt(duplicated, 1000)}, want: 6,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, _, err := c.GetResourceReplicas(context.Background(), w, everyTenth, 50, corev1.ResourceCPU, "")
				return r, err
			},
		},
		{
			name: "Divided over 2 clusters: CPU at twice the target doubles 4 replicas to 8",
			w:    div, metrics: mapMetrics{cpu: allAt(divided, 1000)}, want: 8,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, _, err := c.GetResourceReplicas(context.Background(), w, everyTenth, 50, corev1.ResourceCPU, "")
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: CPU average value halves with the calibration too",
			w:    dup, metrics: mapMetrics{cpu: allAt(duplicated, 200)}, want: 2,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetRawResourceReplicas(context.Background(), w, everyTenth, 500, corev1.ResourceCPU, "")
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: a Pods metric at twice the target gives 6",
			w:    dup, metrics: mapMetrics{raw: allAt(duplicated, 20000)}, want: 6,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetMetricReplicas(w, everyTenth, 10000, "http_requests_per_second", nil)
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: an Object value at twice the target gives 6 from the 6 ready pods",
			w:    dup, metrics: mapMetrics{object: 2000}, want: 6,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetObjectMetricReplicas(w, everyTenth, 1000, "requests", testDeploymentRef, nil)
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: an Object average value of 120 at 10 per pod is 12 pods, 6 template replicas",
			w:    dup, metrics: mapMetrics{object: 120000}, want: 6,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetObjectPerPodMetricReplicas(w, everyTenth, 10000, "requests", testDeploymentRef, nil)
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: an Object average value on target keeps the 6 pods' 3 template replicas",
			w:    dup, metrics: mapMetrics{object: 60000}, want: 3,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetObjectPerPodMetricReplicas(w, everyTenth, 10000, "requests", testDeploymentRef, nil)
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: an External value at twice the target gives 6",
			w:    dup, metrics: mapMetrics{external: []int64{1500, 500}}, want: 6,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetExternalMetricReplicas(w, everyTenth, 1000, "queue_length", &metav1.LabelSelector{})
				return r, err
			},
		},
		{
			name: "Duplicated over 2 clusters: an External average value of 120 at 10 per pod gives 6",
			w:    dup, metrics: mapMetrics{external: []int64{120000}}, want: 6,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, err := c.GetExternalPerPodMetricReplicas(w, everyTenth, 10000, "queue_length", &metav1.LabelSelector{})
				return r, err
			},
		},
		{
			name: "a calibration of 0 (a template of 0 replicas) counts as 1",
			w:    func() Workload { w := div; w.Calibration = 0; return w }(), metrics: mapMetrics{cpu: allAt(divided, 1000)}, want: 8,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, _, err := c.GetResourceReplicas(context.Background(), w, everyTenth, 50, corev1.ResourceCPU, "")
				return r, err
			},
		},
		{
			name: "a NaN calibration counts as 1",
			w:    func() Workload { w := div; w.Calibration = math.NaN(); return w }(), metrics: mapMetrics{cpu: allAt(divided, 1000)}, want: 8,
			compute: func(c *ReplicaCalculator, w Workload) (int32, error) {
				r, _, _, _, err := c.GetResourceReplicas(context.Background(), w, everyTenth, 50, corev1.ResourceCPU, "")
				return r, err
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.compute(newMapCalculator(tc.metrics), tc.w)
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want {
				t.Errorf("proposal %d, want %d", got, tc.want)
			}
		})
	}
}

// TestPodsOfSeveralClusters checks how pods of several member clusters meet their metrics.
func TestPodsOfSeveralClusters(t *testing.T) {
	tests := []struct {
		name string
		pods []Pod
		cpu  map[string]int64
		// target is the CPU utilization target, 50% when 0.
		target int32
		// want is the proposal from 4 template replicas (Divided, so calibration 1);
		// wantUtilization the average utilization of the pods with metrics.
		want, wantUtilization int32
	}{
		{
			name: "a StatefulSet's pods of the same names in two clusters keep their own metrics when the client keys them by cluster",
			pods: append(podsIn("member1", "web-0", "web-1"), podsIn("member2", "web-0", "web-1")...),
			cpu: map[string]int64{
				PodKey("member1", "web-0"): 900, PodKey("member1", "web-1"): 900,
				PodKey("member2", "web-0"): 100, PodKey("member2", "web-1"): 100,
			},
			want: 4, wantUtilization: 50,
		},
		{
			name: "a client that keys by bare pod name is matched to the pods of distinct names",
			pods: append(podsIn("member1", "web-a", "web-b"), podsIn("member2", "web-c", "web-d")...),
			cpu:  map[string]int64{"web-a": 1000, "web-b": 1000, "web-c": 1000, "web-d": 1000},
			want: 8, wantUtilization: 100,
		},
		{
			name: "a bare name that two clusters' pods share gives its one value to both",
			pods: append(podsIn("member1", "web-0", "web-1"), podsIn("member2", "web-0", "web-1")...),
			cpu:  map[string]int64{"web-0": 1000, "web-1": 1000},
			want: 8, wantUtilization: 100,
		},
		{
			name: "a cluster whose pods have no metrics (a member that is down) damps the scale-up: its pods count as idle",
			pods: append(podsIn("member1", "web-a", "web-b"), podsIn("member2", "web-c", "web-d")...),
			cpu:  map[string]int64{PodKey("member1", "web-a"): 1000, PodKey("member1", "web-b"): 1000},
			want: 4, wantUtilization: 100,
		},
		{
			name: "a cluster whose pods have no metrics damps the scale-down: its pods count as using their whole request",
			pods: append(podsIn("member1", "web-a", "web-b"), podsIn("member2", "web-c", "web-d")...),
			cpu:  map[string]int64{PodKey("member1", "web-a"): 100, PodKey("member1", "web-b"): 100},
			// 55% average with the missing pods at 100%, against 80%: 4 * 55/80 rounds up to 3,
			// where the two pods with metrics alone would say 1.
			target: 80, want: 3, wantUtilization: 10,
		},
		{
			name: "a cluster whose pods have no metrics can cancel a scale-down that their fallback would reverse",
			pods: append(podsIn("member1", "web-a", "web-b"), podsIn("member2", "web-c", "web-d")...),
			cpu:  map[string]int64{PodKey("member1", "web-a"): 100, PodKey("member1", "web-b"): 100},
			want: 4, wantUtilization: 10,
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := Workload{Namespace: testNamespace, Selector: labels.Everything(), Pods: tc.pods, SpecReplicas: 4, StatusReplicas: 4, Calibration: 1}
			target := tc.target
			if target == 0 {
				target = 50
			}
			got, utilization, _, _, err := newMapCalculator(mapMetrics{cpu: tc.cpu}).GetResourceReplicas(context.Background(), w, everyTenth, target, corev1.ResourceCPU, "")
			if err != nil {
				t.Fatal(err)
			}
			if got != tc.want || utilization != tc.wantUtilization {
				t.Errorf("proposal %d at %d%%, want %d at %d%%", got, utilization, tc.want, tc.wantUtilization)
			}
		})
	}
}
