// Package execution implements the execution controller (push mode): for
// every Work in an execution namespace karmada-es-<cluster> it creates,
// updates or deletes the manifests in that member cluster, honouring
// conflictResolution, reverts drift, and reflects each object's status and
// health into Work.status.manifestStatuses (Karmada's work status
// controller, folded in: one queue, one read of the member object).
package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/core/rollout"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// Finalizer holds a Work until its objects are removed from the member.
const Finalizer = binding.ExecutionFinalizer

// FirstReportGrace bounds how long a new Work's first status report waits
// for the member's controllers to observe its objects (see
// interpreter.Observed); members without controllers are reported after it.
// Work creation timestamps have one-second resolution, so the actual wait is
// between FirstReportGrace-1s and FirstReportGrace.
const FirstReportGrace = 2 * time.Second

// StatusDelay gathers a member object's quick successive changes before
// its Work is reconciled (status reflection and drift correction).
const StatusDelay = 100 * time.Millisecond

// Reconciler is the execution controller.
type Reconciler struct {
	Client  client.Client
	Members *registry.Registry
	// Interpreter retains member-owned fields and reads health and status;
	// nil means the bundled and built-in rules only.
	Interpreter *interpreter.Interpreter
	// MemberChanges carries member-object changes (from the registry's
	// informers) as Work events.
	MemberChanges chan event.GenericEvent
	// MemberInitial carries what member informers' first lists find (made
	// when nil), queued at low priority.
	MemberInitial chan event.GenericEvent
	// Clock tells the time of creations and report graces; nil is the
	// real clock.
	Clock clock.PassiveClock
	// ReadYourWrites lets a member object just created stand in for its
	// informer copy until the informer delivers it
	// (fastpath.Options.ReadYourWrites).
	ReadYourWrites bool
	// Events, if set, gets Karmada's SyncSucceed and SyncFailed events on
	// the Work and its resource template when the outcome of applying it
	// changes.
	Events *eventrecord.Recorder
	// StatusEvents, if set, gets Karmada's ReflectStatus* and
	// InterpretHealth* events on the Work, per member object, when the
	// outcome of reading its status changes (Karmada's work status
	// controller raises them: WorkStatusEventSource).
	StatusEvents *eventrecord.Recorder
	// Gate, if set, is touched by every member write and defers successful
	// status reports while propagation is busy (see statusgate.Gate).
	Gate *statusgate.Gate
	// Board, if set, holds each deferred report until it is written, for
	// status aggregation to read meanwhile (see statusgate.Board).
	Board *statusgate.Board
	// Executes tells whether this process applies the Works of a cluster;
	// nil means every cluster. The control plane leaves Pull-mode clusters
	// to their agents (and only releases the Works of one that is being
	// unjoined while its agent is gone); an agent executes its own cluster.
	Executes func(cluster string) bool
	wakeup   statusgate.Wakeup

	slots   chan struct{} // bounds concurrent Handoffs
	locks   sync.Map      // Work key -> *sync.Mutex: Handoff and Reconcile of one Work never overlap
	fresh   sync.Map      // member object key -> *unstructured.Unstructured just created here, until the informer has it
	handoff sync.Map      // Work key -> time.Time its objects were created by Handoff
	// rejected holds, per member object (freshKey), the last update the
	// member refused as invalid, so it is not sent again unchanged.
	rejected sync.Map
}

// rejection is an update a member refused: what was sent, to which version
// of the member object (rejectionKey), and the refusal.
type rejection struct {
	key string
	err error
}

// rejectionKey identifies one update attempt: the member object's
// resourceVersion and the desired manifest.
func rejectionKey(existing, desired *unstructured.Unstructured) string {
	raw, _ := json.Marshal(desired.Object) // an object from JSON always marshals
	h := fnv.New64a()
	h.Write(raw)
	return existing.GetResourceVersion() + "/" + strconv.FormatUint(h.Sum64(), 16)
}

func (r *Reconciler) executes(cluster string) bool {
	return r.Executes == nil || r.Executes(cluster)
}

// lock serialises the work on one Work between Handoff and Reconcile.
func (r *Reconciler) lock(key types.NamespacedName) func() {
	mu, _ := r.locks.LoadOrStore(key, &sync.Mutex{})
	mu.(*sync.Mutex).Lock()
	return mu.(*sync.Mutex).Unlock
}

// HandoffSlots bounds how many Handoffs run at once; beyond it, new Works
// take the ordinary path through the watch and the statusgate.
const HandoffSlots = 16

// Handoff applies the manifests of a Work the binding controller has just
// created, at once, in a goroutine of its own, instead of waiting for the
// Work to come back through the watch and the queue: the member copy is
// written a watch delivery sooner. It never blocks the caller: when
// HandoffSlots are busy (a burst, slow members) it does nothing. It reports
// nothing either; the Work's own reconcile, which follows from the watch as
// always, reports status and retries failures.
func (r *Reconciler) Handoff(ctx context.Context, w *workv1alpha1.Work) {
	if !strings.HasPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix) || !w.DeletionTimestamp.IsZero() ||
		(w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching) ||
		!r.executes(strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)) {
		return
	}
	select {
	case r.slots <- struct{}{}:
	default:
		return
	}
	go func() {
		defer func() { <-r.slots }()
		r.handoffNow(ctx, w)
	}()
}

