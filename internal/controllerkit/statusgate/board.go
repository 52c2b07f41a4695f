package statusgate

import (
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/types"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/source"

	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
)

// Board holds the Work status reports the Gate has parked: computed by the
// execution controller from its member's objects, not yet written to the
// Work. Status aggregation reads a Work's parked report in place of the
// status its cache holds, so a binding's aggregated status and its
// template's follow the members while the Works' own status writes (one per
// member copy) wait for propagation to pause: after a burst to a hundred
// members, a binding is written once its members have reported rather
// than once a hundred Work writes have gone through.
//
// A report belongs to one Work (its uid) at one generation: a Work whose
// spec has changed since, or that was deleted and made again, shows the
// status its cache holds. A written report (Written) stays until the
// cache holds the Work as that write left it: in between, the cache still
// shows the status from before, and aggregating from it would take back
// what the report said (under a burst's thousands of status writes, a
// binding then went back to FullyApplied=False once per write and was
// current only after the last of them). A report is dropped once the
// cache has caught up with it, once its Work is gone (Forget), or
// ReportTTL after its write. The Board is memory only: after a restart
// the execution controller reads every member again and reports anew. A
// nil *Board holds nothing.
type Board struct {
	mu      sync.Mutex
	reports map[types.NamespacedName]boardReport
	subs    []chan event.GenericEvent
	// swept is when written reports past ReportTTL were last dropped.
	swept time.Time
}

type boardReport struct {
	uid        types.UID
	generation int64
	status     workv1alpha1.WorkStatus
	// writtenAs is the Work's resourceVersion after the report's write
	// ("" while parked).
	writtenAs string
	// since is when a written report was recorded (zero for a parked one,
	// which its write or its Work's deletion ends).
	since time.Time
}

// ReportTTL bounds how long a written report waits for the cache to show
// its write (normally a watch delivery, well under a second) before the
// Board drops it anyway: a Work whose metadata changed right after the
// write is never seen at the written resourceVersion.
const ReportTTL = time.Minute

// NewBoard returns an empty Board.
func NewBoard() *Board {
	return &Board{reports: map[types.NamespacedName]boardReport{}}
}

// boardBacklog is how many posted Works a subscriber's channel holds
// before Post hands the notice to a goroutine of its own.
const boardBacklog = 4096

// Post records w's status (as w carries it, not yet written) as its
// parked report and tells every subscriber. The Board keeps its own copy.
func (b *Board) Post(w *workv1alpha1.Work) {
	if b == nil {
		return
	}
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	b.mu.Lock()
	b.reports[key] = boardReport{uid: w.UID, generation: w.Generation, status: *w.Status.DeepCopy()}
	subs := b.subs
	b.mu.Unlock()
	notice := &workv1alpha1.Work{}
	notice.Namespace, notice.Name, notice.UID = w.Namespace, w.Name, w.UID
	notice.Labels, notice.Annotations = w.Labels, w.Annotations
	for _, ch := range subs {
		select {
		case ch <- event.GenericEvent{Object: notice}:
		default:
			go func() { ch <- event.GenericEvent{Object: notice} }()
		}
	}
}

// Written records that w's status (as w carries it after a successful
// status update, with the resourceVersion the API server gave it) has been
// written: the report stands in for the cached status until the cache
// holds w at that resourceVersion. Works without a parked report are
// recorded too, as status aggregation may read the cache before the write
// reaches it. Subscribers are not told: the write's own watch event
// re-aggregates.
func (b *Board) Written(w *workv1alpha1.Work) {
	if b == nil {
		return
	}
	now := time.Now()
	key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
	b.mu.Lock()
	defer b.mu.Unlock()
	b.reports[key] = boardReport{uid: w.UID, generation: w.Generation, status: *w.Status.DeepCopy(),
		writtenAs: w.ResourceVersion, since: now}
	if now.Sub(b.swept) < ReportTTL {
		return // written reports are swept about once a ReportTTL
	}
	b.swept = now
	for k, r := range b.reports {
		if !r.since.IsZero() && now.Sub(r.since) > ReportTTL {
			delete(b.reports, k)
		}
	}
}

// Forget drops the report of the Work namespace/name: the Work is gone, or
// what it says is already current.
func (b *Board) Forget(namespace, name string) {
	if b == nil {
		return
	}
	b.mu.Lock()
	delete(b.reports, types.NamespacedName{Namespace: namespace, Name: name})
	b.mu.Unlock()
}

// Overlay sets the status of each Work in works (read from a cache, and
// the caller's to change) to its report, when there is one for that Work
// at its generation. Reports of another Work of the same name, of an
// older generation, written and now cached at the written
// resourceVersion, or equal to the status the cache already holds are
// dropped.
func (b *Board) Overlay(works []workv1alpha1.Work) {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.reports) == 0 {
		return
	}
	for i := range works {
		w := &works[i]
		key := types.NamespacedName{Namespace: w.Namespace, Name: w.Name}
		r, ok := b.reports[key]
		if !ok {
			continue
		}
		switch {
		case r.uid != w.UID || r.generation < w.Generation || r.writtenAs != "" && r.writtenAs == w.ResourceVersion:
			delete(b.reports, key)
		case r.generation > w.Generation:
			// The cache is behind the Work the report was made from.
		case equality.Semantic.DeepEqual(r.status, w.Status):
			delete(b.reports, key)
		default:
			w.Status = *r.status.DeepCopy()
		}
	}
}

// Source delivers every Work posted from now on to h, as a generic event
// whose object carries the Work's namespace, name, uid, labels and
// annotations (enough to find its binding).
func (b *Board) Source(h handler.EventHandler) source.Source {
	ch := make(chan event.GenericEvent, boardBacklog)
	b.mu.Lock()
	b.subs = append(b.subs, ch)
	b.mu.Unlock()
	return source.Channel((<-chan event.GenericEvent)(ch), h)
}
