package eventrecord

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/record"

	"github.com/flotilla-io/flotilla/internal/test/fakeevents"
)

var syncWork = Operation{Succeed: "SyncWorkSucceed", Failed: "SyncWorkFailed"}

func cm(uid string) *corev1.ConfigMap {
	return &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "c-" + uid, Namespace: "t", UID: types.UID("uid-" + uid)}}
}

func TestOutcomeRaisesOnTransitionsOnly(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := &Recorder{Events: fake}
	b, tmpl := cm("b"), cm("tmpl")
	bad := errors.New("override for cluster member3: path /spec/nosuch does not exist")
	r.Outcome(syncWork, nil, "synced", b, tmpl)
	r.Outcome(syncWork, nil, "synced", b, tmpl)     // repeated success: nothing
	r.Outcome(syncWork, bad, "synced", b, tmpl)     // failure: Warning on both
	r.Outcome(syncWork, bad, "synced", b, tmpl)     // same failure again: nothing
	r.Outcome(syncWork, errors.New("other"), "", b) // a different failure
	r.Outcome(syncWork, nil, "synced", b, nil)      // recovery; nil objects skipped
	want := []string{
		"Normal SyncWorkSucceed synced", "Normal SyncWorkSucceed synced",
		"Warning SyncWorkFailed " + bad.Error(), "Warning SyncWorkFailed " + bad.Error(),
		"Warning SyncWorkFailed other",
		"Normal SyncWorkSucceed synced",
	}
	if diff := cmp.Diff(want, fakeevents.Drain(fake)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestFirstSuccessOfAnObjectOlderThanTheProcessIsQuiet(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := &Recorder{Events: fake}
	old := cm("old")
	old.CreationTimestamp = metav1.NewTime(processStart.Add(-time.Hour))
	r.Outcome(syncWork, nil, "synced", old)                  // a re-check after a restart: nothing
	r.Outcome(syncWork, errors.New("broken"), "synced", old) // failures are raised
	r.Outcome(syncWork, nil, "synced", old)                  // and so is the recovery
	r.Happened(Operation{Succeed: "PreemptPolicySucceed"}, nil, "preempted", old)
	fresh := cm("new")
	fresh.CreationTimestamp = metav1.NewTime(processStart.Add(time.Hour))
	r.Outcome(syncWork, nil, "synced", fresh) // created while this process runs: raised
	want := []string{"Warning SyncWorkFailed broken", "Normal SyncWorkSucceed synced", "Normal PreemptPolicySucceed preempted", "Normal SyncWorkSucceed synced"}
	if diff := cmp.Diff(want, fakeevents.Drain(fake)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestOutcomeIsPerSubjectAndOperation(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := &Recorder{Events: fake}
	agg := Operation{Succeed: "AggregateStatusSucceed", Failed: "AggregateStatusFailed"}
	r.Outcome(syncWork, nil, "a", cm("1"))
	r.Outcome(syncWork, nil, "a", cm("2"))
	r.Outcome(agg, nil, "b", cm("1"))
	r.Forget(cm("1"))
	r.Outcome(syncWork, nil, "a", cm("1"))
	if got := len(fakeevents.Drain(fake)); got != 4 {
		t.Errorf("got %d events, want 4 (one per subject and operation, and again after Forget)", got)
	}
}

func TestFailureOnlyOperationRaisesWarningsOnly(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := &Recorder{Events: fake}
	cleanup := Operation{Failed: "CleanupWorkFailed"}
	conflict := Operation{Failed: "DependencyPolicyConflict"}
	b := cm("b")
	denied := errors.New("denied")
	r.Outcome(cleanup, nil, "", b)     // success: no Normal event
	r.Outcome(cleanup, denied, "", b)  // failure: Warning
	r.Outcome(cleanup, denied, "", b)  // retried: nothing
	r.Outcome(conflict, denied, "", b) // another failure-only operation has outcomes of its own
	r.Outcome(cleanup, nil, "", b)     // recovery: still nothing raised
	r.Outcome(cleanup, denied, "", b)  // and the next failure is raised again
	want := []string{"Warning CleanupWorkFailed denied", "Warning DependencyPolicyConflict denied", "Warning CleanupWorkFailed denied"}
	if diff := cmp.Diff(want, fakeevents.Drain(fake)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestHappenedRaisesEverySuccessAndChangedFailures(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	r := &Recorder{Events: fake}
	preempt := Operation{Succeed: "PreemptPolicySucceed", Failed: "PreemptPolicyFailed"}
	tmpl := cm("tmpl")
	denied := errors.New("denied")
	r.Happened(preempt, nil, "b took it from a", tmpl)
	r.Happened(preempt, nil, "c took it from b", tmpl) // a second preemption: a second event
	r.Happened(preempt, denied, "", tmpl)
	r.Happened(preempt, denied, "", tmpl) // the same failure retried: nothing
	r.Happened(preempt, nil, "d took it from c", tmpl)
	r.Happened(preempt, denied, "", tmpl) // a failure after a success is raised again
	want := []string{
		"Normal PreemptPolicySucceed b took it from a", "Normal PreemptPolicySucceed c took it from b",
		"Warning PreemptPolicyFailed denied", "Normal PreemptPolicySucceed d took it from c", "Warning PreemptPolicyFailed denied",
	}
	if diff := cmp.Diff(want, fakeevents.Drain(fake)); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if r.size != 1 {
		t.Errorf("remembered outcomes = %d, want 1", r.size)
	}
	var none *Recorder
	none.Happened(preempt, nil, "nothing", tmpl)
}

func TestNormalEventsWaitWhileBusy(t *testing.T) {
	fake := record.NewFakeRecorder(100)
	var busy atomic.Bool
	busy.Store(true)
	r := &Recorder{Events: fake, Busy: busy.Load, MaxDefer: time.Hour, Tick: time.Millisecond}
	r.Outcome(syncWork, errors.New("boom"), "", cm("w"))
	r.Outcome(syncWork, nil, "ok", cm("n"))
	if diff := cmp.Diff([]string{"Warning SyncWorkFailed boom"}, fakeevents.Drain(fake)); diff != "" {
		t.Fatalf("while busy, only the Warning is raised (-want +got):\n%s", diff)
	}
	busy.Store(false)
	select {
	case e := <-fake.Events:
		if e != "Normal SyncWorkSucceed ok" {
			t.Errorf("released event = %q", e)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("held Normal event was never released once quiet")
	}
}

func TestNilRecorderIsSafe(t *testing.T) {
	var r *Recorder
	r.Outcome(syncWork, nil, "ok", cm("x"))
	r.Forget(cm("x"))
	(&Recorder{}).Outcome(syncWork, nil, "ok", cm("x"))
}

// objectRecorder records the objects events are raised on.
type objectRecorder struct {
	record.FakeRecorder
	objs chan runtime.Object
}

func (o *objectRecorder) Event(obj runtime.Object, _, _, _ string) { o.objs <- obj }

func TestHeldEventsKeepOnlyAReference(t *testing.T) {
	rec := &objectRecorder{objs: make(chan runtime.Object, 1)}
	var busy atomic.Bool
	busy.Store(true)
	scheme := runtime.NewScheme()
	_ = corev1.AddToScheme(scheme)
	r := &Recorder{Events: rec, Busy: busy.Load, MaxDefer: time.Hour, Tick: time.Millisecond, Scheme: scheme}
	r.Outcome(syncWork, nil, "ok", cm("n")) // a typed object without TypeMeta, as caches hold them
	busy.Store(false)
	select {
	case got := <-rec.objs:
		u, ok := got.(*unstructured.Unstructured)
		if !ok {
			t.Fatalf("held event raised on %T, want a small reference", got)
		}
		if u.GetKind() != "ConfigMap" || u.GetAPIVersion() != "v1" || u.GetName() != "c-n" || u.GetNamespace() != "t" || u.GetUID() != "uid-n" {
			t.Errorf("reference = %v", u.Object)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("held event never released")
	}
}