func (r *Reconciler) handoffNow(ctx context.Context, w *workv1alpha1.Work) {
	key := client.ObjectKeyFromObject(w)
	defer r.lock(key)()
	m, err := r.Members.Get(ctx, strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix))
	if err != nil {
		return
	}
	log.FromContext(ctx).V(1).Info("Handoff", "work", klog.KObj(w))
	start := time.Now()
	var errs []error
	for i, raw := range w.Spec.Workload.Manifests {
		desired := &unstructured.Unstructured{}
		if err := desired.UnmarshalJSON(raw.Raw); err != nil {
			errs = append(errs, err)
			continue
		}
		_, _, isNew, err := r.apply(ctx, m, w, i, desired)
		if isNew {
			r.handoff.Store(key, reconciler.Clock(r.Clock).Now())
		}
		if err != nil {
			errs = append(errs, err)
		}
	}
	// A sync of the Work's manifests like any other (the Work's own
	// reconcile, which follows, is one more); a conflict is retried there.
	if !(applied{errs: errs}).conflict() {
		metrics.ObserveWorkSyncWorkload(errors.Join(errs...), time.Since(start))
	}
}

// SetupWithManager registers the controller and hooks the member informers.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.MemberChanges == nil {
		r.MemberChanges = make(chan event.GenericEvent, 4096)
	}
	r.wakeup = statusgate.NewWakeup()
	r.slots = make(chan struct{}, HandoffSlots)
	if r.MemberInitial == nil {
		r.MemberInitial = make(chan event.GenericEvent, 4096)
	}
	r.Members.OnManagedObjectChange = func(cluster string, gvr schema.GroupVersionResource, o metav1.Object, initial bool) {
		r.settle(cluster+"/"+gvr.String()+"/"+objectKey(o), o.GetUID())
		a := o.GetAnnotations()
		ns, name := a[binding.WorkNamespaceAnnotation], a[binding.WorkNameAnnotation]
		if ns == "" || name == "" {
			return
		}
		w := &workv1alpha1.Work{}
		w.Namespace, w.Name = ns, name
		if initial {
			r.MemberInitial <- event.GenericEvent{Object: w}
			return
		}
		r.MemberChanges <- event.GenericEvent{Object: w}
	}
	return ctrl.NewControllerManagedBy(mgr).Named("execution").
		// Its own status reports come back as Work updates; only spec and
		// metadata changes (and deletion, which bumps generation) matter.
		For(&workv1alpha1.Work{}, builder.WithPredicates(predicate.Or(predicate.GenerationChangedPredicate{},
			predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{}))).
		WatchesRawSource(source.Channel(r.MemberChanges, handler.Funcs{
			// A new member object reports status several times within
			// moments; gathering them writes the Work's status once. Below
			// Works to apply: under a sustained burst a Work created last
			// must not wait behind the status of every copy made before it.
			GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				queue.AddStatus(q, StatusDelay, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
			},
		})).
		// What a member informer's first list finds only re-checks Works
		// that are usually right already: low priority, behind real changes.
		WatchesRawSource(source.Channel(r.MemberInitial, handler.Funcs{
			GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				queue.AddInitial(q, StatusDelay, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(e.Object)})
			},
		})).
		WatchesRawSource(r.wakeup.Source()).
		WithOptions(queue.Options(mgr, 16)).
		Complete(r)
}

