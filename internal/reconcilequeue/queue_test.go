package reconcilequeue

import (
	"testing"

	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"
)

// A priority queue hands out real changes first, then status re-checks,
// then what a first list found, whatever order they were added in.
func TestStatusAndInitialItemsWaitBehindChanges(t *testing.T) {
	q := priorityqueue.New[string]("test")
	defer q.ShutDown()
	AddInitial(q, 0, "listed")
	AddStatus(q, 0, "status")
	q.Add("change")
	var got []string
	for range 3 {
		item, _ := q.Get()
		got = append(got, item)
		q.Done(item)
	}
	if want := []string{"change", "status", "listed"}; got[0] != want[0] || got[1] != want[1] || got[2] != want[2] {
		t.Errorf("order %v, want %v", got, want)
	}
}
