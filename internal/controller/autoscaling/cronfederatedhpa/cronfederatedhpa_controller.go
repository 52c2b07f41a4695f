// Package cronfederatedhpa runs CronFederatedHPA rules: at each rule's
// scheduled time it sets the replicas of the target workload's scale
// subresource (targetReplicas), or the minReplicas and maxReplicas of the
// target FederatedHPA (targetMinReplicas, targetMaxReplicas), and records
// the run in status.executionHistories. Karmada's cronFederatedHorizontal-
// PodAutoscaler controller does the same.
//
// Runs are timed, not polled: each object holds one timer for its earliest
// next run, on an injectable clock. What Flotilla adds to Karmada's
// behaviour: a run missed while the controller was down (restart, leader
// change) is made up once at start-up, if it is no older than
// MissedRunWindow, and recorded with its original scheduleTime; and a
// workload also managed by a FederatedHPA gets a Warning event.
package cronfederatedhpa

import (
	"context"
	"sync"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
)

// ControllerName is the controller's name in --controllers, Karmada's.
const ControllerName = "cronFederatedHorizontalPodAutoscaler"

// DefaultMissedRunWindow is the default of
// --cronfederatedhpa-missed-run-window.
const DefaultMissedRunWindow = 5 * time.Minute

// maxConcurrentRuns is how many objects run their rules at once. A run is
// one or two API writes and mostly waits on the API server, so many
// CronFederatedHPAs due at the same minute are served in parallel.
const maxConcurrentRuns = 64

// Reconciler is the CronFederatedHPA controller.
type Reconciler struct {
	// Client reads CronFederatedHPAs and FederatedHPAs (cached) and writes
	// their status and bounds.
	Client client.Client
	// Dynamic and Mapper reach the scale subresource of any kind.
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// Recorder receives Karmada's events: StartRuleFailed, ScaleFailed,
	// UpdateCronFederatedHPAFailed, and ScaleTargetConflict.
	Recorder record.EventRecorder
	// Clock times the runs; nil means the real clock.
	Clock clock.WithDelayedExecution
	// Location is the zone of rules without a timeZone; nil means the
	// process's local zone (time.Local), as in Karmada.
	Location *time.Location
	// MissedRunWindow is how old a run missed while the controller was down
	// may be and still be made up at start-up; 0 makes up none.
	MissedRunWindow time.Duration
	// Gate puts propagation first: scaling a target counts as a
	// propagation write, and the execution history waits while
	// propagation is busy (at most statusgate.StatusMaxDefer), so that a
	// thousand rules due at one minute scale their targets first. nil
	// writes the history at once.
	Gate *statusgate.Gate

	mu      sync.Mutex
	objects map[types.NamespacedName]*objectState
	// wake receives timer wake-ups and gate releases.
	wake    statusgate.Wakeup
	stopped chan struct{}
}

// objectState is what the controller remembers of one CronFederatedHPA.
type objectState struct {
	rules map[string]*ruleState
	// pending are runs whose outcome is not in the status yet.
	pending []outcome
	timer   clock.Timer
	// warned is the conflict last reported ("" for none).
	warned string
}

