// Package eventrecord raises Karmada's success and failure events on
// transitions only. A controller reports the outcome of every attempt at an
// operation (render a binding's Works, apply a Work, write a template's
// status); the Recorder turns the outcomes into events only when they
// change: the first success, a failure, a different failure, the recovery.
// Retries of the same failure and repeated successes raise nothing, so
// `kubectl describe` shows a short history and the API server is not
// written to on every reconcile.
//
// Outcomes are remembered in memory. After a restart, the first outcome of
// an object created before the process started is raised again only when it
// is a failure: a success there is almost always the re-check of what the
// previous process already reported, and raising it again for every object
// (tens of thousands after a restart at scale) would flood the API server
// with events exactly when the restarted controllers need it most.
package eventrecord

import (
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/tools/record"
)

// Operation names the pair of event reasons of one operation, such as
// events.SyncWorkSucceed and events.SyncWorkFailed.
type Operation struct {
	// Succeed is the reason of the Normal event raised on success. Empty
	// for an operation Karmada reports only when it fails (such as
	// events.CleanupWorkFailed): a success then raises nothing, but is
	// remembered, so that the next failure is raised again.
	Succeed string
	// Failed is the reason of the Warning event raised on failure.
	Failed string
	// Instance, if set, tells apart several instances of the operation on
	// one subject, each with outcomes of its own (the policy and cluster
	// of an override applied to a template); empty means one instance.
	Instance string
}

// key is what the outcome of op is remembered under, per subject.
func (op Operation) key() string {
	name := op.Succeed
	if name == "" {
		name = op.Failed
	}
	if op.Instance == "" {
		return name
	}
	return name + "/" + op.Instance
}

// Recorder raises events for outcomes that differ from the previous outcome
// of the same operation on the same subject. A nil *Recorder, or one with a
// nil Events, raises nothing.
type Recorder struct {
	// Events receives the events.
	Events record.EventRecorder
	// Busy, if set, holds Normal events back while it reports true (the
	// status gate: propagation writes go first), for at most MaxDefer.
	// Warnings are never held.
	Busy func() bool
	// MaxDefer bounds how long a Normal event is held back.
	MaxDefer time.Duration
	// Tick is how often held events are checked for release; 0 means 25ms.
	Tick time.Duration
	// Scheme tells the kind of typed objects (whose TypeMeta is empty in
	// a cache), so that a held event keeps only a small reference to its
	// object (kind, namespace, name, uid) instead of the whole object.
	Scheme *runtime.Scheme
	// PerTick bounds how many held events are released at each Tick; 0
	// means 10. Events are written one at a time by the event broadcaster,
	// behind the recorder's back: releasing thousands at once (after a
	// burst) would queue writes there that compete with the next
	// propagation, where the gate cannot see them.
	PerTick int

	mu       sync.Mutex
	last     map[string]map[string]string // subject -> operation -> "" after success, else the failure message
	size     int                          // entries in last
	held     []heldEvent
	flushing bool
}

type heldEvent struct {
	since  time.Time
	emit   func()
	reason string
}

// maxRemembered bounds the outcomes kept; beyond it they are forgotten all
// at once (the next outcome of each subject is then raised again).
const maxRemembered = 200_000

// Outcome reports one attempt at op on the subject, the first of objs (a
// binding, a Work), and raises the event on every object in objs (the
// subject and, typically, its resource template) when the outcome differs
// from the subject's previous one for op. err == nil is a success, raised
// as a Normal event with message okMsg; otherwise a Warning with the
// error's text. Objects after the first may be nil and are then skipped.
func (r *Recorder) Outcome(op Operation, err error, okMsg string, objs ...runtime.Object) {
	r.outcome(op, err, okMsg, false, objs...)
}

// outcome is Outcome; happened says that every success is news (Happened),
// so that a first success after a restart is raised too.
func (r *Recorder) outcome(op Operation, err error, okMsg string, happened bool, objs ...runtime.Object) {
	if r == nil || r.Events == nil || len(objs) == 0 || objs[0] == nil {
		return
	}
	msg := ""
	if err != nil {
		msg = err.Error()
		if msg == "" {
			msg = "failed"
		}
	}
	subject := subjectKey(objs[0])
	r.mu.Lock()
	prev, seen := r.last[subject][op.key()]
	if seen && prev == msg {
		r.mu.Unlock()
		return
	}
	quiet := !seen && err == nil && !happened && createdBeforeStart(objs[0])
	if r.last == nil || r.size >= maxRemembered {
		r.last, r.size = map[string]map[string]string{}, 0
	}
	ops := r.last[subject]
	if ops == nil {
		ops = map[string]string{}
		r.last[subject] = ops
	}
	if !seen {
		r.size++
	}
	ops[op.key()] = msg
	r.mu.Unlock()
	if quiet {
		return
	}
	for _, o := range objs {
		if o == nil {
			continue
		}
		if err != nil {
			r.Events.Event(o, corev1.EventTypeWarning, op.Failed, msg)
			continue
		}
		if op.Succeed != "" {
			r.normal(o, op.Succeed, okMsg)
		}
	}
}

