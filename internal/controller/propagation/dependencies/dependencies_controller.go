// Package dependencies implements Karmada's dependencies distributor
// (propagateDeps): the ConfigMaps, Secrets, ServiceAccounts,
// PersistentVolumeClaims and Services a workload's pod template refers to
// follow the workload to its clusters.
//
// Each dependency gets a ResourceBinding of its own, <name>-<kind>, whose
// spec.requiredBy lists every workload binding that needs it with that
// binding's clusters. The binding controller sends the dependency to the
// union of those clusters and its own spec.clusters (binding.Targets). A
// dependency no policy claims has an attached binding: no placement, never
// scheduled, deleted once nothing requires it (its template stays). One
// that has a policy keeps its binding and placement; the required clusters
// are added.
//
// The reconcile key is the workload binding. It computes that binding's
// dependencies from its template (interpreter.Dependencies) and writes its
// entry into each dependency's binding, and removes the entry from bindings
// it no longer needs (found through binding.RequiredByIndex), so it is
// level-based: a workload deleted while the controller was down is found
// from the entries that still name it.
package dependencies

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
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

	configv1alpha1 "github.com/flotilla-io/flotilla/api/config/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the name of this controller in --controllers, logs and
// events: Karmada's.
const ControllerName = "dependencies-distributor"

// Templates reads resource templates and says when they change: the
// detector (detector.Detector).
type Templates interface {
	binding.TemplateGetter
	// TemplatesMatching lists the templates of a kind in a namespace whose
	// labels match selector.
	TemplatesMatching(gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error)
	Subscribe(fn func(gvk schema.GroupVersionKind, namespace, name string))
}

// Reconciler distributes the dependencies of ResourceBindings with
// spec.propagateDeps.
type Reconciler struct {
	Client    client.Client
	Templates Templates
	// Interpreter answers the interpreter operations; nil means the bundled
	// and built-in rules only.
	Interpreter *interpreter.Interpreter
	// Events, if set, gets Karmada's SyncScheduleResultToDependenciesSucceed
	// and ...Failed on the workload binding, GetDependenciesSucceed and
	// ...Failed on the workload, and DependencyPolicyConflict on an
	// attached binding, when the outcome changes.
	Events *eventrecord.Recorder
	// Gate, if set, is touched by every binding write (statusgate.Gate).
	Gate *statusgate.Gate

	mu sync.Mutex
	// requirers maps a dependency template to the workload bindings that
	// refer to it, whether it exists or not: its creation or change wakes
	// them. Rebuilt from the reconciles, which all run at start.
	requirers map[dependencyKey]map[types.NamespacedName]bool
	// refs is the inverse: what each workload binding was last found to
	// refer to.
	refs map[types.NamespacedName][]dependencyKey
	feed queue.Feed
}

// dependencyKey names a dependency template (group, kind, namespace,
// name), or with Name empty every template of the kind in the namespace:
// what a label-selected dependency watches.
type dependencyKey struct {
	Group, Kind, Namespace, Name string
}

// watchKey is what a change of dependency d is looked up by.
func watchKey(namespace string, d native.Dependency) dependencyKey {
	if d.Namespace != "" {
		namespace = d.Namespace
	}
	gvk := d.GroupVersionKind()
	return dependencyKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: d.Name}
}

// SetupWithManager registers the controller: ResourceBindings that
// propagate dependencies or are required by others, the requirers of
// every binding that names some, and changes of the templates they refer
// to.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.requirers = map[dependencyKey]map[types.NamespacedName]bool{}
	r.refs = map[types.NamespacedName][]dependencyKey{}
	relevant := func(b *workv1alpha2.ResourceBinding) bool {
		return b.Spec.PropagateDeps || len(b.Spec.RequiredBy) > 0
	}
	bindingChanged := predicate.Funcs{
		CreateFunc: func(e event.CreateEvent) bool { return relevant(e.Object.(*workv1alpha2.ResourceBinding)) },
		DeleteFunc: func(e event.DeleteEvent) bool { return relevant(e.Object.(*workv1alpha2.ResourceBinding)) },
		UpdateFunc: func(e event.UpdateEvent) bool {
			o, n := e.ObjectOld.(*workv1alpha2.ResourceBinding), e.ObjectNew.(*workv1alpha2.ResourceBinding)
			return (relevant(o) || relevant(n)) && (o.Generation != n.Generation || !n.DeletionTimestamp.Equal(o.DeletionTimestamp) ||
				o.Labels[binding.PermanentIDLabel] != n.Labels[binding.PermanentIDLabel])
		},
		GenericFunc: func(event.GenericEvent) bool { return false },
	}
	r.Templates.Subscribe(r.templateChanged)
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		Watches(&workv1alpha2.ResourceBinding{}, handler.EnqueueRequestsFromMapFunc(selfAndRequirers), builder.WithPredicates(bindingChanged)).
		WatchesRawSource(r.feed.Source()).
		WithOptions(queue.Options(mgr, 4)).
		Complete(r)
}

