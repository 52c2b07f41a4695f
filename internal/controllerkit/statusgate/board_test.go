package statusgate

import (
	"context"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// boardWork is a Work named name with uid and generation, Applied (True)
// when applied is set.
func boardWork(name, uid string, generation int64, applied bool) workv1alpha1.Work {
	w := workv1alpha1.Work{}
	w.Namespace, w.Name, w.UID, w.Generation = "karmada-es-member1", name, types.UID(uid), generation
	if applied {
		meta.SetStatusCondition(&w.Status.Conditions, metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkAppliedSuccessfulReason})
	}
	return w
}

func applied(w workv1alpha1.Work) bool {
	return meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied)
}

// TestBoardOverlay: a parked report stands in for the cached status of its
// own Work at its generation only; stale ones and those the cache has
// caught up with are dropped; a forgotten one is gone; a written one
// stands in until the cache holds the Work at the written
// resourceVersion.
func TestBoardOverlay(t *testing.T) {
	b := NewBoard()
	posted := []workv1alpha1.Work{
		boardWork("current", "u1", 1, true),
		boardWork("recreated", "old-uid", 1, true),
		boardWork("respecified", "u3", 1, true),
		boardWork("caught-up", "u4", 2, true),
		boardWork("cache-behind", "u5", 3, true),
		boardWork("forgotten", "u6", 1, true),
		boardWork("written", "u8", 1, true),
	}
	for i := range posted {
		b.Post(&posted[i])
	}
	b.Forget("karmada-es-member1", "forgotten")
	posted[6].ResourceVersion = "7"
	b.Written(&posted[6])
	cached := []workv1alpha1.Work{
		boardWork("current", "u1", 1, false),
		boardWork("recreated", "new-uid", 1, false),
		boardWork("respecified", "u3", 2, false),
		*posted[3].DeepCopy(),
		boardWork("cache-behind", "u5", 2, false),
		boardWork("forgotten", "u6", 1, false),
		boardWork("never-parked", "u7", 1, false),
		boardWork("written", "u8", 1, false), // the cache from before the write
	}
	cached[7].ResourceVersion = "6"
	b.Overlay(cached)
	want := map[string]bool{"current": true, "recreated": false, "respecified": false, "caught-up": true, "cache-behind": false, "forgotten": false, "never-parked": false, "written": true}
	for _, w := range cached {
		if applied(w) != want[w.Name] {
			t.Errorf("%s: Applied %v after the overlay, want %v", w.Name, applied(w), want[w.Name])
		}
	}
	// Kept: the current report, the one the cache has not reached, and
	// the written one.
	if n := len(b.reports); n != 3 {
		t.Errorf("the board holds %d reports after the overlay, want 3 (current, cache-behind, written)", n)
	}
	// Once the cache holds the write, the cache speaks.
	caught := []workv1alpha1.Work{boardWork("written", "u8", 1, false)}
	caught[0].ResourceVersion = "7"
	b.Overlay(caught)
	if applied(caught[0]) {
		t.Error("a written report overlaid the cache that holds its write")
	}
	if _, ok := b.reports[types.NamespacedName{Namespace: "karmada-es-member1", Name: "written"}]; ok {
		t.Error("a written report outlived the cache catching up with it")
	}
	// The overlay hands out copies: changing one leaves the board's.
	cached[0].Status.Conditions = nil
	again := []workv1alpha1.Work{boardWork("current", "u1", 1, false)}
	b.Overlay(again)
	if !applied(again[0]) {
		t.Error("a caller's change to an overlaid status reached the board")
	}
	var nilBoard *Board
	nilBoard.Post(&again[0])
	nilBoard.Written(&again[0])
	nilBoard.Forget("a", "b")
	nilBoard.Overlay(again)
}

// TestBoardSource: every Post reaches each subscriber as a generic event
// carrying the Work's name and annotations.
func TestBoardSource(t *testing.T) {
	b := NewBoard()
	got := make(chan string, 10)
	src := b.Source(handler.Funcs{GenericFunc: func(_ context.Context, e event.GenericEvent, _ workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		got <- e.Object.GetName() + " " + e.Object.GetAnnotations()["binding"]
	}})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := workqueue.NewTypedRateLimitingQueue(workqueue.DefaultTypedControllerRateLimiter[reconcile.Request]())
	defer q.ShutDown()
	if err := src.Start(ctx, q); err != nil {
		t.Fatal(err)
	}
	w := boardWork("w1", "u1", 1, true)
	w.Annotations = map[string]string{"binding": "default/nginx"}
	b.Post(&w)
	select {
	case s := <-got:
		if s != "w1 default/nginx" {
			t.Errorf("the subscriber got %q, want the Work's name and annotations", s)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("the subscriber got nothing")
	}
}

// TestBoardReportTTL: a written report the cache never shows at its
// resourceVersion (its metadata changed right after) is dropped after
// ReportTTL; a parked one is not.
func TestBoardReportTTL(t *testing.T) {
	b := NewBoard()
	old, parked := boardWork("old", "u1", 1, true), boardWork("parked", "u2", 1, true)
	b.Written(&old)
	b.Post(&parked)
	key := types.NamespacedName{Namespace: "karmada-es-member1", Name: "old"}
	r := b.reports[key]
	r.since = r.since.Add(-2 * ReportTTL)
	b.reports[key] = r
	b.swept = b.swept.Add(-2 * ReportTTL)
	fresh := boardWork("fresh", "u3", 1, true)
	b.Written(&fresh)
	if _, ok := b.reports[key]; ok {
		t.Error("a written report outlived ReportTTL")
	}
	if len(b.reports) != 2 {
		t.Errorf("the board holds %d reports, want 2 (parked, fresh)", len(b.reports))
	}
}
