// Package bindingcontroller implements the binding controller: for every scheduled
// ResourceBinding or ClusterResourceBinding it renders the resource template
// into one Work per target cluster, in that cluster's execution namespace
// karmada-es-<cluster>, and removes the Works of clusters no longer
// targeted. Deleting a binding deletes its Works first (finalizer).
package bindingcontroller

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/core/override"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/template"
)

// Reconciler is the binding controller for one binding kind.
type Reconciler struct {
	Client    client.Client
	Templates binding.TemplateGetter
	// Kind selects ResourceBindings or ClusterResourceBindings.
	Kind binding.Kind
	// Interpreter revises replicas per cluster; nil means the bundled and
	// built-in rules only.
	Interpreter *interpreter.Interpreter
	// InjectPreservedState labels the copies an application failover moved
	// to a new cluster with the state its statePreservation rules kept
	// (gate StatefulFailoverInjection).
	InjectPreservedState bool
	// Gate, if set, is touched by every Work write (see statusgate.Gate).
	Gate *statusgate.Gate
	// Events, if set, gets Karmada's SyncWorkSucceed and SyncWorkFailed
	// events on the binding and its template when the outcome changes, and
	// CleanupWorkFailed on the binding when its Works cannot be deleted.
	Events *eventrecord.Recorder
	// Executor, if set, is handed each Work this controller creates, to
	// apply it at once (the in-process execution controller's Handoff).
	Executor interface {
		Handoff(ctx context.Context, w *workv1alpha1.Work)
	}

	lagOnce  sync.Once
	lag      workqueue.TypedRateLimiter[ctrl.Request]
	validity override.Validity
}

// lagBackoff is the per-binding back-off of waits for the template cache:
// from CacheLagRetry, doubling, to one second.
func (r *Reconciler) lagBackoff() workqueue.TypedRateLimiter[ctrl.Request] {
	r.lagOnce.Do(func() {
		r.lag = workqueue.NewTypedItemExponentialFailureRateLimiter[ctrl.Request](CacheLagRetry, time.Second)
	})
	return r.lag
}

func (r *Reconciler) newBinding() binding.Object {
	return r.Kind.Empty()
}

// SetupWithManager registers the controller. A change to one of its Works'
// spec or labels, or its deletion (say, by hand), re-renders the binding.
// Status-only changes of bindings and Works are not its business and are
// filtered out: under a burst they are most events, and each would cost a
// render and cache reads.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	specOrMetadata := predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}, predicate.AnnotationChangedPredicate{})
	return ctrl.NewControllerManagedBy(mgr).Named(r.Kind.ControllerName("binding")).
		For(r.newBinding(), builder.WithPredicates(predicate.Or[client.Object](specOrMetadata, rolloutChanged))).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			return binding.WorkOwner(o, r.Kind)
		}), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false }, // written by this controller
			UpdateFunc: func(e event.UpdateEvent) bool { return specOrMetadata.Update(e) },
		})).
		Watches(&policyv1alpha1.OverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsIn), builder.WithPredicates(queue.NotInitialList)).
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, handler.EnqueueRequestsFromMapFunc(r.bindingsIn), builder.WithPredicates(queue.NotInitialList)).
		// Overrides select clusters by labels and by provider, region and
		// zone (spec): a cluster that gains, loses or changes them changes
		// the renderings of every binding; a cluster that goes or comes
		// back changes which Works can exist.
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(r.bindingsIn),
			builder.WithPredicates(queue.NotInitialList, predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		WithOptions(queue.Options(mgr, 8)).
		Complete(r)
}

// bindingsIn re-renders the bindings an override policy or a cluster may
// affect: those in its namespace, or all for a cluster-scoped object.
func (r *Reconciler) bindingsIn(ctx context.Context, policy client.Object) []ctrl.Request {
	return r.Kind.RequestsWhere(ctx, r.Client, policy.GetNamespace(), nil)
}