// Reconcile converges one Work with its member cluster.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if !strings.HasPrefix(req.Namespace, clusterv1alpha1.ExecutionSpacePrefix) {
		return ctrl.Result{}, nil
	}
	cluster := strings.TrimPrefix(req.Namespace, clusterv1alpha1.ExecutionSpacePrefix)
	defer r.lock(req.NamespacedName)()
	w := &workv1alpha1.Work{}
	if err := r.Client.Get(ctx, req.NamespacedName, w); err != nil {
		r.locks.Delete(req.NamespacedName)
		r.handoff.Delete(req.NamespacedName)
		if apierrors.IsNotFound(err) {
			r.Board.Forget(req.Namespace, req.Name)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	suspended := w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching
	if suspended && !controllerutil.ContainsFinalizer(w, Finalizer) {
		// Karmada's spec.suspendDispatching: nothing of this Work is
		// applied. A Work born suspended (one that records what a member
		// has, such as a collected EndpointSlice) is never this
		// controller's, so its deletion removes nothing from the member.
		return ctrl.Result{}, nil
	}
	if !r.executes(cluster) {
		// Another process (the cluster's agent) applies this Work. Only a
		// Work of a cluster being unjoined, whose agent no longer reports
		// it Ready, is released here, leaving the member's objects: no
		// one else would.
		if !w.DeletionTimestamp.IsZero() && r.leaving(ctx, cluster) && !r.ready(ctx, cluster) && controllerutil.RemoveFinalizer(w, Finalizer) {
			return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, w))
		}
		return ctrl.Result{}, nil
	}
	if !w.DeletionTimestamp.IsZero() {
		r.Board.Forget(w.Namespace, w.Name)
		return r.finalize(ctx, cluster, w)
	}
	if suspended {
		// Applied before, perhaps; changes wait until dispatching resumes. Nothing is done
		// outside the Work (its own Dispatching condition only), so no finalizer is needed
		// yet: a collected EndpointSlice's Work is suspended for good and never gets one.
		return ctrl.Result{}, r.reportSuspended(ctx, w)
	}
	if controllerutil.AddFinalizer(w, Finalizer) {
		if err := r.Client.Update(ctx, w); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to Work %s: %w", client.ObjectKeyFromObject(w), err)
		}
	}
	start := time.Now()
	m, err := r.Members.Get(ctx, cluster)
	if err != nil {
		err = fmt.Errorf("cannot reach cluster %s: %w", cluster, err)
		metrics.ObserveWorkSyncWorkload(err, time.Since(start))
		return r.report(ctx, w, nil, err)
	}
	res := r.applyAll(ctx, m, w)
	if res.conflict() {
		// Someone else wrote a member object between our read and our
		// write (its controllers, or a person): retry on a fresh read
		// instead of reporting a failure that is not one.
		return ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil
	}
	metrics.ObserveWorkSyncWorkload(errors.Join(res.errs...), time.Since(start))
	if wait := res.firstReportWait(w, reconciler.Clock(r.Clock).Now()); wait > 0 {
		// A new object has no status yet and its controllers fill it in
		// within moments: the first report waits for them (the member
		// object's change events wake this Work up), so the Work's status
		// is written once instead of once per controller step. Members
		// without controllers never change it: they are reported once the
		// grace is over. Meanwhile status aggregation reads what the
		// member shows now from the board, so a binding's FullyApplied
		// does not wait for the grace (on members without controllers,
		// the report is already final).
		provisional := &workv1alpha1.Work{ObjectMeta: w.ObjectMeta, Status: *w.Status.DeepCopy()}
		setReport(provisional, res.statuses, nil)
		r.Board.Post(provisional)
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	r.reportInterpretations(w, res.reflected)
	return r.report(ctx, w, res.statuses, errors.Join(res.errs...))
}

// applied is what applying a Work's manifests found: each manifest's
// reflected status, the errors, whether the member's controllers have
// observed every object, and when the objects were created.
type applied struct {
	statuses []workv1alpha1.ManifestStatus
	// reflected holds the statuses with the outcomes of the
	// interpretations that made them.
	reflected []reflected
	errs      []error
	settled   bool
	createdAt time.Time
}

// applyAll applies every manifest of w to member m.
func (r *Reconciler) applyAll(ctx context.Context, m *registry.Member, w *workv1alpha1.Work) applied {
	// When the member objects were created: precisely when this process
	// created them (here or in Handoff), else the Work's creation
	// timestamp, which has whole seconds (timing first reports from it
	// would fire every Work's report at the top of a second).
	res := applied{settled: true, createdAt: w.CreationTimestamp.Time}
	if at, ok := r.handoff.LoadAndDelete(client.ObjectKeyFromObject(w)); ok {
		res.createdAt = at.(time.Time)
	}
	for i, raw := range w.Spec.Workload.Manifests {
		desired := &unstructured.Unstructured{}
		if err := desired.UnmarshalJSON(raw.Raw); err != nil {
			// Only a new Work can mend it: not retried (rejectedError).
			res.errs = append(res.errs, &rejectedError{fmt.Errorf("manifest %d is not a Kubernetes object: %w", i, err)})
			continue
		}
		st, observed, isNew, err := r.apply(ctx, m, w, i, desired)
		res.settled = res.settled && observed
		if isNew {
			res.createdAt = reconciler.Clock(r.Clock).Now()
		}
		if err != nil {
			res.errs = append(res.errs, err)
		}
		if st != nil {
			res.statuses = append(res.statuses, st.ManifestStatus)
			res.reflected = append(res.reflected, *st)
		}
	}
	return res
}

// conflict reports an optimistic-lock conflict among the errors.
func (a applied) conflict() bool {
	for _, err := range a.errs {
		if apierrors.IsConflict(err) {
			return true
		}
	}
	return false
}

// firstReportWait is how long w's first status report should still wait
// for the member's controllers to observe new objects: 0 once they have,
// once w has reported before, on errors, or after FirstReportGrace.
func (a applied) firstReportWait(w *workv1alpha1.Work, now time.Time) time.Duration {
	if len(a.errs) > 0 || a.settled || meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied) != nil {
		return 0
	}
	return max(0, FirstReportGrace-now.Sub(a.createdAt))
}

// TerminatingRetry is how soon a Work whose member namespace is being
// deleted is tried again (it is normally deleted with its namespace first).
const TerminatingRetry = 2 * time.Second

// rejectedError is a member's refusal of a manifest as invalid (a field
// that is immutable there, a value its validation forbids): retrying the
// same write cannot succeed.
type rejectedError struct{ err error }

func (e *rejectedError) Error() string { return e.err.Error() }
func (e *rejectedError) Unwrap() error { return e.err }

