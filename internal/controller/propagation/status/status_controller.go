// Package status implements status aggregation: for every ResourceBinding
// and ClusterResourceBinding it collects its Works' applied state and
// reflected member status into binding.status.aggregatedStatus (one entry
// per target cluster) with the FullyApplied condition, and writes the
// resource template's own .status from those, as Karmada does (for a
// Deployment: replicas, readyReplicas, updatedReplicas, availableReplicas,
// unavailableReplicas and observedGeneration).
package status

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/core/rollout"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// AggregationDelay is how long Work changes of one binding are gathered
// before it is re-aggregated: the Works of all its clusters usually report
// within this window, so the binding and its template are written once
// instead of once per cluster.
const AggregationDelay = 200 * time.Millisecond

// Reconciler aggregates status for one binding kind.
type Reconciler struct {
	Client    client.Client
	Dynamic   dynamic.Interface
	Templates binding.TemplateGetter
	// Interpreter answers the interpreter operations; nil means the bundled
	// and built-in rules only.
	Interpreter *interpreter.Interpreter
	// Resources maps a template's kind to its resource, for status writes.
	Resources func(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool)
	// Events, if set, gets Karmada's AggregateStatusSucceed and
	// AggregateStatusFailed events on the binding and its template when the
	// outcome of writing the template's status changes.
	Events *eventrecord.Recorder
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// BornScheduled writes the Scheduled condition of a binding born
	// scheduled with its first aggregated status
	// (fastpath.Options.BornScheduled).
	BornScheduled bool
	// Clock tells how long members have not reported; nil is the real clock.
	Clock clock.PassiveClock
	// Gate, if set, defers the binding and template status writes while
	// propagation is busy (see statusgate.Gate).
	Gate *statusgate.Gate
	// Board, if set, holds the Work status reports the gate has deferred:
	// aggregation reads them in place of the Works' cached status, and
	// each one posted re-aggregates its binding (see statusgate.Board).
	Board  *statusgate.Board
	wakeup statusgate.Wakeup
	// rejected holds, per binding key, the template status the API server
	// refused as invalid, so the same bad value is not written again; a
	// different value (the members moved on, or the template did) is tried.
	rejected sync.Map
}

func (r *Reconciler) newBinding() binding.Object {
	return r.Kind.Empty()
}

// SetupWithManager registers the controller; every Work change re-aggregates its binding.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.wakeup = statusgate.NewWakeup()
	later := r.aggregateLater()
	b := ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName("status")).
		For(r.newBinding()).
		Watches(&workv1alpha1.Work{}, later).
		WatchesRawSource(r.wakeup.Source())
	if r.Board != nil {
		b = b.WatchesRawSource(r.Board.Source(later))
	}
	return b.WithOptions(queue.Options(mgr, 8)).Complete(r)
}

// aggregateLater handles a change of one of a binding's Works (its watch
// events, and its reports posted to the board). While propagation is busy
// the binding's report is parked at once, without aggregating (the
// reconcile would only park it, after copying every Work of the binding: a
// burst to a hundred members changes thousands of Works), and its release
// aggregates once with every change made meanwhile. Otherwise the binding
// is queued after AggregationDelay, once for the changes of all its Works
// within that window.
func (r *Reconciler) aggregateLater() handler.EventHandler {
	add := func(o client.Object, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
		for _, req := range binding.WorkOwner(o, r.Kind) {
			if !r.Gate.Park(r.reportKey(req), r.wakeup.Release(r.keyOnly(req))) {
				q.AddAfter(req, AggregationDelay)
			}
		}
	}
	return handler.Funcs{
		CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.ObjectNew, q)
		},
		DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
		GenericFunc: func(_ context.Context, e event.GenericEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
			add(e.Object, q)
		},
	}
}

