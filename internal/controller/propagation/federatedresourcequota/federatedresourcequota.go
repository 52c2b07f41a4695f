// Package federatedresourcequota runs Karmada's FederatedResourceQuota controllers
// (policy.karmada.io/v1alpha1):
//
//   - federatedResourceQuotaSync (SyncReconciler): one ResourceQuota, named and namespaced as
//     the quota, with staticAssignments[i].hard, in each listed member, carried by a Work in
//     the member's execution namespace labelled federatedresourcequota.karmada.io/namespace and
//     /name; a Work whose cluster is no longer listed, or whose quota is gone, is deleted, and
//     unlisted clusters get nothing (Karmada v1.14 and later). Events SyncWorkSucceed and
//     SyncWorkFailed on the quota.
//   - federatedResourceQuotaStatus (StatusReconciler): status.aggregatedStatus, each listed
//     member's ResourceQuota hard and used as its Work reflects them, and, with
//     FederatedQuotaEnforcement off, overall (spec.overall) and overallUsed (the members' used
//     summed). Events AggregateStatusSucceed and AggregateStatusFailed.
//   - federatedResourceQuotaEnforcement (EnforcementReconciler, with FederatedQuotaEnforcement):
//     overall and overallUsed from the namespace's ResourceBindings (quota.Usage of each
//     placement, the resources overall names), on every quota change, binding change and every
//     --federated-resource-quota-sync-period. Events CollectOverallStatusSucceed and
//     CollectOverallStatusFailed. The scheduler refuses placements past overall (QuotaExceeded).
package federatedresourcequota

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/quota"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// The controllers' names in --controllers, Karmada's.
const (
	SyncControllerName        = "federatedResourceQuotaSync"
	StatusControllerName      = "federatedResourceQuotaStatus"
	EnforcementControllerName = "federatedResourceQuotaEnforcement"
)

// The labels on a quota's Works, Karmada's: the quota's namespace and name.
const (
	NamespaceLabel = "federatedresourcequota.karmada.io/namespace"
	NameLabel      = "federatedresourcequota.karmada.io/name"
)

// DefaultSyncPeriod is --federated-resource-quota-sync-period's default, Karmada's 5 minutes.
const DefaultSyncPeriod = 5 * time.Minute

// quotaOfWork maps a quota's Work to the quota.
func quotaOfWork(_ context.Context, o client.Object) []ctrl.Request {
	ns, name := o.GetLabels()[NamespaceLabel], o.GetLabels()[NameLabel]
	if ns == "" || name == "" {
		return nil
	}
	return []ctrl.Request{{NamespacedName: client.ObjectKey{Namespace: ns, Name: name}}}
}

// quotaWorks lets through only the events of quota Works: every other Work (one per template
// and cluster) is dropped on a label lookup, before any comparison of specs or statuses.
var quotaWorks = predicate.NewPredicateFuncs(func(o client.Object) bool {
	return o.GetLabels()[NameLabel] != ""
})

// listQuotaWorks lists the Works of quota namespace/name.
func listQuotaWorks(ctx context.Context, c client.Reader, namespace, name string) ([]workv1alpha1.Work, error) {
	list := &workv1alpha1.WorkList{}
	if err := c.List(ctx, list, client.MatchingLabels{NamespaceLabel: namespace, NameLabel: name}); err != nil {
		return nil, fmt.Errorf("list the Works of FederatedResourceQuota %s/%s: %w", namespace, name, err)
	}
	return list.Items, nil
}

// SyncReconciler is federatedResourceQuotaSync.
type SyncReconciler struct {
	Client client.Client
	// Events, if set, gets SyncWorkSucceed and SyncWorkFailed on the quota.
	Events *eventrecord.Recorder
}