// allRejected reports whether every error joined in err is a rejectedError.
func allRejected(err error) bool {
	if joined, ok := err.(interface{ Unwrap() []error }); ok {
		for _, e := range joined.Unwrap() {
			if !allRejected(e) {
				return false
			}
		}
		return true
	}
	var rej *rejectedError
	return errors.As(err, &rej)
}

// permanent reports a member's refusal that no retry of the same write can
// change.
func permanent(err error) bool {
	return apierrors.IsInvalid(err) || apierrors.IsBadRequest(err) || apierrors.IsRequestEntityTooLargeError(err)
}

// syncWorkload is the operation whose outcome the execution controller
// reports, on the Work and its resource template.
var syncWorkload = eventrecord.Operation{Succeed: events.SyncSucceed, Failed: events.SyncFailed}

// templateOf returns the resource template of a Work's first manifest as an
// object events can be raised on (nil when it cannot be told: a namespace
// Work, or no template uid), and the manifest's namespace/name.
func templateOf(w *workv1alpha1.Work) (runtime.Object, string) {
	if len(w.Spec.Workload.Manifests) == 0 {
		return nil, ""
	}
	m := &unstructured.Unstructured{}
	if err := m.UnmarshalJSON(w.Spec.Workload.Manifests[0].Raw); err != nil {
		return nil, ""
	}
	name := objectKey(m)
	uid := m.GetAnnotations()[binding.TemplateUIDAnnotation]
	if uid == "" {
		return nil, name
	}
	ref := &unstructured.Unstructured{}
	ref.SetAPIVersion(m.GetAPIVersion())
	ref.SetKind(m.GetKind())
	ref.SetNamespace(m.GetNamespace())
	ref.SetName(m.GetName())
	ref.SetUID(types.UID(uid))
	return ref, name
}

// setReport sets in w's status what applying it found: the Applied
// condition (at w's generation; False with applyErr's message on failure),
// Dispatching, and the manifest statuses (kept as they were when a
// failure left none). It returns whether dispatching resumed.
func setReport(w *workv1alpha1.Work, statuses []workv1alpha1.ManifestStatus, applyErr error) (resumed bool) {
	cond := metav1.Condition{Type: workv1alpha1.WorkApplied, Status: metav1.ConditionTrue, Reason: workv1alpha1.WorkAppliedSuccessfulReason,
		Message: "Manifest has been successfully applied", ObservedGeneration: w.Generation}
	if applyErr != nil {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.WorkAppliedFailedReason, applyErr.Error()
	}
	meta.SetStatusCondition(&w.Status.Conditions, cond)
	_, resumed = setDispatching(w, false)
	if statuses != nil || applyErr == nil {
		w.Status.ManifestStatuses = statuses
	}
	return resumed
}

// report writes the Applied condition and manifest statuses when they changed.
func (r *Reconciler) report(ctx context.Context, w *workv1alpha1.Work, statuses []workv1alpha1.ManifestStatus, applyErr error) (ctrl.Result, error) {
	before := w.Status.DeepCopy()
	// A namespace being deleted in the member (its template's namespace is
	// being deleted too) refuses new objects for a moment; the Work goes
	// with it, so that is not worth a Warning.
	if !apierrors.HasStatusCause(applyErr, corev1.NamespaceTerminatingCause) {
		cluster := strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)
		tmpl, name := templateOf(w)
		evErr := applyErr
		if evErr != nil {
			// The template's events come from every cluster: say which.
			evErr = fmt.Errorf("failed to apply resource(%s) to cluster %s: %w", name, cluster, applyErr)
		}
		r.Events.Outcome(syncWorkload, evErr, "Successfully applied resource("+name+") to cluster "+cluster, w, tmpl)
	}
	resumed := setReport(w, statuses, applyErr)
	if !equality.Semantic.DeepEqual(before, &w.Status) {
		// A staged rollout's Works report at once: their health is what
		// the next wave waits for.
		if _, staged := w.Annotations[rollout.StrategyWorkAnnotation]; applyErr == nil && !staged {
			key := &workv1alpha1.Work{}
			key.Namespace, key.Name = w.Namespace, w.Name
			if r.Gate.Park(statusgate.WorkReportKey(w.Namespace, w.Name), r.wakeup.Release(key)) {
				// Status aggregation reads it from the board meanwhile.
				r.Board.Post(w)
				log.FromContext(ctx).V(1).Info("Status report parked", "work", klog.KObj(w))
				// Propagation is busy: report once it pauses (failures
				// are reported at once).
				return ctrl.Result{}, nil
			}
		}
		// A full update with the read resourceVersion, not a patch: the
		// API server then skips serialising the stored Work to apply a
		// patch to it, which made status reports its costliest request.
		// Only this controller writes Work status; a conflict means the
		// binding controller changed the spec, and the retry reads it.
		if err := r.Client.Status().Update(ctx, w); apierrors.IsConflict(err) {
			return reconciler.Result(ctrl.Result{}, err)
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("write status of Work %s/%s: %w", w.Namespace, w.Name, err)
		}
		// Until the status controller's cache has this write, the board
		// stands in for it.
		r.Board.Written(w)
		if resumed {
			r.Events.Normal(w, events.WorkDispatching, workv1alpha1.WorkDispatchingMessage)
		}
	} else {
		// What the Work says is current: a report parked earlier is not.
		r.Board.Forget(w.Namespace, w.Name)
	}
	if apierrors.HasStatusCause(applyErr, corev1.NamespaceTerminatingCause) {
		// The Work goes with the namespace in a moment; no error to log.
		return ctrl.Result{RequeueAfter: TerminatingRetry}, nil
	}
	if applyErr != nil && !allRejected(applyErr) {
		// Missing namespaces and unreachable members are retried with
		// per-Work exponential back-off (the error is returned for it); a
		// fix on either side converges without user action. A manifest the
		// member refused as invalid is not: the same write would be
		// refused again. It is tried again when the Work or the member
		// object changes.
		return ctrl.Result{}, fmt.Errorf("apply Work %s/%s: %w", w.Namespace, w.Name, applyErr)
	}
	// Every failure was a refusal only a change of the Work or of the member's object can
	// mend: reported in the Applied condition, logged once, not retried.
	return ctrl.Result{}, reconciler.Terminal(applyErr)
}

