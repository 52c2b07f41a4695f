// Package namespace implements namespace sync: every user namespace created
// on the control plane follows to every member cluster, through one Work per
// cluster in its execution namespace, as Karmada's namespace sync controller
// does. Deleting the namespace removes those Works and so the member
// namespaces Flotilla created.
package namespace

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/core/override"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// SkipAutoPropagationLabel is the label that, set to "true" on a namespace, keeps it on the
// control plane only (Karmada's label).
const SkipAutoPropagationLabel = "namespace.karmada.io/skip-auto-propagation"

// SyncLabel marks the Works this controller owns.
const SyncLabel = "namespace.karmada.io/sync"

// Reconciler syncs one namespace to every member cluster.
type Reconciler struct {
	Client client.Client
	// SkippedPatterns are regular expressions of namespaces never synced
	// (Karmada's --skipped-propagating-namespaces, default kube-.*).
	SkippedPatterns []*regexp.Regexp
	// Events, if set, gets Karmada's ApplyOverridePolicySucceed and
	// ApplyOverridePolicyFailed on the namespace, per ClusterOverridePolicy
	// and cluster, when the outcome changes.
	Events *eventrecord.Recorder

	validity override.Validity
}

// DefaultSkippedPatterns is Karmada's default skip list.
var DefaultSkippedPatterns = []string{"kube-.*"}

// SetupWithManager registers the controller. A cluster that comes, goes or
// changes its labels or spec (which ClusterOverridePolicies select), and
// any ClusterOverridePolicy change, re-sync every namespace; so does a
// namespace Work changed or deleted by someone else.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	all := handler.EnqueueRequestsFromMapFunc(queue.All(r.Client, func() client.ObjectList { return &corev1.NamespaceList{} }))
	return ctrl.NewControllerManagedBy(mgr).Named("namespace-sync").
		For(&corev1.Namespace{}).
		Watches(&clusterv1alpha1.Cluster{}, all,
			builder.WithPredicates(queue.NotInitialList, predicate.Or(predicate.GenerationChangedPredicate{}, predicate.LabelChangedPredicate{}))).
		Watches(&policyv1alpha1.ClusterOverridePolicy{}, all, builder.WithPredicates(queue.NotInitialList)).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			if o.GetLabels()[SyncLabel] != "true" || len(o.(*workv1alpha1.Work).Spec.Workload.Manifests) == 0 {
				return nil
			}
			var m struct {
				Metadata struct{ Name string } `json:"metadata"`
			}
			if json.Unmarshal(o.(*workv1alpha1.Work).Spec.Workload.Manifests[0].Raw, &m) != nil || m.Metadata.Name == "" {
				return nil
			}
			return []ctrl.Request{{NamespacedName: client.ObjectKey{Name: m.Metadata.Name}}}
		}), builder.WithPredicates(predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
		})).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

// Skip reports whether a namespace stays on the control plane: default,
// Karmada's own and execution namespaces, the skip patterns, and namespaces
// labelled namespace.karmada.io/skip-auto-propagation=true.
func (r *Reconciler) Skip(ns *corev1.Namespace) bool {
	name := ns.Name
	if name == "default" || name == "karmada-system" || name == "karmada-cluster" || strings.HasPrefix(name, clusterv1alpha1.ExecutionSpacePrefix) {
		return true
	}
	if ns.Labels[SkipAutoPropagationLabel] == "true" {
		return true
	}
	for _, p := range r.SkippedPatterns {
		if p.MatchString(name) {
			return true
		}
	}
	return false
}

// Reconcile makes the namespace's Works match the clusters.
//
// A namespace deleted on the control plane is deleted from the members with
// its Works. A namespace that stops being synced while it exists (labelled
// skip-auto-propagation, or matched by a skip pattern added later) keeps
// its member copies and everything in them: its Works are released with
// preserveResourcesOnDeletion, so only further syncing stops.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, req.NamespacedName, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, fmt.Errorf("get namespace %s: %w", req.Name, err)
	}
	gone := err != nil || !ns.DeletionTimestamp.IsZero()
	wantSync := !gone && !r.Skip(ns)
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	var cops []*policyv1alpha1.ClusterOverridePolicy
	if wantSync {
		if cops, err = r.overrides(ctx); err != nil {
			return ctrl.Result{}, err
		}
	}
	workName := binding.WorkName("Namespace", "", req.Name)
	for i := range clusters.Items {
		c := &clusters.Items[i]
		w := &workv1alpha1.Work{}
		w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(c.Name), workName
		switch {
		case !c.DeletionTimestamp.IsZero():
			err = r.release(ctx, w, false)
		case !wantSync:
			err = r.release(ctx, w, !gone)
		default:
			err = r.ensure(ctx, w, ns, c, cops)
		}
		if err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

// overrides lists the ClusterOverridePolicies, which may select namespaces.
func (r *Reconciler) overrides(ctx context.Context) ([]*policyv1alpha1.ClusterOverridePolicy, error) {
	list := &policyv1alpha1.ClusterOverridePolicyList{}
	if err := r.Client.List(ctx, list); err != nil {
		return nil, fmt.Errorf("list ClusterOverridePolicies: %w", err)
	}
	out := make([]*policyv1alpha1.ClusterOverridePolicy, 0, len(list.Items))
	for i := range list.Items {
		out = append(out, &list.Items[i])
	}
	// Invalid policies (ValidationFailed) take effect nowhere.
	_, out = r.validity.InForce(nil, out)
	return out, nil
}

// release deletes a namespace Work; with preserve, the member namespace
// stays (the Work is first marked preserveResourcesOnDeletion).
func (r *Reconciler) release(ctx context.Context, w *workv1alpha1.Work, preserve bool) error {
	if preserve {
		if err := r.Client.Get(ctx, client.ObjectKeyFromObject(w), w); err != nil {
			return client.IgnoreNotFound(err)
		}
		if !w.DeletionTimestamp.IsZero() {
			return nil
		}
		if w.Spec.PreserveResourcesOnDeletion == nil || !*w.Spec.PreserveResourcesOnDeletion {
			w.Spec.PreserveResourcesOnDeletion = ptr.To(true)
			if err := r.Client.Update(ctx, w); err != nil {
				return fmt.Errorf("keep the member namespace of Work %s/%s: %w", w.Namespace, w.Name, err)
			}
		}
	}
	if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete Work %s/%s: %w", w.Namespace, w.Name, err)
	}
	return nil
}