// Reconcile converges the Works of one binding.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	b := r.newBinding()
	if err := r.Client.Get(ctx, req.NamespacedName, b); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	id := b.GetLabels()[binding.IDLabel(b)]
	if !b.GetDeletionTimestamp().IsZero() {
		return r.finalize(ctx, b, id)
	}
	if id == "" {
		return ctrl.Result{}, nil // the detector sets the id on creation
	}
	if controllerutil.AddFinalizer(b, binding.Finalizer) {
		if err := r.Client.Update(ctx, b); err != nil {
			return ctrl.Result{}, fmt.Errorf("add finalizer to binding %s: %w", req, err)
		}
	}
	spec := binding.Spec(b)
	tmpl, found, err := r.Templates.Template(binding.ResourceGVK(spec), spec.Resource.Namespace, spec.Resource.Name)
	if errors.Is(err, binding.ErrTemplatesLoading) {
		return ctrl.Result{RequeueAfter: time.Second}, nil
	}
	if err != nil || !found {
		return ctrl.Result{}, err
	}
	if (policymatch.HasClaim(b.GetLabels()) || len(spec.RequiredBy) > 0) && !template.Matches(tmpl, b, spec.Resource.ResourceVersion) {
		// The detector wrote the binding from another version of the
		// template than the cache holds: an older one (the informer has
		// not delivered the claim yet; with read-your-writes on, the
		// detector's claimed copy stands in and this is rare), or a newer
		// one (the detector is about to rewrite the binding, which
		// renders it again). Either way, render once they agree. A
		// binding whose policy is gone is no longer rewritten by the
		// detector and follows the template as the cache has it.
		return ctrl.Result{RequeueAfter: r.lagBackoff().When(req)}, nil
	}
	r.lagBackoff().Forget(req)
	start := time.Now()
	ops, cops, clusters, err := r.overrideInputs(ctx, b.GetNamespace())
	if err != nil {
		err = fmt.Errorf("list override inputs of binding %s: %w", req, err)
		metrics.ObserveBindingSyncWork(err, time.Since(start))
		return ctrl.Result{}, err
	}
	renderings := r.render(ctx, tmpl, b, clusters, ops, cops)
	syncErr := r.writeWorks(ctx, b, id, renderings)
	log.FromContext(ctx).V(1).Info("Rendered Works", "binding", klog.KObj(b), "clusters", renderedClusters(renderings), "err", syncErr)
	if errors.Is(syncErr, errStaleCache) {
		return ctrl.Result{RequeueAfter: CacheLagRetry}, nil // a retry, not a sync
	}
	r.reportOverrides(tmpl, renderings)
	// Karmada's SyncWorkSucceed/SyncWorkFailed, on the binding and its
	// template, when the outcome changes.
	var renderErrs []error
	for _, rd := range renderings {
		if rd.err != nil {
			renderErrs = append(renderErrs, rd.err)
		}
	}
	outcome := errors.Join(renderErrs...)
	if outcome != nil {
		outcome = fmt.Errorf("cannot render the Work of every target cluster (fix or delete the OverridePolicy; the other clusters are up to date): %w", outcome)
	} else if syncErr != nil && !apierrors.IsConflict(syncErr) {
		outcome = syncErr
	}
	if outcome != nil || syncErr == nil {
		r.Events.Outcome(syncWork, outcome, "Sync work of "+binding.Ref(b)+" successful.", b, tmpl)
	}
	if syncErr != nil {
		if !apierrors.IsConflict(syncErr) {
			metrics.ObserveBindingSyncWork(errors.Join(outcome, syncErr), time.Since(start))
		}
		return ctrl.Result{}, syncErr
	}
	keep := keepNamespaces(binding.Targets(spec))
	for c := range binding.EvictingClusters(spec) {
		// Being evicted gracefully: the copy stays, as it is, until the
		// graceful eviction task is done.
		keep[clusterv1alpha1.ExecutionNamespace(c)] = true
	}
	_, err = r.deleteWorks(ctx, id, keep)
	r.Events.Outcome(cleanupWork, err, "", b)
	metrics.ObserveBindingSyncWork(errors.Join(outcome, err), time.Since(start))
	return ctrl.Result{}, err
}

// renderedClusters lists, for logs, each target cluster and whether its
// rendering failed ("member3!").
func renderedClusters(rs []rendering) []string {
	out := make([]string, 0, len(rs))
	for _, rd := range rs {
		if rd.err != nil {
			out = append(out, rd.cluster+"!")
		} else {
			out = append(out, rd.cluster)
		}
	}
	return out
}

// syncWork is the operation whose outcome the binding controller reports.
var syncWork = eventrecord.Operation{Succeed: events.SyncWorkSucceed, Failed: events.SyncWorkFailed}

// cleanupWork is the deletion of a binding's Works (those of clusters it no
// longer targets, or all of them when it is deleted): Karmada reports only
// its failures, on the binding.
var cleanupWork = eventrecord.Operation{Failed: events.CleanupWorkFailed}

