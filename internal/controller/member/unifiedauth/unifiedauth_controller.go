// Package unifiedauth is Karmada's unifiedAuth controller: it keeps, in
// every member with an impersonator (Cluster spec.impersonatorSecretRef),
// a ClusterRole karmada-impersonator whose impersonate rules list exactly
// the users, groups and service accounts that control-plane RBAC lets reach
// that cluster (clusters/proxy, for that cluster or every one, or
// karmada-search's proxying/proxy), bound to the member's service account
// karmada-impersonator. The Cluster proxy authenticates to the member as
// that service account and impersonates the caller, so a caller reaches a
// member only while the control plane grants it, and then with the
// member's own rights.
//
// Both objects travel as Works in the cluster's execution namespace, owned
// by the Cluster, so Push and Pull members get them the same way (the
// execution controller, or the Pull agent, applies them). The Works are
// rewritten when a Cluster is created or gets an impersonator, and when
// any ClusterRole or ClusterRoleBinding changes.
package unifiedauth

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"time"

	rbacv1 "k8s.io/api/rbac/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers (Karmada's).
const ControllerName = "unifiedAuth"

// EventSource is the component of its events (Karmada's controller name).
const EventSource = "unified-auth-controller"

// ImpersonatorName names, in every member, the ClusterRole, the
// ClusterRoleBinding and the service account (in the namespace of the
// Cluster's impersonatorSecretRef, karmada-cluster) of unified
// authentication, as Karmada names them.
const ImpersonatorName = "karmada-impersonator"

// namespaceWait is how soon a Cluster whose execution namespace is not
// there yet is looked at again.
const namespaceWait = time.Second

// systemLabel marks the objects as Karmada's own (karmada.io/system).
const systemLabel = "karmada.io/system"

var syncImpersonation = eventrecord.Operation{Succeed: events.SyncImpersonationConfigSucceed, Failed: events.SyncImpersonationConfigFailed}

// Reconciler writes the impersonation Works of one Cluster.
type Reconciler struct {
	// Client reads Clusters, ClusterRoles and ClusterRoleBindings (cached)
	// and writes Works.
	Client client.Client
	// Events raises SyncImpersonationConfigSucceed when the Works change and
	// SyncImpersonationConfigFailed when they cannot be written, on the
	// Cluster.
	Events *eventrecord.Recorder
}

var _ reconcile.Reconciler = &Reconciler{}

// SetupWithManager reconciles a Cluster when it is created or gets an
// impersonator, and every Cluster when a ClusterRole or ClusterRoleBinding
// changes (which clusters a change concerns depends on the role's rules,
// also before the change; the Works are rewritten only when they differ).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	allClusters := handler.EnqueueRequestsFromMapFunc(queue.All(r.Client, func() client.ObjectList { return &clusterv1alpha1.ClusterList{} }))
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&clusterv1alpha1.Cluster{}, builder.WithPredicates(predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !reflect.DeepEqual(e.ObjectOld.(*clusterv1alpha1.Cluster).Spec.ImpersonatorSecretRef, e.ObjectNew.(*clusterv1alpha1.Cluster).Spec.ImpersonatorSecretRef)
			},
			DeleteFunc: func(event.DeleteEvent) bool { return false },
		})).
		Watches(&rbacv1.ClusterRole{}, allClusters).
		Watches(&rbacv1.ClusterRoleBinding{}, allClusters).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