// reportSuspended writes the Dispatching condition of a Work whose
// dispatching is suspended (False, SuspendDispatching) and raises Karmada's
// WorkDispatching event when that is a change.
func (r *Reconciler) reportSuspended(ctx context.Context, w *workv1alpha1.Work) error {
	changed, news := setDispatching(w, true)
	if !changed {
		return nil
	}
	if err := r.Client.Status().Update(ctx, w); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("write status of Work %s/%s: %w", w.Namespace, w.Name, err))
	}
	if news {
		r.Events.Normal(w, events.WorkDispatching, workv1alpha1.WorkSuspendDispatchingMessage)
	}
	return nil
}

// setDispatching sets w's Dispatching condition (Karmada's): False with
// SuspendDispatching while suspended, else True with Dispatching. It
// reports whether the condition changed, and whether that is worth
// Karmada's WorkDispatching event: it changed status, or appeared False. A Work that was never
// suspended gets its condition True with its first status report, in the
// same write, and no event (Karmada raises one per Work; at thousands of
// Works a burst's event writes would double).
func setDispatching(w *workv1alpha1.Work, suspended bool) (changed, news bool) {
	cond := metav1.Condition{Type: workv1alpha1.WorkDispatching, Status: metav1.ConditionTrue,
		Reason: workv1alpha1.WorkDispatchingReason, Message: workv1alpha1.WorkDispatchingMessage}
	if suspended {
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha1.WorkSuspendDispatchingReason, workv1alpha1.WorkSuspendDispatchingMessage
	}
	prev := meta.FindStatusCondition(w.Status.Conditions, cond.Type)
	if prev != nil && prev.Status == cond.Status && prev.Reason == cond.Reason && prev.Message == cond.Message {
		return false, false
	}
	news = (prev != nil && prev.Status != cond.Status) || (prev == nil && suspended)
	meta.SetStatusCondition(&w.Status.Conditions, cond)
	return true, news
}

// apply creates or updates one manifest and returns its reflected status,
// whether the member's controllers have observed it (false for an object
// created just now), and whether it was created just now.
func (r *Reconciler) apply(ctx context.Context, m *registry.Member, w *workv1alpha1.Work, ordinal int, desired *unstructured.Unstructured) (st *reflected, observed, created bool, err error) {
	gvk := desired.GroupVersionKind()
	mapping, err := m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if meta.IsNoMatchError(err) {
		m.Mapper.Reset()
		mapping, err = m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	}
	switch {
	case meta.IsNoMatchError(err):
		return nil, false, false, fmt.Errorf("%s %s: cluster %s does not serve this kind: %w", gvk.Kind, desired.GetName(), m.Name, err)
	case err != nil:
		return nil, false, false, fmt.Errorf("%s %s: cannot reach cluster %s to look up the kind: %w", gvk.Kind, desired.GetName(), m.Name, err)
	}
	informer := r.Members.Watch(m, mapping.Resource)
	rc := resourceClient(m.Dynamic, mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, desired.GetNamespace())
	existing, err := r.current(ctx, informer, rc, desired, freshKey(m.Name, mapping.Resource, desired))
	var result *unstructured.Unstructured
	isNew := false
	if apierrors.IsNotFound(err) {
		done := r.Gate.Write()
		result, err = rc.Create(ctx, desired, metav1.CreateOptions{FieldManager: "flotilla"})
		done()
		switch {
		case err == nil:
			isNew = true
			log.FromContext(ctx).V(1).Info("Created member object", "work", klog.KObj(w), "cluster", m.Name, "kind", gvk.Kind, "object", klog.KObj(desired))
			if r.ReadYourWrites {
				r.remember(informer, freshKey(m.Name, mapping.Resource, desired), result)
			}
		case apierrors.IsAlreadyExists(err):
			existing, err = rc.Get(ctx, desired.GetName(), metav1.GetOptions{})
		case permanent(err):
			return nil, false, false, &rejectedError{fmt.Errorf("create %s %s: %w", gvk.Kind, objectKey(desired), err)}
		default:
			return nil, false, false, fmt.Errorf("create %s %s: %w", gvk.Kind, objectKey(desired), err)
		}
	}
	switch {
	case isNew:
	case err != nil:
		return nil, false, false, fmt.Errorf("get %s %s: %w", gvk.Kind, objectKey(desired), err)
	case !ownedBy(existing, w) && desired.GetAnnotations()[policymatch.ConflictResolutionAnnotation] != policymatch.ConflictResolutionOverwrite:
		return nil, false, false, fmt.Errorf("%s %s already exists in cluster %s and is not managed by Flotilla; set conflictResolution: Overwrite on the policy (or annotate the template %s=overwrite) to take it over",
			gvk.Kind, objectKey(desired), m.Name, policymatch.ConflictResolutionAnnotation)
	default:
		var inSync bool
		if inSync, err = InSync(ctx, r.Interpreter, desired, existing); err != nil {
			return nil, false, false, fmt.Errorf("compare %s %s with the member's copy: %w", gvk.Kind, objectKey(desired), err)
		}
		if inSync {
			result = existing
			break
		}
		if result, err = r.update(ctx, m, rc, w, freshKey(m.Name, mapping.Resource, desired), desired, existing); err != nil {
			return nil, false, false, err
		}
	}
	rs := reflectManifest(ctx, r.Interpreter, m.Name, workv1alpha1.ResourceIdentifier{Ordinal: ordinal, Group: gvk.Group, Version: gvk.Version, Kind: gvk.Kind,
		Resource: mapping.Resource.Resource, Namespace: desired.GetNamespace(), Name: desired.GetName()}, result)
	return &rs, !isNew && native.Observed(result), isNew, nil
}