// finalize deletes a binding's Works, then releases the binding.
func (r *Reconciler) finalize(ctx context.Context, b binding.Object, id string) (ctrl.Result, error) {
	remaining, err := r.deleteWorks(ctx, id, nil)
	r.Events.Outcome(cleanupWork, err, "", b)
	if err != nil {
		return ctrl.Result{}, err
	}
	if remaining > 0 {
		// Works go once their member objects are removed; their deletion
		// events wake this binding, the requeue is a safety net.
		return ctrl.Result{RequeueAfter: 500 * time.Millisecond}, nil
	}
	r.Events.Forget(b)
	if controllerutil.RemoveFinalizer(b, binding.Finalizer) {
		if err := r.Client.Update(ctx, b); err != nil {
			return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("release binding %s: %w", b.GetName(), err))
		}
	}
	return ctrl.Result{}, nil
}

// rendering is the desired manifest of one target cluster, or why it
// cannot be made.
type rendering struct {
	cluster  string
	manifest *unstructured.Unstructured
	err      error
	// applied are the overrides applied to manifest, and workAnnotations
	// Karmada's records of them for the Work (override.ApplyForWork).
	applied         override.Applied
	workAnnotations map[string]string
	// rollout are the staged-rollout gate's Work annotations (stage); nil
	// when the binding has no strategy.
	rollout map[string]string
	// digest is the rendering's rollout.Digest, with a strategy only.
	digest string
}

// render computes, without writing anything, the manifest of every target
// cluster that exists. A cluster that does not exist or is being deleted
// (unjoined, and not yet removed from spec.clusters by the scheduler) gets
// none: its execution namespace is gone or going too.
func (r *Reconciler) render(ctx context.Context, tmpl *unstructured.Unstructured, b binding.Object, clusters map[string]*clusterv1alpha1.Cluster, ops []*policyv1alpha1.OverridePolicy, cops []*policyv1alpha1.ClusterOverridePolicy) []rendering {
	var out []rendering
	for _, tc := range binding.Targets(binding.Spec(b)) {
		c, ok := clusters[tc.Name]
		if !ok || !c.DeletionTimestamp.IsZero() {
			// Gone, or leaving with its execution namespace: the
			// scheduler takes it out of spec.clusters.
			continue
		}
		rd := rendering{cluster: tc.Name}
		overrideFn := func(m *unstructured.Unstructured) (*unstructured.Unstructured, error) {
			m, applied, annotations, err := override.ApplyForWork(m, c, ops, cops)
			if err == nil && r.InjectPreservedState {
				injectPreservedState(m, binding.Spec(b), tc.Name)
			}
			rd.applied, rd.workAnnotations = applied, annotations
			return m, err
		}
		rd.manifest, rd.err = Render(ctx, r.Interpreter, tmpl, b, tc, overrideFn)
		out = append(out, rd)
	}
	return out
}

// reportOverrides raises Karmada's ApplyOverridePolicySucceed and
// ApplyOverridePolicyFailed on the template, one outcome per policy and
// cluster (override.Outcomes), each when it changes, not on every render.
func (r *Reconciler) reportOverrides(tmpl *unstructured.Unstructured, renderings []rendering) {
	for _, rd := range renderings {
		for _, o := range override.Outcomes(tmpl.GetNamespace(), rd.cluster, rd.applied, rd.err) {
			r.Events.Outcome(eventrecord.Operation{Succeed: events.ApplyOverridePolicySucceed, Failed: events.ApplyOverridePolicyFailed, Instance: o.Instance()},
				o.Failure(), o.Message(), tmpl)
		}
	}
}

// injectPreservedState adds, to the manifest for cluster, the labels of
// each graceful eviction task's preservedLabelState when cluster is new
// since that failover (not in its clustersBeforeFailover).
func injectPreservedState(m *unstructured.Unstructured, spec *workv1alpha2.ResourceBindingSpec, cluster string) {
	for _, t := range spec.GracefulEvictionTasks {
		if len(t.PreservedLabelState) == 0 || slices.Contains(t.ClustersBeforeFailover, cluster) {
			continue
		}
		labels := m.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		for k, v := range t.PreservedLabelState {
			labels[k] = v
		}
		m.SetLabels(labels)
	}
}

// keepNamespaces is the set of execution namespaces of the target clusters.
func keepNamespaces(targets []workv1alpha2.TargetCluster) map[string]bool {
	keep := make(map[string]bool, len(targets))
	for _, tc := range targets {
		keep[clusterv1alpha1.ExecutionNamespace(tc.Name)] = true
	}
	return keep
}

