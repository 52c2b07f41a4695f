// Package namespace implements namespace sync: every user namespace created
// on the control plane follows to every member cluster, through one Work per
// cluster in its execution namespace, as Karmada's namespace sync controller
// does. Deleting the namespace removes those Works and so the member
// namespaces Flotilla created.
package namespace

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/binding"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/policymatch"
)

// SkipAutoPropagationLabel, set to "true" on a namespace, keeps it on the
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
}

// DefaultSkippedPatterns is Karmada's default skip list.
var DefaultSkippedPatterns = []string{"kube-.*"}

// SetupWithManager registers the controller; a new or removed cluster
// re-syncs every namespace.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named("namespace-sync").
		For(&corev1.Namespace{}).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []ctrl.Request {
			list := &corev1.NamespaceList{}
			if err := r.Client.List(ctx, list); err != nil {
				return nil
			}
			reqs := make([]ctrl.Request, 0, len(list.Items))
			for _, ns := range list.Items {
				reqs = append(reqs, ctrl.Request{NamespacedName: client.ObjectKey{Name: ns.Name}})
			}
			return reqs
		})).
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
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	ns := &corev1.Namespace{}
	err := r.Client.Get(ctx, req.NamespacedName, ns)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	wantSync := err == nil && ns.DeletionTimestamp.IsZero() && !r.Skip(ns)
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, err
	}
	workName := binding.WorkName("Namespace", "", req.Name)
	for _, c := range clusters.Items {
		w := &workv1alpha1.Work{}
		w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(c.Name), workName
		if !wantSync || !c.DeletionTimestamp.IsZero() {
			if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
				return ctrl.Result{}, err
			}
			continue
		}
		if err := r.ensure(ctx, w, ns); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func (r *Reconciler) ensure(ctx context.Context, w *workv1alpha1.Work, ns *corev1.Namespace) error {
	labels := map[string]any{membercluster.ManagedLabel: "true"}
	for k, v := range ns.Labels {
		if k != "kubernetes.io/metadata.name" {
			labels[k] = v
		}
	}
	manifest := map[string]any{
		"apiVersion": "v1", "kind": "Namespace",
		"metadata": map[string]any{
			"name":   ns.Name,
			"labels": labels,
			"annotations": map[string]any{
				binding.WorkNameAnnotation:      w.Name,
				binding.WorkNamespaceAnnotation: w.Namespace,
				// A namespace that already exists in a member is adopted:
				// taking it over changes nothing but labels.
				policymatch.ConflictResolutionAnnotation: policymatch.ConflictResolutionOverwrite,
			},
		},
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	err = r.Client.Get(ctx, client.ObjectKeyFromObject(w), w)
	if err != nil && !apierrors.IsNotFound(err) {
		return err
	}
	exists := err == nil
	if exists && len(w.Spec.Workload.Manifests) == 1 && string(w.Spec.Workload.Manifests[0].Raw) == string(raw) {
		return nil
	}
	w.Labels = map[string]string{SyncLabel: "true"}
	w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	if exists {
		return r.Client.Update(ctx, w)
	}
	if err := r.Client.Create(ctx, w); err != nil && !apierrors.IsAlreadyExists(err) {
		return err
	}
	return nil
}