// selfAndRequirers maps a binding to itself (as a workload) and to every
// binding its spec.requiredBy names (whose entries it holds).
func selfAndRequirers(_ context.Context, o client.Object) []ctrl.Request {
	b := o.(*workv1alpha2.ResourceBinding)
	reqs := []ctrl.Request{{NamespacedName: client.ObjectKeyFromObject(b)}}
	for _, rb := range b.Spec.RequiredBy {
		reqs = append(reqs, ctrl.Request{NamespacedName: types.NamespacedName{Namespace: rb.Namespace, Name: rb.Name}})
	}
	return reqs
}

// templateChanged wakes the workload bindings that refer to a template
// that was created, changed or deleted.
func (r *Reconciler) templateChanged(gvk schema.GroupVersionKind, namespace, name string) {
	if namespace == "" {
		return // every dependency is namespaced
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	exact := dependencyKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace, Name: name}
	anyOfKind := dependencyKey{Group: gvk.Group, Kind: gvk.Kind, Namespace: namespace}
	for _, k := range []dependencyKey{exact, anyOfKind} {
		for w := range r.requirers[k] {
			r.feed.Add(ctrl.Request{NamespacedName: w})
		}
	}
}

// remember records what workload w refers to now.
func (r *Reconciler) remember(w types.NamespacedName, deps []dependencyKey) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, d := range r.refs[w] {
		if set := r.requirers[d]; set != nil {
			delete(set, w)
			if len(set) == 0 {
				delete(r.requirers, d)
			}
		}
	}
	if len(deps) == 0 {
		delete(r.refs, w)
		return
	}
	r.refs[w] = deps
	for _, d := range deps {
		if r.requirers[d] == nil {
			r.requirers[d] = map[types.NamespacedName]bool{}
		}
		r.requirers[d][w] = true
	}
}

// dependencyRef is one entry of binding.DependenciesAnnotation (Karmada's
// DependentObjectReference).
type dependencyRef struct {
	APIVersion    string                `json:"apiVersion"`
	Kind          string                `json:"kind"`
	Namespace     string                `json:"namespace"`
	Name          string                `json:"name,omitempty"`
	LabelSelector *metav1.LabelSelector `json:"labelSelector,omitempty"`
}

// syncDependencies is the operation whose outcome is reported on the
// workload binding.
var syncDependencies = eventrecord.Operation{Succeed: events.SyncScheduleResultToDependenciesSucceed, Failed: events.SyncScheduleResultToDependenciesFailed}

// getDependencies is the interpretation of a workload's dependencies,
// reported on the workload.
var getDependencies = eventrecord.Operation{Succeed: events.GetDependenciesSucceed, Failed: events.GetDependenciesFailed}

// dependencyPolicy is the agreement of the requirers of an attached binding
// on its settings: Karmada reports only the conflicts, on that binding.
var dependencyPolicy = eventrecord.Operation{Failed: events.DependencyPolicyConflict}

