package taintmanager

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"
)

func TestDue(t *testing.T) {
	now := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	added := metav1.NewTime(now.Add(-20 * time.Second))
	notReady := corev1.Taint{Key: "cluster.karmada.io/not-ready", Effect: corev1.TaintEffectNoExecute, TimeAdded: &added}
	for name, tc := range map[string]struct {
		taints      []corev1.Taint
		tolerations []corev1.Toleration
		wait        time.Duration
		due         bool
	}{
		"no taints":               {},
		"NoSchedule only":         {taints: []corev1.Taint{{Key: "x", Effect: corev1.TaintEffectNoSchedule}}},
		"untolerated NoExecute":   {taints: []corev1.Taint{notReady}, due: true},
		"tolerated for ever":      {taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{{Key: notReady.Key, Operator: corev1.TolerationOpExists}}},
		"tolerated for 60s":       {taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{{Key: notReady.Key, Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](60)}}, wait: 40 * time.Second},
		"toleration ran out":      {taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{{Key: notReady.Key, Operator: corev1.TolerationOpExists, TolerationSeconds: ptr.To[int64](10)}}, due: true},
		"another key not allowed": {taints: []corev1.Taint{notReady}, tolerations: []corev1.Toleration{{Key: "other", Operator: corev1.TolerationOpExists}}, due: true},
	} {
		wait, due := Due(tc.taints, tc.tolerations, now)
		if wait != tc.wait || due != tc.due {
			t.Errorf("%s: Due = %s, %v; want %s, %v", name, wait, due, tc.wait, tc.due)
		}
	}
}

func TestPaceSpacesEvictions(t *testing.T) {
	p := NewPace(20) // one every 50 ms
	start := time.Now()
	for range 5 {
		if err := p.wait(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	// The first is immediate (burst 1), the next four 50 ms apart.
	if took := time.Since(start); took < 190*time.Millisecond {
		t.Errorf("5 evictions at 20/s took %s, want at least 200ms less the first", took)
	}
	if NewPace(0.5).halted() || !NewPace(0).halted() || (*Pace)(nil).halted() {
		t.Error("only a rate of 0 halts evictions")
	}
	if err := (*Pace)(nil).wait(t.Context()); err != nil {
		t.Errorf("no pace waits for nothing: %v", err)
	}
}