// ensure writes the Work carrying the namespace to cluster c, with the
// ClusterOverridePolicies that select the namespace applied.
func (r *Reconciler) ensure(ctx context.Context, w *workv1alpha1.Work, ns *corev1.Namespace, c *clusterv1alpha1.Cluster, cops []*policyv1alpha1.ClusterOverridePolicy) error {
	manifest, applied, workAnnotations, err := namespaceManifest(w, ns, c, cops)
	// Karmada's ApplyOverridePolicySucceed and ApplyOverridePolicyFailed
	// on the namespace, per policy and cluster, when they change.
	for _, o := range override.Outcomes("", c.Name, applied, err) {
		r.Events.Outcome(eventrecord.Operation{Succeed: events.ApplyOverridePolicySucceed, Failed: events.ApplyOverridePolicyFailed, Instance: o.Instance()},
			o.Failure(), o.Message(), ns)
	}
	if err != nil {
		// The namespace keeps its last good copy in this cluster; the
		// policy's own checks (ValidationFailed) say what to fix.
		log.FromContext(ctx).Info("namespace override does not apply; keeping the cluster's copy", "namespace", ns.Name, "cluster", c.Name, "err", err)
		return nil
	}
	raw, err := json.Marshal(manifest.Object)
	if err != nil {
		return fmt.Errorf("encode namespace %s: %w", ns.Name, err)
	}
	return binding.EnsureWork(ctx, r.Client, w, func(w *workv1alpha1.Work) bool {
		return len(w.Spec.Workload.Manifests) == 1 && string(w.Spec.Workload.Manifests[0].Raw) == string(raw) &&
			w.Spec.PreserveResourcesOnDeletion == nil && override.SameWorkAnnotations(w.Annotations, workAnnotations)
	}, func(w *workv1alpha1.Work) {
		w.Labels = map[string]string{SyncLabel: "true"}
		w.Annotations = override.SetWorkAnnotations(w.Annotations, workAnnotations)
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
		w.Spec.PreserveResourcesOnDeletion = nil
	})
}

// namespaceManifest is the namespace as Work w carries it to cluster c: its
// labels and annotations, the ClusterOverridePolicies that select it applied,
// then Flotilla's managed labels and annotations; and the annotations that
// record the applied overrides on the Work, with what was applied. Errors
// are an override that does not apply.
func namespaceManifest(w *workv1alpha1.Work, ns *corev1.Namespace, c *clusterv1alpha1.Cluster, cops []*policyv1alpha1.ClusterOverridePolicy) (*unstructured.Unstructured, override.Applied, map[string]string, error) {
	labels := map[string]any{}
	for k, v := range ns.Labels {
		if k != "kubernetes.io/metadata.name" {
			labels[k] = v
		}
	}
	manifest := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{"name": ns.Name, "labels": labels},
	}}
	if len(ns.Annotations) > 0 {
		ann := map[string]any{}
		for k, v := range ns.Annotations {
			if k != corev1.LastAppliedConfigAnnotation {
				ann[k] = v
			}
		}
		manifest.Object["metadata"].(map[string]any)["annotations"] = ann
	}
	manifest, applied, workAnnotations, err := override.ApplyForWork(manifest, c, nil, cops)
	if err != nil {
		return nil, override.Applied{}, nil, err
	}
	ann := binding.MarkManaged(manifest, registry.ManagedLabel, w.Namespace, w.Name)
	// A namespace that already exists in a member is adopted: taking it
	// over changes nothing but labels and annotations.
	ann[policymatch.ConflictResolutionAnnotation] = policymatch.ConflictResolutionOverwrite
	manifest.SetAnnotations(ann)
	return manifest, applied, workAnnotations, nil
}