// writeWorks writes the Work of every rendering, in parallel, so that a
// template's last member copy is not held behind the writes for the
// others. A cluster whose rendering failed keeps its current Work, marked
// with StaleRenderingAnnotation; the others go ahead.
func (r *Reconciler) writeWorks(ctx context.Context, b binding.Object, id string, renderings []rendering) error {
	revision, err := digestRenderings(b, renderings)
	if err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(renderings))
	for i, rd := range renderings {
		ns := clusterv1alpha1.ExecutionNamespace(rd.cluster)
		if rd.err != nil {
			wg.Go(func() { errs[i] = r.markStale(ctx, b, ns, rd.err) })
			continue
		}
		wg.Go(func() {
			if errs[i] = r.stage(ctx, b, revision, &rd); errs[i] == nil {
				errs[i] = r.ensureWork(ctx, b, id, rd)
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if errors.Is(err, errStaleCache) {
			return errStaleCache
		}
	}
	return errors.Join(errs...)
}

// errStaleCache means a write found the object already there although the
// cache does not have it yet; the binding is rendered again shortly, once
// the cache has caught up, instead of dropping the change.
var errStaleCache = errors.New("the Work cache is behind the API server")

// markStale records on a cluster's existing Work that it holds an earlier
// rendering, and why.
func (r *Reconciler) markStale(ctx context.Context, b binding.Object, ns string, why error) error {
	spec := binding.Spec(b)
	w := &workv1alpha1.Work{}
	key := client.ObjectKey{Namespace: ns, Name: binding.WorkName(spec.Resource.Kind, spec.Resource.Namespace, spec.Resource.Name)}
	if err := r.Client.Get(ctx, key, w); err != nil {
		return client.IgnoreNotFound(err) // no Work yet: status reports the cluster as not applied
	}
	msg := why.Error()
	if w.Annotations[binding.StaleRenderingAnnotation] == msg {
		return nil
	}
	patch := client.MergeFrom(w.DeepCopy())
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[binding.StaleRenderingAnnotation] = msg
	if err := r.Client.Patch(ctx, w, patch); err != nil {
		return client.IgnoreNotFound(fmt.Errorf("mark Work %s stale: %w", key, err))
	}
	return nil
}

// CacheLagRetry is how soon a binding is rendered again when the Work cache
// is behind what was just written.
const CacheLagRetry = 5 * time.Millisecond

// overrideInputs lists the OverridePolicies of the binding's namespace, every
// ClusterOverridePolicy, and the clusters by name.
func (r *Reconciler) overrideInputs(ctx context.Context, ns string) ([]*policyv1alpha1.OverridePolicy, []*policyv1alpha1.ClusterOverridePolicy, map[string]*clusterv1alpha1.Cluster, error) {
	var ops []*policyv1alpha1.OverridePolicy
	if ns != "" {
		list := &policyv1alpha1.OverridePolicyList{}
		if err := r.Client.List(ctx, list, client.InNamespace(ns)); err != nil {
			return nil, nil, nil, fmt.Errorf("list OverridePolicies: %w", err)
		}
		for i := range list.Items {
			ops = append(ops, &list.Items[i])
		}
	}
	clist := &policyv1alpha1.ClusterOverridePolicyList{}
	if err := r.Client.List(ctx, clist); err != nil {
		return nil, nil, nil, fmt.Errorf("list ClusterOverridePolicies: %w", err)
	}
	cops := make([]*policyv1alpha1.ClusterOverridePolicy, 0, len(clist.Items))
	for i := range clist.Items {
		cops = append(cops, &clist.Items[i])
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return nil, nil, nil, fmt.Errorf("list clusters: %w", err)
	}
	byName := make(map[string]*clusterv1alpha1.Cluster, len(clusters.Items))
	for i := range clusters.Items {
		byName[clusters.Items[i].Name] = &clusters.Items[i]
	}
	// A policy that fails the checks CEL cannot express (reported as
	// ValidationFailed) takes effect nowhere, as Karmada's webhook would
	// have refused it.
	ops, cops = r.validity.InForce(ops, cops)
	return ops, cops, byName, nil
}

// ensureWork creates or updates the Work of rd's cluster holding its
// manifest. The Work carries, as in Karmada, the binding's permanent ID
// label, the binding's name (and namespace), the conflict resolution and
// the records of the applied overrides as annotations.
func (r *Reconciler) ensureWork(ctx context.Context, b binding.Object, id string, rd rendering) error {
	cluster, manifest := rd.cluster, rd.manifest
	ns := clusterv1alpha1.ExecutionNamespace(cluster)
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return err
	}
	spec := binding.Spec(b)
	w := &workv1alpha1.Work{}
	w.Namespace = ns
	w.Name = binding.WorkName(spec.Resource.Kind, spec.Resource.Namespace, spec.Resource.Name)
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(w), w)
	if err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("get Work %s: %w", client.ObjectKeyFromObject(w), err)
	}
	exists := err == nil
	_, stale := w.Annotations[binding.StaleRenderingAnnotation]
	// Karmada's policy suspension: the Work is still rendered, only its
	// dispatch to the member waits (unset when not suspended).
	var suspend *bool
	if binding.DispatchSuspended(spec.Suspension, cluster) {
		suspend = ptr.To(true)
	}
	conflict := manifest.GetAnnotations()[policymatch.ConflictResolutionAnnotation]
	if exists && !stale && len(w.Spec.Workload.Manifests) == 1 && string(w.Spec.Workload.Manifests[0].Raw) == string(raw) &&
		w.Labels[binding.IDLabel(b)] == id && ptrBoolEq(w.Spec.PreserveResourcesOnDeletion, spec.PreserveResourcesOnDeletion) &&
		ptrBoolEq(w.Spec.SuspendDispatching, suspend) && override.SameWorkAnnotations(w.Annotations, rd.workAnnotations) &&
		w.Annotations[policymatch.ConflictResolutionAnnotation] == conflict && sameRolloutAnnotations(w.Annotations, rd.rollout) {
		return nil
	}
	labels := w.Labels
	if labels == nil {
		labels = map[string]string{}
	}
	labels[binding.IDLabel(b)] = id
	w.Labels = labels
	annotations := w.Annotations
	if annotations == nil {
		annotations = map[string]string{}
	}
	delete(annotations, binding.StaleRenderingAnnotation)
	if b.GetNamespace() == "" {
		annotations[binding.ClusterNameAnnotation] = b.GetName()
	} else {
		annotations[binding.NameAnnotation] = b.GetName()
		annotations[binding.NamespaceAnnotation] = b.GetNamespace()
	}
	if conflict != "" {
		annotations[policymatch.ConflictResolutionAnnotation] = conflict
	} else {
		delete(annotations, policymatch.ConflictResolutionAnnotation)
	}
	setRolloutAnnotations(annotations, rd.rollout)
	w.Annotations = override.SetWorkAnnotations(annotations, rd.workAnnotations)
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	w.Spec.PreserveResourcesOnDeletion = spec.PreserveResourcesOnDeletion
	w.Spec.SuspendDispatching = suspend
	if !exists {
		// Born with the execution controller's finalizer: one write fewer
		// per Work on the hot path.
		controllerutil.AddFinalizer(w, binding.ExecutionFinalizer)
	}
	defer r.Gate.Write()()
	if exists {
		if err := r.Client.Update(ctx, w); err != nil {
			return fmt.Errorf("update Work %s/%s: %w", ns, w.Name, err)
		}
		return nil
	}
	err = r.Client.Create(ctx, w)
	switch {
	case err == nil && r.Executor != nil:
		r.Executor.Handoff(ctx, w)
	case apierrors.IsAlreadyExists(err):
		// Created moments ago (by this controller) and not in the cache
		// yet: the new rendering must still be written, so render again
		// once the cache has the Work. Returning success here is how an
		// OverridePolicy that arrived just after its binding was lost.
		return errStaleCache
	case err != nil:
		return fmt.Errorf("create Work %s/%s: %w", ns, w.Name, err)
	}
	return nil
}