// Reconcile aggregates one binding.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.newBinding()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		if apierrors.IsNotFound(err) {
			r.rejected.Delete(req.String())
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !b.GetDeletionTimestamp().IsZero() {
		return ctrl.Result{}, nil
	}
	id := b.GetLabels()[binding.IDLabel(b)]
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.MatchingFields{binding.WorkBindingIndex: id}); err != nil {
		return ctrl.Result{}, fmt.Errorf("list Works of binding %s: %w", req, err)
	}
	r.Board.Overlay(works.Items)
	byCluster := map[string]*workv1alpha1.Work{}
	for i := range works.Items {
		byCluster[strings.TrimPrefix(works.Items[i].Namespace, clusterv1alpha1.ExecutionSpacePrefix)] = &works.Items[i]
	}
	spec, status := binding.Spec(b), binding.Status(b)
	// Not scheduled (yet, or ever): there is no status to aggregate and the
	// template's is left alone, but FullyApplied says so (False), as for a
	// binding whose clusters all went.
	targets := binding.Targets(spec)
	unscheduled := len(targets) == 0 && len(status.AggregatedStatus) == 0
	if wait := unreported(targets, byCluster, r.Gate, reconciler.Now(r.Clock)); wait > 0 {
		// Some cluster has not reported yet; it normally does within
		// moments, and waiting writes the binding once instead of once per
		// cluster. A Work that stays silent is reported as it is.
		return ctrl.Result{RequeueAfter: wait}, nil
	}
	items, cond := Aggregate(targets, byCluster)
	if len(targets) == 0 {
		// Evicted from every cluster, and placed nowhere else yet: the
		// copies still there (graceful eviction keeps them) are what
		// serves, so status reports them rather than nothing. Flotilla's
		// own: Karmada reads 0 ready replicas while they still serve.
		if evicting := evictingWithWorks(spec, byCluster); len(evicting) > 0 {
			items, _ = Aggregate(evicting, byCluster)
			unscheduled = false
		}
	}
	cond.ObservedGeneration = b.GetGeneration()
	newStatus := status.DeepCopy()
	if r.BornScheduled && binding.BornScheduled(b) {
		// One write instead of two: the scheduler leaves this to us.
		binding.SetScheduled(newStatus, b.GetGeneration(), "")
	}
	newStatus.AggregatedStatus = items
	meta.SetStatusCondition(&newStatus.Conditions, cond)
	changed := !equality.Semantic.DeepEqual(newStatus, status)
	var tmplStatus *templateUpdate
	var aggregateErr error // the interpreter's AggregateStatus failed: the binding's status is still written
	if !unscheduled {
		tmplStatus, aggregateErr = r.templateStatus(ctx, spec, items)
		if errors.Is(aggregateErr, binding.ErrTemplatesLoading) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
	}
	if (changed || tmplStatus != nil) && r.Gate.Park(r.reportKey(req), r.wakeup.Release(r.keyOnly(req))) {
		log.FromContext(ctx).V(1).Info("Status report parked", "binding", klog.KObj(b))
		return ctrl.Result{}, nil // propagation first: written once it pauses
	}
	if changed {
		*status = *newStatus
		// A full status update with the read resourceVersion: the
		// scheduler writes the Scheduled condition in the same list, so a
		// stale read must become a retry, not a lost condition; and an
		// update costs the API server less than a patch of the stored
		// binding.
		if err := r.Client.Status().Update(ctx, b); apierrors.IsConflict(err) {
			return reconciler.Result(ctrl.Result{}, err)
		} else if err != nil {
			return ctrl.Result{}, fmt.Errorf("write status of binding %s: %w", req, err)
		}
	}
	if tmplStatus != nil {
		if err := r.writeTemplateStatus(ctx, req, b, spec, tmplStatus); errors.Is(err, errRejected) {
			return ctrl.Result{}, nil // reported; a new value is tried when one comes
		} else if err != nil {
			return ctrl.Result{}, err
		}
	}
	if aggregateErr != nil {
		// A customization's script that fails (AggregateStatusFailed): retried with back-off,
		// since mending the ResourceInterpreterCustomization does not change the binding.
		aggregateErr = fmt.Errorf("aggregate the status of %s: %w", binding.Ref(b), aggregateErr)
		r.Events.Outcome(aggregateStatus, aggregateErr, "", b, binding.TemplateRef(spec))
		return ctrl.Result{}, aggregateErr
	}
	if (changed && !unscheduled) || tmplStatus != nil {
		// Karmada's AggregateStatusSucceed, on the binding and its
		// template, when the outcome changes.
		r.Events.Outcome(aggregateStatus, nil, "Update "+binding.Ref(b)+" with AggregatedStatus successfully.", b, binding.TemplateRef(spec))
	}
	return ctrl.Result{}, nil
}

// aggregateStatus is the operation whose outcome this controller reports.
var aggregateStatus = eventrecord.Operation{Succeed: events.AggregateStatusSucceed, Failed: events.AggregateStatusFailed}

func (r *Reconciler) reportKey(req ctrl.Request) string {
	return r.Kind.ControllerName("status") + "/" + req.String()
}

// keyOnly is an empty binding carrying the request's name, for a Wakeup.
func (r *Reconciler) keyOnly(req ctrl.Request) client.Object {
	b := r.newBinding()
	b.SetNamespace(req.Namespace)
	b.SetName(req.Name)
	return b
}

