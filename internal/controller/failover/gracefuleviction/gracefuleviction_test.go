package gracefuleviction

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

func TestDone(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	created := metav1.NewTime(now.Add(-time.Minute))
	task := func(mut func(*workv1alpha2.GracefulEvictionTask)) workv1alpha2.GracefulEvictionTask {
		t := workv1alpha2.GracefulEvictionTask{FromCluster: "member1", PurgeMode: policyv1alpha1.PurgeModeGracefully, CreationTimestamp: &created}
		if mut != nil {
			mut(&t)
		}
		return t
	}
	for name, tc := range map[string]struct {
		task          workv1alpha2.GracefulEvictionTask
		ready, exists bool
		done          bool
		wait          time.Duration
	}{
		"waiting":             {task: task(nil), exists: true, wait: 9 * time.Minute},
		"replacement healthy": {task: task(nil), ready: true, exists: true, done: true},
		"timeout":             {task: task(func(t *workv1alpha2.GracefulEvictionTask) { t.GracePeriodSeconds = ptr.To[int32](30) }), exists: true, done: true},
		"cluster gone":        {task: task(nil), done: true},
		"Directly":            {task: task(func(t *workv1alpha2.GracefulEvictionTask) { t.PurgeMode = policyv1alpha1.PurgeModeDirectly }), exists: true, done: true},
		"Immediately (v1.7)":  {task: task(func(t *workv1alpha2.GracefulEvictionTask) { t.PurgeMode = policyv1alpha1.PurgeModeImmediately }), exists: true, done: true},
		"Never, suppressed": {task: task(func(t *workv1alpha2.GracefulEvictionTask) {
			t.PurgeMode = policyv1alpha1.PurgeModeNever
			t.SuppressDeletion = ptr.To(true)
		}), ready: true, exists: true},
		"Never, suppression off": {task: task(func(t *workv1alpha2.GracefulEvictionTask) {
			t.PurgeMode = policyv1alpha1.PurgeModeNever
			t.SuppressDeletion = ptr.To(false)
		}), exists: true, done: true},
	} {
		done, wait, _ := Done(tc.task, tc.ready, true, tc.exists, DefaultTimeout, now)
		if done != tc.done || wait != tc.wait {
			t.Errorf("%s: Done = %v, %s; want %v, %s", name, done, wait, tc.done, tc.wait)
		}
	}
}

func TestReplacementReady(t *testing.T) {
	b := &workv1alpha2.ResourceBinding{}
	b.Generation = 3
	b.Spec.Clusters = []workv1alpha2.TargetCluster{{Name: "member2", Replicas: 3}, {Name: "member3", Replicas: 3}}
	b.Status.SchedulerObservedGeneration = 3
	b.Status.Conditions = []metav1.Condition{{Type: workv1alpha2.Scheduled, Status: metav1.ConditionTrue}}
	b.Status.AggregatedStatus = []workv1alpha2.AggregatedStatusItem{{ClusterName: "member2", Applied: true, Health: workv1alpha2.ResourceHealthy}}
	if ReplacementReady(binding.Object(b)) {
		t.Error("ready with member3 not reporting")
	}
	b.Status.AggregatedStatus = append(b.Status.AggregatedStatus, workv1alpha2.AggregatedStatusItem{ClusterName: "member3", Applied: true, Health: workv1alpha2.ResourceHealthy})
	if !ReplacementReady(binding.Object(b)) {
		t.Error("not ready with both healthy")
	}
	b.Generation = 4
	if ReplacementReady(binding.Object(b)) {
		t.Error("ready before the scheduler saw the latest generation")
	}
	b.Generation, b.Spec.Clusters = 3, nil
	if ReplacementReady(binding.Object(b)) {
		t.Error("ready with nowhere to go")
	}
}

func TestRecoveredAndReplaced(t *testing.T) {
	ready := []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionTrue}}
	noExecute := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute}
	for name, tc := range map[string]struct {
		conditions  []metav1.Condition
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		want        bool
	}{
		"Ready and untainted":     {conditions: ready, want: true},
		"not Ready":               {conditions: []metav1.Condition{{Type: clusterv1alpha1.ClusterConditionReady, Status: metav1.ConditionFalse}}},
		"a NoExecute taint":       {conditions: ready, taints: []corev1.Taint{noExecute}},
		"a tolerated taint":       {conditions: ready, taints: []corev1.Taint{noExecute}, tolerations: []corev1.Toleration{{Key: noExecute.Key, Operator: corev1.TolerationOpExists}}, want: true},
		"only a NoSchedule taint": {conditions: ready, taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}, want: true},
	} {
		c := &clusterv1alpha1.Cluster{Spec: clusterv1alpha1.ClusterSpec{Taints: tc.taints}, Status: clusterv1alpha1.ClusterStatus{Conditions: tc.conditions}}
		if got := Recovered(c, tc.tolerations); got != tc.want {
			t.Errorf("%s: Recovered = %v, want %v", name, got, tc.want)
		}
	}
	for name, tc := range map[string]struct {
		spec workv1alpha2.ResourceBindingSpec
		want bool
	}{
		"placed nowhere":         {spec: workv1alpha2.ResourceBindingSpec{Replicas: 3}},
		"all replicas elsewhere": {spec: workv1alpha2.ResourceBindingSpec{Replicas: 3, Clusters: []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 3}}}, want: true},
		"some replicas only":     {spec: workv1alpha2.ResourceBindingSpec{Replicas: 3, Clusters: []workv1alpha2.TargetCluster{{Name: "m2", Replicas: 1}}}},
		"no replicas, placed":    {spec: workv1alpha2.ResourceBindingSpec{Clusters: []workv1alpha2.TargetCluster{{Name: "m2"}}}, want: true},
	} {
		if got := Replaced(&tc.spec); got != tc.want {
			t.Errorf("%s: Replaced = %v, want %v", name, got, tc.want)
		}
	}
}