// SetupWithManager registers the controller: quotas, the clusters coming and going, and
// quota Works changed or deleted by someone else.
func (r *SyncReconciler) SetupWithManager(mgr ctrl.Manager) error {
	allQuotas := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, _ client.Object) []ctrl.Request {
		list := &policyv1alpha1.FederatedResourceQuotaList{}
		if err := r.Client.List(ctx, list); err != nil {
			return nil
		}
		out := make([]ctrl.Request, 0, len(list.Items))
		for _, q := range list.Items {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&q)})
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).Named(SyncControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&clusterv1alpha1.Cluster{}, allQuotas, builder.WithPredicates(queue.NotInitialList, predicate.Funcs{
			UpdateFunc: func(event.UpdateEvent) bool { return false },
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork), builder.WithPredicates(quotaWorks, predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool { return e.ObjectOld.GetGeneration() != e.ObjectNew.GetGeneration() },
		})).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

// syncWork is the operation whose outcome the sync controller reports.
var syncWork = eventrecord.Operation{Succeed: events.SyncWorkSucceed, Failed: events.SyncWorkFailed}

// Reconcile makes the quota's Works match its staticAssignments.
func (r *SyncReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	err := r.Client.Get(ctx, req.NamespacedName, q)
	if err != nil && !apierrors.IsNotFound(err) {
		return ctrl.Result{}, err
	}
	gone := apierrors.IsNotFound(err) || !q.DeletionTimestamp.IsZero()
	works, err := listQuotaWorks(ctx, r.Client, req.Namespace, req.Name)
	if err != nil {
		return ctrl.Result{}, err
	}
	want := map[string]corev1.ResourceList{}
	if !gone {
		clusters := &clusterv1alpha1.ClusterList{}
		if err := r.Client.List(ctx, clusters); err != nil {
			return ctrl.Result{}, fmt.Errorf("list clusters: %w", err)
		}
		for _, c := range clusters.Items {
			for _, a := range q.Spec.StaticAssignments {
				if a.ClusterName == c.Name && c.DeletionTimestamp.IsZero() {
					want[c.Name] = a.Hard
				}
			}
		}
	}
	var errs []error
	for i := range works {
		w := &works[i]
		if _, keep := want[strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix)]; keep {
			continue
		}
		if err := r.Client.Delete(ctx, w); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("delete Work %s/%s: %w", w.Namespace, w.Name, err))
		}
	}
	if gone {
		return ctrl.Result{}, errors.Join(errs...)
	}
	for cluster, hard := range want {
		if err := r.ensure(ctx, q, cluster, hard); err != nil {
			errs = append(errs, err)
		}
	}
	err = errors.Join(errs...)
	r.Events.Outcome(syncWork, err, "Sync work of FederatedResourceQuota("+req.String()+") succeed.", q)
	return ctrl.Result{}, err
}

// ensure writes the Work carrying q's ResourceQuota with hard to cluster.
func (r *SyncReconciler) ensure(ctx context.Context, q *policyv1alpha1.FederatedResourceQuota, cluster string, hard corev1.ResourceList) error {
	w := &workv1alpha1.Work{}
	w.Namespace, w.Name = clusterv1alpha1.ExecutionSpacePrefix+cluster, binding.WorkName("ResourceQuota", q.Namespace, q.Name)
	hardJSON := map[string]any{}
	for k, v := range hard {
		hardJSON[string(k)] = v.String()
	}
	rq := &unstructured.Unstructured{Object: map[string]any{
		"apiVersion": "v1", "kind": "ResourceQuota",
		"metadata": map[string]any{"namespace": q.Namespace, "name": q.Name},
		"spec":     map[string]any{"hard": hardJSON},
	}}
	rq.SetAnnotations(binding.MarkManaged(rq, registry.ManagedLabel, w.Namespace, w.Name))
	raw, err := json.Marshal(rq.Object)
	if err != nil {
		return fmt.Errorf("encode the ResourceQuota of %s/%s: %w", q.Namespace, q.Name, err)
	}
	labels := map[string]string{NamespaceLabel: q.Namespace, NameLabel: q.Name}
	return binding.EnsureWork(ctx, r.Client, w, func(w *workv1alpha1.Work) bool {
		return len(w.Spec.Workload.Manifests) == 1 && string(w.Spec.Workload.Manifests[0].Raw) == string(raw) && equality.Semantic.DeepEqual(w.Labels, labels)
	}, func(w *workv1alpha1.Work) {
		w.Labels = labels
		w.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
	})
}