func ptrBoolEq(a, b *bool) bool {
	return (a == nil && b == nil) || (a != nil && b != nil && *a == *b)
}

// deleteWorks deletes the binding's Works outside keep (all when keep is
// nil) and returns how many of its Works still exist.
func (r *Reconciler) deleteWorks(ctx context.Context, id string, keep map[string]bool) (int, error) {
	if id == "" {
		return 0, nil
	}
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, works, client.MatchingFields{binding.WorkBindingIndex: id}); err != nil {
		return 0, fmt.Errorf("list Works of binding %s: %w", id, err)
	}
	remaining := 0
	for i := range works.Items {
		w := &works.Items[i]
		if keep[w.Namespace] {
			continue
		}
		remaining++
		if w.DeletionTimestamp.IsZero() {
			done := r.Gate.Write()
			err := r.Client.Delete(ctx, w)
			done()
			if err != nil && !apierrors.IsNotFound(err) {
				return remaining, fmt.Errorf("delete Work %s: %w", client.ObjectKeyFromObject(w), err)
			}
		}
	}
	return remaining, nil
}

// Render turns the template into the manifest for one target cluster:
// server-set metadata and status stripped, member-owned fields pruned,
// replicas (and a Job's completions) revised for Divided placement (and for a Duplicated one
// whose placement holds other replicas than the template: see below),
// override applied (nil for none),
// and then, so no override can remove them, Karmada's managed labels and
// annotations added: work name, template generation, resolved conflict
// resolution, and the lists of label and annotation keys the manifest sets
// (so keys removed from the template are removed from the member too).
//
// The replicas are revised by in (nil: the bundled and built-in rules); a
// customization that fails fails the rendering, while a built-in kind
// without replicas is left as it is.
func Render(ctx context.Context, in *interpreter.Interpreter, tmpl *unstructured.Unstructured, b binding.Object, tc workv1alpha2.TargetCluster, override func(*unstructured.Unstructured) (*unstructured.Unstructured, error)) (*unstructured.Unstructured, error) {
	spec := binding.Spec(b)
	m := tmpl.DeepCopy()
	native.Prune(m)
	// Divided: each cluster gets its share. Duplicated: every cluster runs the replicas the
	// scheduler last placed, which are the template's once it has placed them; until then,
	// or when it refused them (a FederatedResourceQuota refused a scale-up: QuotaExceeded),
	// the members keep the replicas they were given rather than running past the refusal.
	if spec.Replicas > 0 && (divided(spec.Placement) || tc.Replicas != spec.Replicas) {
		in = interpreter.Or(in)
		shares := spec.Clusters
		if !divided(spec.Placement) {
			shares = []workv1alpha2.TargetCluster{tc} // a Duplicated Job keeps all its completions
		}
		revised, err := in.ReviseReplica(ctx, m, shares, tc)
		switch {
		case err == nil:
			m = revised
		case in.HasReviseReplica(m):
			return nil, err
		}
	}
	if override != nil {
		var err error
		if m, err = override(m); err != nil {
			return nil, err
		}
	}
	if rev := b.GetAnnotations()[interpreter.RevisionAnnotation]; rev != "" {
		// A new interpretation of the kind: the member's copy is updated,
		// so health and status are read again with it.
		ann := m.GetAnnotations()
		if ann == nil {
			ann = map[string]string{}
		}
		ann[interpreter.RevisionAnnotation] = rev
		m.SetAnnotations(ann)
	}
	// As in Karmada, the member object names its binding: the binding's
	// permanent-id label and its name (and namespace) annotations.
	if id := b.GetLabels()[binding.IDLabel(b)]; id != "" {
		labels := m.GetLabels()
		if labels == nil {
			labels = map[string]string{}
		}
		labels[binding.IDLabel(b)] = id
		m.SetLabels(labels)
	}
	ann := binding.MarkManaged(m, registry.ManagedLabel, clusterv1alpha1.ExecutionNamespace(tc.Name),
		binding.WorkName(spec.Resource.Kind, spec.Resource.Namespace, spec.Resource.Name))
	if b.GetNamespace() == "" {
		ann[binding.ClusterNameAnnotation] = b.GetName()
	} else {
		ann[binding.NameAnnotation], ann[binding.NamespaceAnnotation] = b.GetName(), b.GetNamespace()
	}
	if g := tmpl.GetGeneration(); g != 0 {
		// Kinds without a generation (a ConfigMap) get none, as in Karmada.
		ann[native.ResourceTemplateGenerationAnnotation] = strconv.FormatInt(g, 10)
	}
	if uid := tmpl.GetUID(); uid != "" {
		ann[binding.TemplateUIDAnnotation] = string(uid)
	}
	resolved := policymatch.ResolveConflictResolution(tmpl.GetAnnotations(), spec.ConflictResolution)
	if resolved == policyv1alpha1.ConflictOverwrite {
		ann[policymatch.ConflictResolutionAnnotation] = policymatch.ConflictResolutionOverwrite
	} else {
		ann[policymatch.ConflictResolutionAnnotation] = policymatch.ConflictResolutionAbort
	}
	m.SetAnnotations(ann)
	return m, nil
}

func divided(p *policyv1alpha1.Placement) bool {
	return p != nil && p.ReplicaScheduling != nil && p.ReplicaScheduling.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided
}