// SetupWithManager registers the controller. Spec changes and timer
// wake-ups trigger a reconcile; status and metadata edits do not.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	if r.Location == nil {
		r.Location = time.Local
	}
	r.objects = map[types.NamespacedName]*objectState{}
	r.wake = statusgate.NewWakeup()
	r.stopped = make(chan struct{})
	if err := mgr.Add(manager.RunnableFunc(func(ctx context.Context) error {
		<-ctx.Done()
		close(r.stopped)
		r.forgetAll()
		return nil
	})); err != nil {
		return err
	}
	return ctrl.NewControllerManagedBy(mgr).Named("cronfederatedhpa").
		For(&autoscalingv1alpha1.CronFederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WatchesRawSource(r.wake.Source()).
		// A FederatedHPA created (or re-pointed) after a CronFederatedHPA on
		// the same workload: warn now, not at the next run.
		Watches(&autoscalingv1alpha1.FederatedHPA{}, handler.EnqueueRequestsFromMapFunc(r.sameTarget),
			builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(queue.Options(mgr, maxConcurrentRuns)).
		Complete(r)
}

// Reconcile plans the object's rules, runs the due ones, writes the status
// and arms the timer for the next run.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (res ctrl.Result, err error) {
	start := reconciler.Clock(r.Clock).Now()
	defer func() { metrics.ObserveCronFederatedHPAProcess(err, reconciler.Clock(r.Clock).Since(start)) }()
	obj := &autoscalingv1alpha1.CronFederatedHPA{}
	if err := r.Client.Get(ctx, req.NamespacedName, obj); err != nil {
		if apierrors.IsNotFound(err) {
			r.forget(req.NamespacedName)
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if obj.DeletionTimestamp != nil {
		r.forget(req.NamespacedName)
		return ctrl.Result{}, nil
	}
	st, firstSight := r.state(req.NamespacedName)
	r.plan(ctx, obj, st, firstSight)
	r.runDue(ctx, obj, st)
	r.checkConflict(ctx, obj, st)

	want := desiredStatus(obj, st.rules, st.pending)
	if !equality.Semantic.DeepEqual(want, obj.Status) {
		if r.Gate.Park("cronfederatedhpa/"+req.String(), r.wake.Release(wakeObject(req.NamespacedName))) {
			r.arm(req.NamespacedName, st)
			return ctrl.Result{}, nil
		}
		obj.Status = want
		if err := r.Client.Status().Update(ctx, obj); err != nil {
			// The outcomes stay pending and go into the next write.
			if !apierrors.IsConflict(err) {
				r.Recorder.Event(obj, corev1.EventTypeWarning, events.UpdateCronFederatedHPAFailed, "write the execution history: "+err.Error())
			}
			r.arm(req.NamespacedName, st)
			return ctrl.Result{}, err
		}
	}
	st.pending = nil
	r.arm(req.NamespacedName, st)
	return ctrl.Result{}, nil
}

// state returns the object's memory, and whether this is the first time
// this process sees the object.
func (r *Reconciler) state(key types.NamespacedName) (*objectState, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.objects[key]; ok {
		return st, false
	}
	st := &objectState{rules: map[string]*ruleState{}}
	r.objects[key] = st
	return st, true
}

// plan keeps the schedule of unchanged rules and reschedules new and
// changed ones from now. Rules that are gone are dropped with their
// history.
func (r *Reconciler) plan(ctx context.Context, obj *autoscalingv1alpha1.CronFederatedHPA, st *objectState, firstSight bool) {
	recorded := map[string]*time.Time{}
	for _, h := range obj.Status.ExecutionHistories {
		if h.NextExecutionTime != nil {
			t := h.NextExecutionTime.Time
			recorded[h.RuleName] = &t
		}
	}
	now := reconciler.Clock(r.Clock).Now()
	rules := make(map[string]*ruleState, len(obj.Spec.Rules))
	for i := range obj.Spec.Rules {
		rule := &obj.Spec.Rules[i]
		if old := st.rules[rule.Name]; old != nil && old.fingerprint == fingerprint(rule) {
			rules[rule.Name] = old
			continue
		}
		rs := planRule(rule, r.Location, now, recorded[rule.Name], firstSight, r.MissedRunWindow)
		if rs.invalid != "" {
			r.Recorder.Event(obj, corev1.EventTypeWarning, events.StartRuleFailed, rs.invalid)
		} else if firstSight && !rs.next.IsZero() && !rs.next.After(now) {
			klog.FromContext(ctx).Info("Making up a run missed while the controller was down",
				"cronFederatedHPA", klog.KObj(obj), "rule", rule.Name, "scheduleTime", rs.next)
		}
		rules[rule.Name] = rs
	}
	st.rules = rules
}

// runDue runs, in spec order, every rule whose time has come, and moves it
// to its next time after now.
func (r *Reconciler) runDue(ctx context.Context, obj *autoscalingv1alpha1.CronFederatedHPA, st *objectState) {
	for i := range obj.Spec.Rules {
		rule := &obj.Spec.Rules[i]
		rs := st.rules[rule.Name]
		if rs == nil || rs.next.IsZero() || rs.next.After(reconciler.Clock(r.Clock).Now()) {
			continue
		}
		st.pending = append(st.pending, r.run(ctx, obj, rule, rs.next))
		rs.next = rs.timing.next(reconciler.Clock(r.Clock).Now())
	}
}

// run applies one rule and returns its outcome; a failure also raises a
// ScaleFailed event.
func (r *Reconciler) run(ctx context.Context, obj *autoscalingv1alpha1.CronFederatedHPA, rule *autoscalingv1alpha1.CronFederatedHPARule, scheduled time.Time) outcome {
	start := reconciler.Clock(r.Clock).Now()
	applied, err := r.apply(ctx, obj, rule)
	now := reconciler.Clock(r.Clock).Now()
	metrics.ObserveCronFederatedHPARule(err, now.Sub(start))
	klog.FromContext(ctx).V(1).Info("Ran CronFederatedHPA rule", "cronFederatedHPA", klog.KObj(obj), "rule", rule.Name,
		"scheduleTime", scheduled, "late", start.Sub(scheduled), "took", now.Sub(start), "err", err)
	if err != nil {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, events.ScaleFailed, "rule %q (scheduled %s): %v", rule.Name, scheduled.UTC().Format(time.RFC3339), err)
		return outcome{rule: rule.Name, failure: &autoscalingv1alpha1.FailedExecution{
			ScheduleTime: timePtr(scheduled), ExecutionTime: timePtr(now), Message: err.Error()}}
	}
	applied.ScheduleTime, applied.ExecutionTime = timePtr(scheduled), timePtr(now)
	return outcome{rule: rule.Name, success: applied}
}

// checkConflict warns, once per change, when the workload the object
// scales is also managed by a FederatedHPA: both set its replicas and the
// result is undefined.
func (r *Reconciler) checkConflict(ctx context.Context, obj *autoscalingv1alpha1.CronFederatedHPA, st *objectState) {
	conflict := ""
	gvk, err := targetKind(obj)
	if err == nil && gvk.GroupKind() != federatedHPAKind {
		var list autoscalingv1alpha1.FederatedHPAList
		if err := r.Client.List(ctx, &list, client.InNamespace(obj.Namespace)); err == nil {
			for _, f := range list.Items {
				if sameWorkload(f.Spec.ScaleTargetRef, obj.Spec.ScaleTargetRef) {
					conflict = f.Name
					break
				}
			}
		}
	}
	if conflict != "" && conflict != st.warned {
		r.Recorder.Eventf(obj, corev1.EventTypeWarning, events.ScaleTargetConflict,
			"FederatedHPA %s also scales %s %s; the replicas the two set are undefined. Point this CronFederatedHPA at the FederatedHPA (targetMinReplicas/targetMaxReplicas) instead",
			conflict, gvk.Kind, obj.Spec.ScaleTargetRef.Name)
	}
	st.warned = conflict
}

// sameTarget maps a FederatedHPA to the CronFederatedHPAs of its namespace
// that scale the same workload directly (not through a FederatedHPA).
func (r *Reconciler) sameTarget(ctx context.Context, o client.Object) []reconcile.Request {
	f, ok := o.(*autoscalingv1alpha1.FederatedHPA)
	if !ok {
		return nil
	}
	var list autoscalingv1alpha1.CronFederatedHPAList
	if err := r.Client.List(ctx, &list, client.InNamespace(f.Namespace)); err != nil {
		return nil
	}
	var out []reconcile.Request
	for i := range list.Items {
		c := &list.Items[i]
		if sameWorkload(c.Spec.ScaleTargetRef, f.Spec.ScaleTargetRef) {
			out = append(out, reconcile.Request{NamespacedName: client.ObjectKeyFromObject(c)})
		}
	}
	return out
}

// sameWorkload reports whether two scale target references name the same
// object: kind, name and API group (the version may differ). A reference
// with an unparsable apiVersion names nothing.
func sameWorkload(a, b autoscalingv2.CrossVersionObjectReference) bool {
	ga, errA := schema.ParseGroupVersion(a.APIVersion)
	gb, errB := schema.ParseGroupVersion(b.APIVersion)
	return errA == nil && errB == nil && a.Kind == b.Kind && a.Name == b.Name && ga.Group == gb.Group
}

// arm sets the object's timer to its earliest next run.
func (r *Reconciler) arm(key types.NamespacedName, st *objectState) {
	var earliest time.Time
	for _, rs := range st.rules {
		if !rs.next.IsZero() && (earliest.IsZero() || rs.next.Before(earliest)) {
			earliest = rs.next
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if st.timer != nil {
		st.timer.Stop()
		st.timer = nil
	}
	if earliest.IsZero() || r.objects[key] != st {
		return
	}
	d := max(earliest.Sub(reconciler.Clock(r.Clock).Now()), 0)
	obj := wakeObject(key)
	st.timer = reconciler.Clock(r.Clock).AfterFunc(d, func() {
		select {
		case r.wake <- event.GenericEvent{Object: obj}:
		case <-r.stopped:
		}
	})
}

// wakeObject stands for the object in a wake-up: only its key is read.
func wakeObject(key types.NamespacedName) *autoscalingv1alpha1.CronFederatedHPA {
	return &autoscalingv1alpha1.CronFederatedHPA{ObjectMeta: metav1.ObjectMeta{Namespace: key.Namespace, Name: key.Name}}
}

// forget drops a deleted object's memory and timer.
func (r *Reconciler) forget(key types.NamespacedName) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if st, ok := r.objects[key]; ok {
		if st.timer != nil {
			st.timer.Stop()
		}
		delete(r.objects, key)
	}
}

func (r *Reconciler) forgetAll() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for key, st := range r.objects {
		if st.timer != nil {
			st.timer.Stop()
		}
		delete(r.objects, key)
	}
}