// ReportGrace is how long aggregation waits for a new Work's first report.
const ReportGrace = 3 * time.Second

// unreported returns how long to wait for target clusters whose Work has
// not reported Applied yet and is younger than ReportGrace, or whose report
// the gate holds back; 0 when none.
func unreported(targets []workv1alpha2.TargetCluster, works map[string]*workv1alpha1.Work, gate *statusgate.Gate, now time.Time) time.Duration {
	var wait time.Duration
	for _, tc := range targets {
		w := works[tc.Name]
		if w != nil && meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied) != nil {
			continue
		}
		if w != nil && gate.Pending(statusgate.WorkReportKey(w.Namespace, w.Name)) {
			// Its report comes once propagation pauses, and wakes this
			// binding; the wait is only a safety net.
			wait = max(wait, ReportGrace)
			continue
		}
		// A Work still to be made, or made within ReportGrace: its creation
		// or its report wakes this binding, so the wait is a safety net
		// rather than a poll (polling a binding of a hundred clusters every
		// AggregationDelay while its Works were made cost the controller
		// manager more than aggregating it).
		if w == nil {
			wait = max(wait, ReportGrace)
		} else if age := now.Sub(w.CreationTimestamp.Time); age < ReportGrace {
			wait = max(wait, ReportGrace-age)
		}
	}
	return wait
}