// Happened reports one attempt at an operation that, once it succeeds, is
// over, such as a preemption: every success raises its Normal event (two
// preemptions of one template are two events), and failures are raised as
// by Outcome, when the failure differs from the previous one. The
// arguments are Outcome's.
func (r *Recorder) Happened(op Operation, err error, okMsg string, objs ...runtime.Object) {
	if r == nil || r.Events == nil || len(objs) == 0 || objs[0] == nil {
		return
	}
	if err == nil {
		subject := subjectKey(objs[0])
		r.mu.Lock()
		if ops := r.last[subject]; ops != nil {
			if _, seen := ops[op.key()]; seen {
				delete(ops, op.key())
				r.size--
			}
		}
		r.mu.Unlock()
	}
	r.outcome(op, err, okMsg, true, objs...)
}

// processStart is when this process started (this package was loaded).
var processStart = time.Now()

// createdBeforeStart says whether obj has a creationTimestamp older than the
// process (false when it has none).
func createdBeforeStart(obj runtime.Object) bool {
	m, err := meta.Accessor(obj)
	if err != nil {
		return false
	}
	created := m.GetCreationTimestamp()
	return !created.IsZero() && created.Time.Before(processStart.Truncate(time.Second))
}

// Forget drops what is remembered of subject, once it is deleted.
func (r *Recorder) Forget(subject runtime.Object) {
	if r == nil {
		return
	}
	key := subjectKey(subject)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.size -= len(r.last[key])
	delete(r.last, key)
}

// Normal raises a Normal event with reason and msg on o, for a change the
// caller detected itself (such as a condition's transition); it is held
// back while Busy, as every Normal event.
func (r *Recorder) Normal(o runtime.Object, reason, msg string) {
	if r == nil || r.Events == nil || o == nil {
		return
	}
	r.normal(o, reason, msg)
}

// Warning raises a Warning event with reason and msg on o, for a change
// the caller detected itself; warnings are never held back.
func (r *Recorder) Warning(o runtime.Object, reason, msg string) {
	if r == nil || r.Events == nil || o == nil {
		return
	}
	r.Events.Event(o, corev1.EventTypeWarning, reason, msg)
}

// normal raises a Normal event now, or holds it while Busy.
func (r *Recorder) normal(o runtime.Object, reason, msg string) {
	if r.Busy == nil || !r.Busy() {
		r.Events.Event(o, corev1.EventTypeNormal, reason, msg)
		return
	}
	ref := r.reference(o)
	r.mu.Lock()
	defer r.mu.Unlock()
	r.held = append(r.held, heldEvent{since: time.Now(), reason: reason,
		emit: func() { r.Events.Event(ref, corev1.EventTypeNormal, reason, msg) }})
	if !r.flushing {
		r.flushing = true
		go r.flush()
	}
}

// flush releases held events, oldest first and at most PerTick a Tick, while
// Busy reports false, and those that reached MaxDefer whatever Busy says;
// it ends when nothing is held.
func (r *Recorder) flush() {
	tick, perTick := r.Tick, r.PerTick
	if tick <= 0 {
		tick = 25 * time.Millisecond
	}
	if perTick <= 0 {
		perTick = 10
	}
	t := time.NewTicker(tick)
	defer t.Stop()
	for range t.C {
		quiet := !r.Busy()
		now := time.Now()
		r.mu.Lock()
		var due []heldEvent
		n := 0
		for n < len(r.held) && len(due) < perTick && (quiet || now.Sub(r.held[n].since) >= r.MaxDefer) {
			due = append(due, r.held[n])
			n++
		}
		r.held = append(r.held[:0], r.held[n:]...)
		done := len(r.held) == 0
		if done {
			r.flushing = false
		}
		r.mu.Unlock()
		for _, h := range due {
			h.emit()
		}
		if done {
			return
		}
	}
}

// reference returns a small stand-in for o that events can be raised on:
// its kind, namespace, name, uid and resourceVersion. A burst holds
// thousands of events for up to MaxDefer; holding whole templates and
// bindings would cost tens of MiB. When the kind cannot be told, o itself
// is kept.
func (r *Recorder) reference(o runtime.Object) runtime.Object {
	m, err := meta.Accessor(o)
	if err != nil {
		return o
	}
	gvk := o.GetObjectKind().GroupVersionKind()
	if gvk.Empty() && r.Scheme != nil {
		if gvks, _, err := r.Scheme.ObjectKinds(o); err == nil && len(gvks) > 0 {
			gvk = gvks[0]
		}
	}
	if gvk.Empty() {
		return o
	}
	ref := &unstructured.Unstructured{}
	ref.SetGroupVersionKind(gvk)
	ref.SetNamespace(m.GetNamespace())
	ref.SetName(m.GetName())
	ref.SetUID(m.GetUID())
	ref.SetResourceVersion(m.GetResourceVersion())
	return ref
}

// subjectKey identifies an object: its uid, or its kind and name when it
// has none (an object built only to carry a key).
func subjectKey(o runtime.Object) string {
	m, err := meta.Accessor(o)
	if err != nil {
		return ""
	}
	if uid := m.GetUID(); uid != "" {
		return string(uid)
	}
	return o.GetObjectKind().GroupVersionKind().Kind + "/" + m.GetNamespace() + "/" + m.GetName()
}