// StatusReconciler is federatedResourceQuotaStatus.
type StatusReconciler struct {
	Client client.Client
	// Enforcement is FederatedQuotaEnforcement: overall and overallUsed are then the
	// EnforcementReconciler's.
	Enforcement bool
	// Events, if set, gets AggregateStatusSucceed and AggregateStatusFailed on the quota.
	Events *eventrecord.Recorder
}

// SetupWithManager registers the controller: quotas, and quota Works whose status changes
// or which go.
func (r *StatusReconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(StatusControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(quotaOfWork), builder.WithPredicates(quotaWorks, predicate.Funcs{
			CreateFunc: func(event.CreateEvent) bool { return false },
			UpdateFunc: func(e event.UpdateEvent) bool {
				return !equality.Semantic.DeepEqual(e.ObjectOld.(*workv1alpha1.Work).Status, e.ObjectNew.(*workv1alpha1.Work).Status)
			},
		})).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

// aggregateStatus is the operation whose outcome the status controller reports.
var aggregateStatus = eventrecord.Operation{Succeed: events.AggregateStatusSucceed, Failed: events.AggregateStatusFailed}

// Reconcile writes the quota's aggregatedStatus (and overall and overallUsed, without
// enforcement) from its Works.
func (r *StatusReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	if err := r.Client.Get(ctx, req.NamespacedName, q); err != nil || !q.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	works, err := listQuotaWorks(ctx, r.Client, q.Namespace, q.Name)
	if err == nil {
		var statuses []policyv1alpha1.ClusterQuotaStatus
		statuses, err = aggregated(works)
		if err == nil {
			err = r.write(ctx, q, statuses)
		}
	}
	if apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	}
	r.Events.Outcome(aggregateStatus, err, "Collect status of FederatedResourceQuota("+req.String()+") succeed.", q)
	return ctrl.Result{}, err
}

// aggregated reads each applied Work's reflected ResourceQuota status, sorted by cluster.
// Works not applied yet, or without a reflected status, are left out. Errors: a reflected
// status that is not a ResourceQuota's.
func aggregated(works []workv1alpha1.Work) ([]policyv1alpha1.ClusterQuotaStatus, error) {
	var out []policyv1alpha1.ClusterQuotaStatus
	for _, w := range works {
		if !meta.IsStatusConditionTrue(w.Status.Conditions, workv1alpha1.WorkApplied) || len(w.Status.ManifestStatuses) == 0 ||
			w.Status.ManifestStatuses[0].Status == nil {
			continue
		}
		s := corev1.ResourceQuotaStatus{}
		if err := json.Unmarshal(w.Status.ManifestStatuses[0].Status.Raw, &s); err != nil {
			return nil, fmt.Errorf("read the ResourceQuota status Work %s/%s reflects: %w", w.Namespace, w.Name, err)
		}
		out = append(out, policyv1alpha1.ClusterQuotaStatus{ClusterName: strings.TrimPrefix(w.Namespace, clusterv1alpha1.ExecutionSpacePrefix), ResourceQuotaStatus: s})
	}
	slices.SortFunc(out, func(a, b policyv1alpha1.ClusterQuotaStatus) int { return strings.Compare(a.ClusterName, b.ClusterName) })
	return out, nil
}

func (r *StatusReconciler) write(ctx context.Context, q *policyv1alpha1.FederatedResourceQuota, statuses []policyv1alpha1.ClusterQuotaStatus) error {
	status := *q.Status.DeepCopy()
	status.AggregatedStatus = statuses
	if !r.Enforcement {
		used := make([]corev1.ResourceList, 0, len(statuses))
		for _, s := range statuses {
			used = append(used, s.Used)
		}
		status.Overall, status.OverallUsed = q.Spec.Overall, quota.Sum(q.Spec.Overall, used...)
	}
	return patchStatus(ctx, r.Client, q, status)
}