// evictingWithWorks lists the clusters of the binding's graceful eviction
// tasks whose Work is still there, as targets without replicas.
func evictingWithWorks(spec *workv1alpha2.ResourceBindingSpec, works map[string]*workv1alpha1.Work) []workv1alpha2.TargetCluster {
	var out []workv1alpha2.TargetCluster
	for c := range binding.EvictingClusters(spec) {
		if works[c] != nil {
			out = append(out, workv1alpha2.TargetCluster{Name: c})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Aggregate builds aggregatedStatus (sorted by cluster) and the FullyApplied
// condition from the Works of the target clusters.
func Aggregate(targets []workv1alpha2.TargetCluster, works map[string]*workv1alpha1.Work) ([]workv1alpha2.AggregatedStatusItem, metav1.Condition) {
	var items []workv1alpha2.AggregatedStatusItem
	var pending, stale, held, staged []string
	for _, tc := range targets {
		item := workv1alpha2.AggregatedStatusItem{ClusterName: tc.Name}
		w := works[tc.Name]
		behind := false
		if w != nil {
			if c := meta.FindStatusCondition(w.Status.Conditions, workv1alpha1.WorkApplied); c != nil {
				item.Applied = c.Status == metav1.ConditionTrue
				if !item.Applied {
					item.AppliedMessage = c.Message
				}
				behind = c.ObservedGeneration != 0 && c.ObservedGeneration != w.Generation
			}
			if len(w.Status.ManifestStatuses) > 0 {
				ms := w.Status.ManifestStatuses[0]
				item.Status = ms.Status
				item.Health = workv1alpha2.ResourceHealth(ms.Health)
			}
		}
		if !item.Applied {
			pending = append(pending, tc.Name)
		} else if behind && w.Spec.SuspendDispatching != nil && *w.Spec.SuspendDispatching {
			// Applied, but dispatching is suspended (the policy's
			// suspension) since an earlier version.
			held = append(held, tc.Name)
		} else if _, waits := w.Annotations[rollout.PendingAnnotation]; waits {
			// Applied, but the staged rollout holds the new rendering
			// back: the cluster runs the previous one.
			staged = append(staged, tc.Name)
		} else if _, old := w.Annotations[binding.StaleRenderingAnnotation]; old {
			// Applied, but an earlier rendering: the current one could not
			// be made for this cluster.
			stale = append(stale, tc.Name+" ("+w.Annotations[binding.StaleRenderingAnnotation]+")")
		}
		items = append(items, item)
	}
	sort.Slice(items, func(i, j int) bool { return items[i].ClusterName < items[j].ClusterName })
	cond := metav1.Condition{Type: workv1alpha2.FullyApplied, Status: metav1.ConditionTrue, Reason: workv1alpha2.FullyAppliedSuccessReason,
		Message: "All works have been successfully applied"}
	switch {
	case len(targets) == 0:
		cond.Status, cond.Reason, cond.Message = metav1.ConditionFalse, workv1alpha2.FullyAppliedFailedReason, "The binding is not scheduled to any cluster yet"
	case len(pending) > 0:
		sort.Strings(pending)
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha2.FullyAppliedFailedReason
		cond.Message = fmt.Sprintf("Not applied yet in %d of %d clusters: %s", len(pending), len(targets), strings.Join(pending, ", "))
	case len(held) > 0:
		sort.Strings(held)
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha2.FullyAppliedFailedReason
		cond.Message = fmt.Sprintf("Dispatching is suspended in %d of %d clusters, which hold an earlier version of the template: %s", len(held), len(targets), strings.Join(held, ", "))
	case len(staged) > 0:
		sort.Strings(staged)
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha2.FullyAppliedFailedReason
		cond.Message = fmt.Sprintf("A staged rollout holds the template's latest change back from %d of %d clusters, which run the previous one (see the Progressing condition): %s", len(staged), len(targets), strings.Join(staged, ", "))
	case len(stale) > 0:
		sort.Strings(stale)
		cond.Status, cond.Reason = metav1.ConditionFalse, workv1alpha2.FullyAppliedFailedReason
		cond.Message = fmt.Sprintf("The Works of %d of %d clusters hold an earlier version of the template: %s", len(stale), len(targets), strings.Join(stale, "; "))
	}
	return items, cond
}

// templateStatus is the template's .status aggregated from items, with the
// template it was computed from, or nil when the interpreter does not know
// the kind, the template is gone, or its status is already that.
func (r *Reconciler) templateStatus(ctx context.Context, spec *workv1alpha2.ResourceBindingSpec, items []workv1alpha2.AggregatedStatusItem) (*templateUpdate, error) {
	tmpl, found, err := r.Templates.Template(binding.ResourceGVK(spec), spec.Resource.Namespace, spec.Resource.Name)
	if err != nil || !found {
		return nil, err
	}
	updated, err := interpreter.Or(r.Interpreter).AggregateStatus(ctx, tmpl, items)
	if err != nil || updated == nil || equality.Semantic.DeepEqual(updated.Object["status"], tmpl.Object["status"]) {
		return nil, err
	}
	return &templateUpdate{from: tmpl, to: updated}, nil
}

// templateUpdate is a template before and after its status aggregation.
type templateUpdate struct{ from, to *unstructured.Unstructured }

// errRejected means the template's status was refused as invalid; it is
// reported, not retried.
var errRejected = errors.New("aggregated status refused")

// writeTemplateStatus writes the aggregated .status of the template. A
// value the API server refuses as invalid (a status transition its
// validation forbids) is reported once, as an AggregateStatusFailed
// Warning, and not written again: retrying cannot fix it, and a loop would
// only load the API server. Other failures are retried with back-off.
func (r *Reconciler) writeTemplateStatus(ctx context.Context, req ctrl.Request, b binding.Object, spec *workv1alpha2.ResourceBindingSpec, u *templateUpdate) error {
	tmpl, updated := u.from, u.to
	gvk := binding.ResourceGVK(spec)
	gvr, ok := r.Resources(gvk)
	if !ok {
		return nil
	}
	rc := r.Dynamic.Resource(gvr)
	var ri dynamic.ResourceInterface = rc
	if spec.Resource.Namespace != "" {
		ri = rc.Namespace(spec.Resource.Namespace)
	}
	// A merge patch of the status alone, without a resourceVersion: the
	// template's spec and metadata move on independently (the claim is
	// written at about the same time), and nothing else writes its status,
	// so an optimistic lock would only turn those moves into conflicts.
	patch, err := client.MergeFrom(tmpl).Data(updated)
	if err != nil {
		return fmt.Errorf("compute status patch of %s %s: %w", gvk.Kind, req, err)
	}
	if v, ok := r.rejected.Load(req.String()); ok && v.(string) == string(patch) {
		return nil // refused before, and nothing has changed since
	}
	_, err = ri.Patch(ctx, tmpl.GetName(), types.MergePatchType, patch, metav1.PatchOptions{}, "status")
	switch {
	case apierrors.IsNotFound(err):
		return nil // no status subresource
	case apierrors.IsInvalid(err) || apierrors.IsBadRequest(err):
		r.rejected.Store(req.String(), string(patch))
		r.Events.Outcome(aggregateStatus, fmt.Errorf("the API server refused the status aggregated from the member clusters: %w", err), "", b, tmpl)
		return errRejected
	case err != nil:
		r.Events.Outcome(aggregateStatus, fmt.Errorf("cannot write the status aggregated from the member clusters: %w", err), "", b, tmpl)
		return fmt.Errorf("write status of %s %s: %w", gvk.Kind, req, err)
	}
	r.rejected.Delete(req.String())
	return nil
}