// updateRetaining sends existing, the member's copy, updated to desired with
// the fields the member owns retained (Merge).
func updateRetaining(ctx context.Context, in *interpreter.Interpreter, rc dynamic.ResourceInterface, desired, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	merged, err := Merge(ctx, in, desired, existing)
	if err != nil {
		return nil, err
	}
	return rc.Update(ctx, merged, metav1.UpdateOptions{FieldManager: "flotilla"})
}

// update sends the member's copy, existing, updated to desired with the
// member-owned fields retained. An update the member refused as invalid is
// not sent again while neither side has changed (rejected, under key); the
// error is then a *rejectedError.
func (r *Reconciler) update(ctx context.Context, m *registry.Member, rc dynamic.ResourceInterface, w *workv1alpha1.Work, key string, desired, existing *unstructured.Unstructured) (*unstructured.Unstructured, error) {
	gvk := desired.GroupVersionKind()
	attempt := rejectionKey(existing, desired)
	if prev, ok := r.rejected.Load(key); ok && prev.(rejection).key == attempt {
		// Refused before, and neither side has changed since.
		return nil, &rejectedError{prev.(rejection).err}
	}
	done := r.Gate.Write()
	result, err := updateRetaining(ctx, r.Interpreter, rc, desired, existing)
	if apierrors.IsConflict(err) {
		// The informer copy was stale; retry once on a fresh read.
		if existing, err = rc.Get(ctx, desired.GetName(), metav1.GetOptions{}); err == nil {
			result, err = updateRetaining(ctx, r.Interpreter, rc, desired, existing)
		}
	}
	done()
	if err != nil {
		err = fmt.Errorf("update %s %s: %w", gvk.Kind, objectKey(desired), err)
		if permanent(err) {
			r.rejected.Store(key, rejection{key: attempt, err: err})
			return nil, &rejectedError{err}
		}
		return nil, err
	}
	r.rejected.Delete(key)
	log.FromContext(ctx).V(1).Info("Updated member object", "work", klog.KObj(w), "cluster", m.Name, "kind", gvk.Kind, "object", klog.KObj(desired))
	return result, nil
}

// current returns the member object. It is read from the managed-object
// informer when that has synced; an object missing there is normally one
// not created yet, so it is reported NotFound without a round trip, and the
// create that follows settles it: AlreadyExists (an object Flotilla does not
// manage yet, or one the informer has not delivered) falls back to a live
// read. Before the informer has synced every read is live.
//
// An object this controller created moments ago (fresh, under freshKey) may
// not be in the informer yet: until the informer delivers any event of that
// object (the same uid: its creation, or a later change or deletion), the
// created object stands in, so the Work's next reconcile does not create it
// again. From then on the informer is authoritative, deletion included.
func (r *Reconciler) current(ctx context.Context, informer cache.SharedIndexInformer, rc dynamic.ResourceInterface, desired *unstructured.Unstructured, freshKey string) (*unstructured.Unstructured, error) {
	if informer.HasSynced() {
		if v, recent := r.fresh.Load(freshKey); recent {
			return v.(*unstructured.Unstructured), nil
		}
		item, ok, err := informer.GetStore().GetByKey(objectKey(desired))
		if err == nil && ok {
			return item.(*unstructured.Unstructured), nil
		}
		if err == nil {
			return nil, apierrors.NewNotFound(schema.GroupResource{}, desired.GetName())
		}
	}
	return rc.Get(ctx, desired.GetName(), metav1.GetOptions{})
}