// Reconcile writes the Works carrying cluster's karmada-impersonator
// ClusterRole (rules from Subjects and ImpersonationRules) and
// ClusterRoleBinding. A Cluster without an impersonator, or being deleted
// (its Works go with it), is left alone; one whose execution namespace is
// not there yet is looked at again in namespaceWait. Errors are retried; a
// Conflict sooner (reconciler.Result).
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	cluster := &clusterv1alpha1.Cluster{}
	if err := r.Client.Get(ctx, req.NamespacedName, cluster); err != nil {
		if client.IgnoreNotFound(err) == nil {
			r.Events.Forget(&clusterv1alpha1.Cluster{ObjectMeta: metav1.ObjectMeta{Name: req.Name}})
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !cluster.DeletionTimestamp.IsZero() || cluster.Spec.ImpersonatorSecretRef == nil {
		return ctrl.Result{}, nil
	}
	changed, err := r.sync(ctx, cluster)
	if apierrors.IsNotFound(err) {
		// The execution namespace is not there yet: the cluster controller
		// makes it right after the Cluster. Not worth a warning.
		return ctrl.Result{RequeueAfter: namespaceWait}, nil
	}
	if err != nil || changed {
		r.Events.Happened(syncImpersonation, err, "Sync impersonation config succeed.", cluster)
	}
	return reconciler.Result(ctrl.Result{}, err)
}

// sync writes both Works; changed reports whether either was written.
func (r *Reconciler) sync(ctx context.Context, cluster *clusterv1alpha1.Cluster) (changed bool, err error) {
	roles := &rbacv1.ClusterRoleList{}
	if err := r.Client.List(ctx, roles); err != nil {
		return false, fmt.Errorf("list ClusterRoles: %w", err)
	}
	bindings := &rbacv1.ClusterRoleBindingList{}
	if err := r.Client.List(ctx, bindings); err != nil {
		return false, fmt.Errorf("list ClusterRoleBindings: %w", err)
	}
	meta := metav1.ObjectMeta{Name: ImpersonatorName, Labels: map[string]string{systemLabel: "true"}}
	role := &rbacv1.ClusterRole{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRole"},
		ObjectMeta: *meta.DeepCopy(),
		Rules:      ImpersonationRules(Subjects(cluster.Name, roles.Items, bindings.Items)),
	}
	roleBinding := &rbacv1.ClusterRoleBinding{
		TypeMeta:   metav1.TypeMeta{APIVersion: rbacv1.SchemeGroupVersion.String(), Kind: "ClusterRoleBinding"},
		ObjectMeta: *meta.DeepCopy(),
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.ServiceAccountKind, Namespace: cluster.Spec.ImpersonatorSecretRef.Namespace, Name: ImpersonatorName}},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: ImpersonatorName},
	}
	for _, obj := range []runtime.Object{role, roleBinding} {
		wrote, err := r.ensureWork(ctx, cluster, obj)
		if err != nil {
			return changed, err
		}
		changed = changed || wrote
	}
	return changed, nil
}

// ensureWork writes the Work carrying obj to cluster, owned by the Cluster;
// wrote reports whether it was created or changed.
func (r *Reconciler) ensureWork(ctx context.Context, cluster *clusterv1alpha1.Cluster, obj runtime.Object) (wrote bool, err error) {
	raw, err := runtime.DefaultUnstructuredConverter.ToUnstructured(obj)
	if err != nil {
		return false, err
	}
	m := &unstructured.Unstructured{Object: raw}
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = clusterv1alpha1.ExecutionNamespace(cluster.Name), binding.WorkName(m.GetKind(), "", m.GetName())
	ann := binding.MarkManaged(m, registry.ManagedLabel, w.Namespace, w.Name)
	// A karmada-impersonator already in the member (karmadactl joined it
	// once) is taken over.
	ann[policymatch.ConflictResolutionAnnotation] = policymatch.ConflictResolutionOverwrite
	m.SetAnnotations(ann)
	manifest, err := json.Marshal(m.Object)
	if err != nil {
		return false, err
	}
	owner := *metav1.NewControllerRef(cluster, clusterv1alpha1.SchemeGroupVersion.WithKind("Cluster"))
	err = binding.EnsureWork(ctx, r.Client, w, func(w *workv1alpha1.Work) bool {
		return len(w.Spec.Workload.Manifests) == 1 && string(w.Spec.Workload.Manifests[0].Raw) == string(manifest) &&
			len(w.OwnerReferences) == 1 && w.OwnerReferences[0].UID == cluster.UID
	}, func(w *workv1alpha1.Work) {
		w.Labels = map[string]string{systemLabel: "true"}
		w.OwnerReferences = []metav1.OwnerReference{owner}
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: manifest}}}
		wrote = true
	})
	return wrote, err
}