// Reconcile brings the dependency bindings of one workload binding in line
// with its template and clusters.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	w := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, req.NamespacedName, w)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	exists := err == nil && w.DeletionTimestamp.IsZero()
	var deps []native.Dependency
	var tmpl *unstructured.Unstructured
	if exists && w.Spec.PropagateDeps {
		var found bool
		tmpl, found, err = r.Templates.Template(binding.ResourceGVK(&w.Spec), w.Spec.Resource.Namespace, w.Spec.Resource.Name)
		if errors.Is(err, binding.ErrTemplatesLoading) {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		if err != nil {
			return ctrl.Result{}, err
		}
		if found {
			in := interpreter.Or(r.Interpreter)
			tmpl = withKind(tmpl, binding.ResourceGVK(&w.Spec))
			list, derr := in.Dependencies(ctx, tmpl)
			if derr != nil || in.Interprets(tmpl, configv1alpha1.InterpreterOperationInterpretDependency) {
				// Karmada's GetDependenciesSucceed/Failed on the workload,
				// for kinds something interprets dependencies of.
				r.Events.Outcome(getDependencies, derr, "Interpreted the dependencies of the workload (listed in its binding's annotation "+
					binding.DependenciesAnnotation+").", tmpl)
			}
			if derr != nil {
				// A pod template that does not decode: the API server
				// validates workloads, so this is a CRD-like kind gone
				// wrong; nothing to retry until it changes.
				r.Events.Outcome(syncDependencies, fmt.Errorf("cannot read the dependencies of %s %s: %w", tmpl.GetKind(), tmpl.GetName(), derr), "", w)
				return ctrl.Result{}, nil
			}
			deps = list
		}
	}
	keys := make([]dependencyKey, 0, len(deps))
	for _, d := range deps {
		keys = append(keys, watchKey(req.Namespace, d))
	}
	r.remember(req.NamespacedName, keys)
	if exists && w.Spec.PropagateDeps {
		if err := r.recordDependencies(ctx, w, deps); err != nil {
			return r.retry(err)
		}
	}
	// Where each dependency goes: this binding's clusters (none while it is
	// not scheduled, or gone).
	var clusters []workv1alpha2.TargetCluster
	if exists {
		for _, tc := range w.Spec.Clusters {
			clusters = append(clusters, workv1alpha2.TargetCluster{Name: tc.Name})
		}
	}
	wanted := map[string]bool{} // names of the dependency bindings this binding requires
	var missing []string
	var errs []error
	if len(clusters) > 0 {
		for _, d := range deps {
			objs, err := r.resolve(w.Namespace, d)
			if errors.Is(err, binding.ErrTemplatesLoading) {
				return ctrl.Result{RequeueAfter: time.Second}, nil
			}
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if len(objs) == 0 && d.Name != "" {
				missing = append(missing, d.Kind+" "+w.Namespace+"/"+d.Name)
				continue
			}
			for _, dt := range objs {
				wanted[binding.Name(dt.GetName(), dt.GetKind())] = true
				if err := r.require(ctx, w, dt, clusters); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	if err := r.release(ctx, req.NamespacedName, wanted); err != nil {
		errs = append(errs, err)
	}
	outcome := errors.Join(errs...)
	if exists && w.Spec.PropagateDeps {
		report := outcome
		if len(missing) > 0 && outcome == nil {
			report = fmt.Errorf("%s %s refers to %s, which does not exist on the control plane: create it there, or remove the reference (the workload is propagated without it)",
				tmpl.GetKind(), tmpl.GetName(), strings.Join(missing, ", "))
		}
		if report == nil || !isConflict(outcome) {
			r.Events.Outcome(syncDependencies, report, "Sync schedule results to dependencies succeed.", w)
		}
	}
	if outcome != nil {
		return r.retry(outcome)
	}
	log.FromContext(ctx).V(1).Info("Distributed dependencies", "binding", req.NamespacedName, "dependencies", len(wanted), "missing", missing)
	return ctrl.Result{}, nil
}

// resolve returns the templates dependency d stands for in namespace: the
// one it names (none if it does not exist), or every one its selector
// matches.
func (r *Reconciler) resolve(namespace string, d native.Dependency) ([]*unstructured.Unstructured, error) {
	if d.Namespace != "" {
		namespace = d.Namespace
	}
	gvk := d.GroupVersionKind()
	if d.Name != "" {
		obj, found, err := r.Templates.Template(gvk, namespace, d.Name)
		if err != nil || !found {
			return nil, err
		}
		return []*unstructured.Unstructured{withKind(obj, gvk)}, nil
	}
	sel, err := labels.Parse(d.Selector)
	if err != nil {
		return nil, fmt.Errorf("dependency %s: %w", d, err)
	}
	objs, err := r.Templates.TemplatesMatching(gvk, namespace, sel)
	if err != nil {
		return nil, err
	}
	out := make([]*unstructured.Unstructured, 0, len(objs))
	for _, o := range objs {
		out = append(out, withKind(o, gvk))
	}
	return out, nil
}

// withKind returns obj with its apiVersion and kind set (informers may
// leave them empty); obj itself is not changed.
func withKind(obj *unstructured.Unstructured, gvk schema.GroupVersionKind) *unstructured.Unstructured {
	if obj.GetKind() != "" && obj.GetAPIVersion() != "" {
		return obj
	}
	c := obj.DeepCopy()
	c.SetGroupVersionKind(gvk)
	return c
}

// retry turns an optimistic-lock conflict (two workloads writing one
// dependency's binding, or a stale cache) into a quick retry.
func (r *Reconciler) retry(err error) (ctrl.Result, error) {
	if isConflict(err) {
		return ctrl.Result{RequeueAfter: queue.ConflictRetry}, nil
	}
	return ctrl.Result{}, err
}

// isConflict reports whether err, in every part when it joins several, is a
// conflict or a create that lost a race with the cache (AlreadyExists).
func isConflict(err error) bool {
	return reconciler.Every(err, func(e error) bool { return apierrors.IsConflict(e) || apierrors.IsAlreadyExists(e) })
}

// recordDependencies writes binding.DependenciesAnnotation on the workload
// binding, as Karmada does, so `kubectl get rb -o yaml` shows what follows it.
func (r *Reconciler) recordDependencies(ctx context.Context, w *workv1alpha2.ResourceBinding, deps []native.Dependency) error {
	refs := make([]dependencyRef, 0, len(deps))
	for _, d := range deps {
		ref := dependencyRef{APIVersion: d.GroupVersionKind().GroupVersion().String(), Kind: d.Kind, Namespace: w.Namespace, Name: d.Name}
		if d.Name == "" {
			if sel, err := metav1.ParseToLabelSelector(d.Selector); err == nil {
				ref.LabelSelector = sel
			}
		}
		refs = append(refs, ref)
	}
	data, _ := json.Marshal(refs) // plain strings always marshal
	if w.Annotations[binding.DependenciesAnnotation] == string(data) {
		return nil
	}
	patch := client.MergeFromWithOptions(w.DeepCopy(), client.MergeFromWithOptimisticLock{})
	if w.Annotations == nil {
		w.Annotations = map[string]string{}
	}
	w.Annotations[binding.DependenciesAnnotation] = string(data)
	defer r.Gate.Write()()
	if err := r.Client.Patch(ctx, w, patch); err != nil {
		return fmt.Errorf("record the dependencies of %s: %w", binding.Ref(w), err)
	}
	return nil
}

// require writes the workload binding's entry (its clusters) into the
// binding of dependency template dt, creating an attached binding if the
// dependency has none.
func (r *Reconciler) require(ctx context.Context, w *workv1alpha2.ResourceBinding, dt *unstructured.Unstructured, clusters []workv1alpha2.TargetCluster) error {
	name := binding.Name(dt.GetName(), dt.GetKind())
	b := &workv1alpha2.ResourceBinding{}
	err := r.Client.Get(ctx, client.ObjectKey{Namespace: w.Namespace, Name: name}, b)
	if apierrors.IsNotFound(err) {
		b = &workv1alpha2.ResourceBinding{ObjectMeta: metav1.ObjectMeta{Namespace: w.Namespace, Name: name,
			Labels: map[string]string{binding.PermanentIDLabel: uuid.NewString()}}}
		controllerutil.AddFinalizer(b, binding.Finalizer)
		conflict := r.desired(ctx, b, w, dt, clusters)
		done := r.Gate.Write()
		err = r.Client.Create(ctx, b)
		done()
		if err != nil {
			return fmt.Errorf("create the attached binding %s/%s: %w", w.Namespace, name, err)
		}
		r.reportPolicy(b, conflict)
		return nil
	}
	if err != nil {
		return err
	}
	if !b.DeletionTimestamp.IsZero() {
		return apierrors.NewConflict(workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings").GroupResource(), name,
			errors.New("the binding is being deleted; a new one is made once it is gone"))
	}
	if b.Spec.Resource.UID != "" && b.Spec.Resource.UID != dt.GetUID() {
		// The template was deleted and made again; the old binding goes
		// with it (owner reference), a new one comes after.
		return apierrors.NewConflict(workv1alpha2.SchemeGroupVersion.WithResource("resourcebindings").GroupResource(), name,
			errors.New("the binding belongs to an earlier object of the same name"))
	}
	current := b.DeepCopy()
	conflict := r.desired(ctx, b, w, dt, clusters)
	if equality.Semantic.DeepEqual(current, b) {
		r.reportPolicy(b, conflict)
		return nil
	}
	done := r.Gate.Write()
	defer done()
	if err := r.Client.Update(ctx, b); err != nil {
		return fmt.Errorf("update binding %s/%s: %w", w.Namespace, name, err)
	}
	r.reportPolicy(b, conflict)
	return nil
}

// reportPolicy raises DependencyPolicyConflict on the attached binding b
// when its requirers' settings conflict (conflict, from desired) and the
// conflict is new or different; nil records that they agree.
func (r *Reconciler) reportPolicy(b *workv1alpha2.ResourceBinding, conflict error) {
	if binding.Attached(b) && !policymatch.HasClaim(b.Labels) {
		r.Events.Outcome(dependencyPolicy, conflict, "", b)
	}
}

// desired writes into dependency binding b the workload binding's entry in
// spec.requiredBy and its depended-by label; and, on a binding no policy
// claims, the template's current reference (the binding controller renders
// once the binding names the version its cache has) and owner; and, on an
// attached binding, the conflict resolution of its requirers: Overwrite if
// any of them overwrites (so an Overwrite migration takes over the
// dependencies that already exist in the members), else Abort. It returns
// the requirers' conflict (see resolveConflictResolution), nil when they
// agree or b is not attached.
func (r *Reconciler) desired(ctx context.Context, b, w *workv1alpha2.ResourceBinding, dt *unstructured.Unstructured, clusters []workv1alpha2.TargetCluster) error {
	binding.SetRequirement(&b.Spec, workv1alpha2.BindingSnapshot{Namespace: w.Namespace, Name: w.Name, Clusters: clusters})
	if b.Labels == nil {
		b.Labels = map[string]string{}
	}
	b.Labels[binding.DependedByLabel(w.Namespace, w.Name)] = w.Labels[binding.PermanentIDLabel]
	if policymatch.HasClaim(b.Labels) {
		return nil // a policy claims the template: the detector writes the rest
	}
	binding.PointAt(b, dt)
	if !binding.Attached(b) {
		return nil
	}
	var conflict error
	b.Spec.ConflictResolution, b.Spec.PreserveResourcesOnDeletion, conflict = r.requirersPolicy(ctx, b, w)
	return conflict
}

// requirersPolicy resolves the conflict resolution and
// preserveResourcesOnDeletion of attached binding b from the bindings in
// its spec.requiredBy (resolveConflictResolution, resolvePreserve); the
// error joins their conflicts.
// w, if not nil, is one of them as this reconcile read it; requirers that
// are gone (or are not bindings: a MultiClusterService's entry) are
// skipped.
func (r *Reconciler) requirersPolicy(ctx context.Context, b, w *workv1alpha2.ResourceBinding) (policyv1alpha1.ConflictResolution, *bool, error) {
	var requirers []*workv1alpha2.ResourceBinding
	for _, s := range b.Spec.RequiredBy {
		rb := w
		if w == nil || s.Namespace != w.Namespace || s.Name != w.Name {
			rb = &workv1alpha2.ResourceBinding{}
			if err := r.Client.Get(ctx, client.ObjectKey{Namespace: s.Namespace, Name: s.Name}, rb); err != nil {
				continue // gone: its entry is released by its own reconcile
			}
		}
		requirers = append(requirers, rb)
	}
	cr, crConflict := resolveConflictResolution(requirers)
	preserve, preserveConflict := resolvePreserve(requirers)
	return cr, preserve, errors.Join(crConflict, preserveConflict)
}

// resolvePreserve is true if any of requirers preserves its resources on
// deletion (so does a dependency they share: deleting one workload's
// template must not take the others' dependencies from the members), nil
// when none does, as Karmada resolves it. The error is non-nil when they
// disagree, Karmada's DependencyPolicyConflict; it names both sides.
func resolvePreserve(requirers []*workv1alpha2.ResourceBinding) (*bool, error) {
	var keep, drop []string
	for _, rb := range requirers {
		if rb.Spec.PreserveResourcesOnDeletion != nil && *rb.Spec.PreserveResourcesOnDeletion {
			keep = append(keep, binding.Ref(rb))
		} else {
			drop = append(drop, binding.Ref(rb))
		}
	}
	switch {
	case len(keep) == 0:
		return nil, nil
	case len(drop) == 0:
		return ptr.To(true), nil
	}
	return ptr.To(true), fmt.Errorf("the workloads that require this dependency disagree on preserveResourcesOnDeletion: true in %s, false in %s; true is used",
		strings.Join(keep, ", "), strings.Join(drop, ", "))
}

// resolveConflictResolution is Overwrite if any of requirers resolves
// conflicts by overwriting, else Abort (an empty value is Abort), as
// Karmada resolves the settings of a dependency several workloads share.
// The error is non-nil when some overwrite and others abort, Karmada's
// DependencyPolicyConflict; it names both sides.
func resolveConflictResolution(requirers []*workv1alpha2.ResourceBinding) (policyv1alpha1.ConflictResolution, error) {
	var overwrite, abort []string
	for _, rb := range requirers {
		if rb.Spec.ConflictResolution == policyv1alpha1.ConflictOverwrite {
			overwrite = append(overwrite, binding.Ref(rb))
		} else {
			abort = append(abort, binding.Ref(rb))
		}
	}
	if len(overwrite) == 0 {
		return policyv1alpha1.ConflictAbort, nil
	}
	if len(abort) == 0 {
		return policyv1alpha1.ConflictOverwrite, nil
	}
	return policyv1alpha1.ConflictOverwrite, fmt.Errorf("the workloads that require this dependency disagree on conflictResolution: Overwrite in %s, Abort in %s; Overwrite is used",
		strings.Join(overwrite, ", "), strings.Join(abort, ", "))
}

// release removes workload binding w's entry from every dependency binding
// that holds one, except those named in keep, and deletes an attached
// binding that nothing requires any more (its template stays; the binding
// controller removes its copies from the members). Entries this
// controller did not write (a MultiClusterService's, on its Service's
// binding: no depended-by label) are not its to remove.
func (r *Reconciler) release(ctx context.Context, w types.NamespacedName, keep map[string]bool) error {
	list := &workv1alpha2.ResourceBindingList{}
	if err := r.Client.List(ctx, list, client.InNamespace(w.Namespace), client.MatchingFields{binding.RequiredByIndex: w.Namespace + "/" + w.Name}); err != nil {
		return fmt.Errorf("list the bindings %s/%s requires: %w", w.Namespace, w.Name, err)
	}
	var errs []error
	for i := range list.Items {
		b := &list.Items[i]
		if _, ours := b.Labels[binding.DependedByLabel(w.Namespace, w.Name)]; keep[b.Name] || !ours || !b.DeletionTimestamp.IsZero() {
			continue
		}
		binding.DropRequirement(&b.Spec, w.Namespace, w.Name)
		delete(b.Labels, binding.DependedByLabel(w.Namespace, w.Name))
		done := r.Gate.Write()
		var err error
		var conflict error
		deleted := len(b.Spec.RequiredBy) == 0 && binding.Attached(b) && !policymatch.HasClaim(b.Labels)
		if deleted {
			uid, rv := b.UID, b.ResourceVersion
			err = r.Client.Delete(ctx, b, client.Preconditions{UID: &uid, ResourceVersion: &rv})
			klog.FromContext(ctx).V(1).Info("Deleted attached binding: nothing requires it", "binding", klog.KObj(b))
		} else {
			if binding.Attached(b) && !policymatch.HasClaim(b.Labels) {
				b.Spec.ConflictResolution, b.Spec.PreserveResourcesOnDeletion, conflict = r.requirersPolicy(ctx, b, nil)
			}
			err = r.Client.Update(ctx, b)
		}
		done()
		switch {
		case deleted && (err == nil || apierrors.IsNotFound(err)):
			r.Events.Forget(b)
		case err == nil:
			r.reportPolicy(b, conflict)
		}
		if err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("release %s from %s: %w", binding.Ref(b), w, err))
		}
	}
	return errors.Join(errs...)
}