// remember keeps an object just created as its stand-in until the informer
// delivers it (see current and settle). The informer's store is updated
// before its handlers run, so an event that came before the stand-in was
// stored is caught by looking at the store once it is.
func (r *Reconciler) remember(informer cache.SharedIndexInformer, key string, created *unstructured.Unstructured) {
	r.fresh.Store(key, created)
	if item, ok, err := informer.GetStore().GetByKey(objectKey(created)); err == nil && ok {
		if o, isObj := item.(metav1.Object); isObj {
			r.settle(key, o.GetUID())
		}
	}
}

// settle drops the stand-in under key once the informer has an event of the
// same object (uids are compared; resource versions are opaque and are not).
func (r *Reconciler) settle(key string, uid types.UID) {
	if v, ok := r.fresh.Load(key); ok && v.(*unstructured.Unstructured).GetUID() == uid {
		r.fresh.CompareAndDelete(key, v)
	}
}

// objectKey is an object's informer store key: namespace/name, or name.
func objectKey(o metav1.Object) string {
	if o.GetNamespace() == "" {
		return o.GetName()
	}
	return o.GetNamespace() + "/" + o.GetName()
}

// freshKey identifies a member object across clusters and kinds.
func freshKey(cluster string, gvr schema.GroupVersionResource, o *unstructured.Unstructured) string {
	return cluster + "/" + gvr.String() + "/" + objectKey(o)
}

func resourceClient(d dynamic.Interface, gvr schema.GroupVersionResource, namespaced bool, ns string) dynamic.ResourceInterface {
	if namespaced {
		return d.Resource(gvr).Namespace(ns)
	}
	return d.Resource(gvr)
}

// ownedBy reports whether the member object was created or adopted by this
// Work: it carries the managed label and names the Work.
func ownedBy(obj *unstructured.Unstructured, w *workv1alpha1.Work) bool {
	a := obj.GetAnnotations()
	return obj.GetLabels()[registry.ManagedLabel] == "true" &&
		a[binding.WorkNameAnnotation] == w.Name && a[binding.WorkNamespaceAnnotation] == w.Namespace
}

// finalize removes the Work's objects from the member (unless
// preserveResourcesOnDeletion), then releases the Work. A member that no
// longer exists has nothing to clean.
func (r *Reconciler) finalize(ctx context.Context, cluster string, w *workv1alpha1.Work) (ctrl.Result, error) {
	if !controllerutil.ContainsFinalizer(w, Finalizer) {
		return ctrl.Result{}, nil
	}
	preserve := w.Spec.PreserveResourcesOnDeletion != nil && *w.Spec.PreserveResourcesOnDeletion
	orphan := r.leaving(ctx, cluster) && r.orphaning(ctx, cluster)
	if (preserve || orphan) && (!r.leaving(ctx, cluster) || r.ready(ctx, cluster)) {
		// The copies stay, as Karmada leaves them: without its marks, so
		// that they are the member's own from now on and a later join or
		// policy does not silently take them back.
		if err := r.releaseManifests(ctx, cluster, w); err != nil && !r.leaving(ctx, cluster) {
			return ctrl.Result{}, err
		}
	}
	if !preserve && !(r.leaving(ctx, cluster) && (!r.ready(ctx, cluster) || r.orphaning(ctx, cluster))) {
		m, err := r.Members.Get(ctx, cluster)
		switch {
		case apierrors.IsNotFound(errors.Unwrap(err)) || apierrors.IsNotFound(err):
		case err != nil:
			return ctrl.Result{}, err
		default:
			for _, raw := range w.Spec.Workload.Manifests {
				if err := r.deleteManifest(ctx, m, w, raw.Raw); err != nil {
					if r.leaving(ctx, cluster) {
						break // an unjoined cluster that cannot be reached keeps its objects
					}
					return ctrl.Result{}, err
				}
			}
		}
	}
	controllerutil.RemoveFinalizer(w, Finalizer)
	r.StatusEvents.Forget(w)
	return ctrl.Result{}, client.IgnoreNotFound(r.Client.Update(ctx, w))
}

// orphaning reports a cluster unjoined with clusterv1alpha1.OrphanResourcesAnnotation: its
// objects stay in the member.
func (r *Reconciler) orphaning(ctx context.Context, name string) bool {
	c := &clusterv1alpha1.Cluster{}
	return r.Client.Get(ctx, client.ObjectKey{Name: name}, c) == nil && c.Annotations[clusterv1alpha1.OrphanResourcesAnnotation] == "true"
}

// leaving reports a cluster being unjoined. If it cannot be reached, its
// objects cannot be removed, and waiting would hold its Works, execution
// namespace and Cluster forever; they are released instead.
func (r *Reconciler) leaving(ctx context.Context, name string) bool {
	c := &clusterv1alpha1.Cluster{}
	return r.Client.Get(ctx, client.ObjectKey{Name: name}, c) == nil && !c.DeletionTimestamp.IsZero()
}

func (r *Reconciler) ready(ctx context.Context, name string) bool {
	c := &clusterv1alpha1.Cluster{}
	return r.Client.Get(ctx, client.ObjectKey{Name: name}, c) == nil && meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady)
}