// patchStatus writes status onto q when it differs, with q's resourceVersion.
func patchStatus(ctx context.Context, c client.Client, q *policyv1alpha1.FederatedResourceQuota, status policyv1alpha1.FederatedResourceQuotaStatus) error {
	if equality.Semantic.DeepEqual(q.Status, status) {
		return nil
	}
	patch := client.MergeFromWithOptions(q.DeepCopy(), client.MergeFromWithOptimisticLock{})
	q.Status = status
	if err := c.Status().Patch(ctx, q, patch); err != nil {
		return fmt.Errorf("write the status of FederatedResourceQuota %s/%s: %w", q.Namespace, q.Name, err)
	}
	return nil
}

// EnforcementReconciler is federatedResourceQuotaEnforcement.
type EnforcementReconciler struct {
	Client client.Client
	// SyncPeriod is --federated-resource-quota-sync-period: how often overallUsed is
	// recomputed whatever happens; 0 is DefaultSyncPeriod.
	SyncPeriod time.Duration
	// Events, if set, gets CollectOverallStatusSucceed and CollectOverallStatusFailed.
	Events *eventrecord.Recorder
}

// SetupWithManager registers the controller: quotas, and the ResourceBindings of their
// namespaces.
func (r *EnforcementReconciler) SetupWithManager(mgr ctrl.Manager) error {
	inNamespace := handler.EnqueueRequestsFromMapFunc(func(ctx context.Context, o client.Object) []ctrl.Request {
		list := &policyv1alpha1.FederatedResourceQuotaList{}
		if err := r.Client.List(ctx, list, client.InNamespace(o.GetNamespace())); err != nil {
			return nil
		}
		out := make([]ctrl.Request, 0, len(list.Items))
		for _, q := range list.Items {
			out = append(out, ctrl.Request{NamespacedName: client.ObjectKeyFromObject(&q)})
		}
		return out
	})
	return ctrl.NewControllerManagedBy(mgr).Named(EnforcementControllerName).
		For(&policyv1alpha1.FederatedResourceQuota{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		Watches(&workv1alpha2.ResourceBinding{}, inNamespace, builder.WithPredicates(queue.NotInitialList, predicate.Funcs{
			UpdateFunc: func(e event.UpdateEvent) bool {
				o, n := e.ObjectOld.(*workv1alpha2.ResourceBinding), e.ObjectNew.(*workv1alpha2.ResourceBinding)
				return !equality.Semantic.DeepEqual(o.Spec.Clusters, n.Spec.Clusters) || !equality.Semantic.DeepEqual(o.Spec.ReplicaRequirements, n.Spec.ReplicaRequirements) ||
					!equality.Semantic.DeepEqual(o.Spec.Components, n.Spec.Components)
			},
		})).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

// collectOverall is the operation whose outcome the enforcement controller reports.
var collectOverall = eventrecord.Operation{Succeed: events.CollectOverallStatusSucceed, Failed: events.CollectOverallStatusFailed}

// Reconcile writes overall and overallUsed from the namespace's bindings, and looks again
// after the sync period.
func (r *EnforcementReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	q := &policyv1alpha1.FederatedResourceQuota{}
	if err := r.Client.Get(ctx, req.NamespacedName, q); err != nil || !q.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	list := &workv1alpha2.ResourceBindingList{}
	err := r.Client.List(ctx, list, client.InNamespace(q.Namespace))
	if err == nil {
		used := quota.Namespace(q.Spec.Overall, list.Items, nil)
		status := *q.Status.DeepCopy()
		status.Overall, status.OverallUsed = q.Spec.Overall, used
		err = patchStatus(ctx, r.Client, q, status)
	}
	if apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	}
	r.Events.Outcome(collectOverall, err, "Collect overall status of FederatedResourceQuota("+req.String()+") succeed.", q)
	period := r.SyncPeriod
	if period <= 0 {
		period = DefaultSyncPeriod
	}
	return reconciler.Result(ctrl.Result{RequeueAfter: period}, err)
}