// releasedLabels and releasedAnnotations are the marks Karmada removes from
// a member object it leaves behind (preserveResourcesOnDeletion, or an
// unjoin that orphans): what ties it to a template, a binding, a policy
// and a Work.
var (
	releasedLabels = []string{registry.ManagedLabel, binding.PermanentIDLabel, binding.ClusterPermanentIDLabel, mcs.WorkIDLabel,
		policymatch.PropagationPolicyPermanentIDLabel, policymatch.ClusterPropagationPolicyPermanentIDLabel}
	releasedAnnotations = []string{binding.ManagedLabelsAnnotation, binding.ManagedAnnotationsAnnotation,
		binding.NameAnnotation, binding.NamespaceAnnotation, binding.ClusterNameAnnotation, binding.TemplateUIDAnnotation,
		native.ResourceTemplateGenerationAnnotation, binding.WorkNameAnnotation, binding.WorkNamespaceAnnotation,
		policymatch.PropagationPolicyNameAnnotation, policymatch.PropagationPolicyNamespaceAnnotation,
		policymatch.ClusterPropagationPolicyNameAnnotation}
)

// releaseManifests removes releasedLabels and releasedAnnotations from the
// member objects of w that this Work manages, leaving the objects in place.
// Errors: the member cannot be reached or refuses the patch.
func (r *Reconciler) releaseManifests(ctx context.Context, cluster string, w *workv1alpha1.Work) error {
	m, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return err
	}
	for _, raw := range w.Spec.Workload.Manifests {
		if err := r.releaseManifest(ctx, m, w, raw.Raw); err != nil {
			return err
		}
	}
	return nil
}

func (r *Reconciler) releaseManifest(ctx context.Context, m *registry.Member, w *workv1alpha1.Work, raw []byte) error {
	desired, rc, resource, existing, err := ownedObject(ctx, m, w, raw)
	if err != nil || existing == nil {
		return err
	}
	patch := releasePatch(existing)
	if patch == nil {
		return nil
	}
	r.fresh.Delete(freshKey(m.Name, resource, desired))
	done := r.Gate.Write()
	_, err = rc.Patch(ctx, desired.GetName(), types.MergePatchType, patch, metav1.PatchOptions{})
	done()
	return client.IgnoreNotFound(err)
}

// ownedObject reads, in member m, the object a manifest of Work w
// describes: the manifest decoded, a client of its resource, the resource,
// and the member's object when this Work manages it (ownedBy); existing is
// nil when the member has no such object, Flotilla does not manage it, or
// the manifest is not something Flotilla could have created. Errors: the
// member did not answer.
func ownedObject(ctx context.Context, m *registry.Member, w *workv1alpha1.Work, raw []byte) (desired *unstructured.Unstructured, rc dynamic.ResourceInterface,
	resource schema.GroupVersionResource, existing *unstructured.Unstructured, err error) {
	desired = &unstructured.Unstructured{}
	if json.Unmarshal(raw, &desired.Object) != nil {
		return desired, nil, resource, nil, nil
	}
	gvk := desired.GroupVersionKind()
	mapping, merr := m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if merr != nil {
		return desired, nil, resource, nil, nil
	}
	rc = resourceClient(m.Dynamic, mapping.Resource, mapping.Scope.Name() == meta.RESTScopeNameNamespace, desired.GetNamespace())
	got, err := rc.Get(ctx, desired.GetName(), metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return desired, rc, mapping.Resource, nil, nil
	}
	if err != nil {
		return desired, rc, mapping.Resource, nil, err
	}
	if !ownedBy(got, w) {
		return desired, rc, mapping.Resource, nil, nil // another Work's, or the member's own
	}
	return desired, rc, mapping.Resource, got, nil
}

// releasePatch is the JSON merge patch that removes, of releasedLabels
// and releasedAnnotations, those obj carries; nil when it carries none.
func releasePatch(obj *unstructured.Unstructured) []byte {
	drop := func(have map[string]string, keys []string) map[string]any {
		out := map[string]any{}
		for _, k := range keys {
			if _, ok := have[k]; ok {
				out[k] = nil
			}
		}
		return out
	}
	labels, annotations := drop(obj.GetLabels(), releasedLabels), drop(obj.GetAnnotations(), releasedAnnotations)
	if len(labels) == 0 && len(annotations) == 0 {
		return nil
	}
	md := map[string]any{}
	if len(labels) > 0 {
		md["labels"] = labels
	}
	if len(annotations) > 0 {
		md["annotations"] = annotations
	}
	patch, _ := json.Marshal(map[string]any{"metadata": md})
	return patch
}

func (r *Reconciler) deleteManifest(ctx context.Context, m *registry.Member, w *workv1alpha1.Work, raw []byte) error {
	desired, rc, resource, existing, err := ownedObject(ctx, m, w, raw)
	if err != nil || existing == nil {
		return err // never delete what Flotilla does not manage
	}
	uid := existing.GetUID()
	r.fresh.Delete(freshKey(m.Name, resource, desired))
	done := r.Gate.Write()
	err = rc.Delete(ctx, desired.GetName(), metav1.DeleteOptions{Preconditions: &metav1.Preconditions{UID: &uid}})
	done()
	if apierrors.IsNotFound(err) || apierrors.IsConflict(err) {
		return nil
	}
	return err
}
