// Package descheduler is Karmada's karmada-descheduler, as a controller of the controller
// manager (off by default: --controllers=*,descheduler). Every --descheduling-interval it looks
// at each ResourceBinding divided by dynamic weights (replicaDivisionPreference Weighted with
// weightPreference.dynamicWeight): in each member it is scheduled to, the replicas the member
// cannot run (pods of the workload that the member's scheduler has found no node for, for
// --unschedulable-threshold or longer) are taken out of that cluster's share in
// spec.clusters. The scheduler then places them again where there is room. Events
// DescheduleBindingSucceed and DescheduleBindingFailed on the binding and its template.
//
// Karmada asks each member's karmada-scheduler-estimator (GetUnschedulableReplicas); Flotilla
// reads the same from the informers it keeps on the member's pods (registry.Nodes). Pull-mode
// members are not read, and are left alone.
package descheduler

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	"github.com/flotilla-io/flotilla/api/events"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers.
const ControllerName = "descheduler"

// Karmada's karmada-descheduler defaults.
const (
	// DefaultInterval is --descheduling-interval.
	DefaultInterval = 2 * time.Minute
	// DefaultUnschedulableThreshold is --unschedulable-threshold.
	DefaultUnschedulableThreshold = 5 * time.Minute
)

// Reconciler deschedules one ResourceBinding at a time, and looks at it again every Interval.
type Reconciler struct {
	Client  client.Client
	Members *registry.Registry
	// Interval is --descheduling-interval; 0 is DefaultInterval.
	Interval time.Duration
	// Threshold is --unschedulable-threshold; 0 is DefaultUnschedulableThreshold.
	Threshold time.Duration
	// Events, if set, gets DescheduleBindingSucceed and DescheduleBindingFailed.
	Events *eventrecord.Recorder
	// Clock tells the time; nil is the real clock.
	Clock clock.PassiveClock
}

// SetupWithManager registers the controller.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&workv1alpha2.ResourceBinding{}).
		WithOptions(queue.Options(mgr, 1)).
		Complete(r)
}

func (r *Reconciler) interval() time.Duration {
	if r.Interval > 0 {
		return r.Interval
	}
	return DefaultInterval
}

// deschedule is the operation whose outcome the descheduler reports.
var deschedule = eventrecord.Operation{Succeed: events.DescheduleBindingSucceed, Failed: events.DescheduleBindingFailed}

// Reconcile takes the replicas that members cannot run out of a dynamic-weight binding's
// shares, then looks again after the interval.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	rb := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, req.NamespacedName, rb); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !rb.DeletionTimestamp.IsZero() || !dynamicWeighted(rb.Spec.Placement) || len(rb.Spec.Clusters) == 0 ||
		!meta.IsStatusConditionTrue(rb.Status.Conditions, workv1alpha2.Scheduled) {
		return ctrl.Result{RequeueAfter: r.interval()}, nil
	}
	clusters := &clusterv1alpha1.ClusterList{}
	if err := r.Client.List(ctx, clusters); err != nil {
		return ctrl.Result{}, fmt.Errorf("list clusters: %w", err)
	}
	pull := map[string]bool{}
	for _, c := range clusters.Items {
		pull[c.Name] = c.Spec.SyncMode == clusterv1alpha1.Pull
	}
	threshold := r.Threshold
	if threshold <= 0 {
		threshold = DefaultUnschedulableThreshold
	}
	now := reconciler.Now(r.Clock)
	var errs []error
	taken := map[string]int32{}
	for _, tc := range rb.Spec.Clusters {
		if tc.Replicas <= 0 || pull[tc.Name] {
			continue
		}
		n, err := r.unschedulable(ctx, tc.Name, rb.Spec.Resource, threshold, now)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		if n = min(n, tc.Replicas); n > 0 {
			taken[tc.Name] = n
		}
	}
	if len(taken) == 0 {
		if len(errs) > 0 {
			r.Events.Outcome(deschedule, errors.Join(errs...), "", rb, binding.TemplateRef(&rb.Spec))
		}
		return ctrl.Result{RequeueAfter: r.interval()}, nil
	}
	patch := client.MergeFromWithOptions(rb.DeepCopy(), client.MergeFromWithOptimisticLock{})
	var kept []workv1alpha2.TargetCluster
	for _, tc := range rb.Spec.Clusters {
		if tc.Replicas -= taken[tc.Name]; tc.Replicas > 0 {
			kept = append(kept, tc)
		}
	}
	rb.Spec.Clusters = kept
	err := r.Client.Patch(ctx, rb, patch)
	if apierrors.IsConflict(err) {
		return reconciler.Result(ctrl.Result{}, err)
	}
	if err != nil {
		err = fmt.Errorf("take unschedulable replicas out of binding %s: %w", req, err)
	}
	log.FromContext(ctx).Info("Descheduled unschedulable replicas", "binding", req.String(), "taken", taken, "err", err)
	r.Events.Outcome(deschedule, err, fmt.Sprintf("Binding has been descheduled: %s", describe(taken)), rb, binding.TemplateRef(&rb.Spec))
	return reconciler.Result(ctrl.Result{RequeueAfter: r.interval()}, err)
}

// unschedulable counts the replicas of the workload ref that member cluster has found no node
// for since threshold before now.
func (r *Reconciler) unschedulable(ctx context.Context, cluster string, ref workv1alpha2.ObjectReference, threshold time.Duration, now time.Time) (int32, error) {
	m, err := r.Members.Get(ctx, cluster)
	if err != nil {
		return 0, fmt.Errorf("reach cluster %s: %w", cluster, err)
	}
	nodes := m.Nodes()
	if !nodes.Synced() {
		return 0, nil // asked again at the next interval
	}
	gvk := schema.FromAPIVersionAndKind(ref.APIVersion, ref.Kind)
	mapping, err := m.Mapper.RESTMapping(gvk.GroupKind(), gvk.Version)
	if err != nil {
		return 0, fmt.Errorf("cluster %s does not serve %s: %w", cluster, gvk, err)
	}
	obj, err := m.Dynamic.Resource(mapping.Resource).Namespace(ref.Namespace).Get(ctx, ref.Name, metav1.GetOptions{ResourceVersion: "0"})
	if apierrors.IsNotFound(err) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("read %s %s/%s in cluster %s: %w", ref.Kind, ref.Namespace, ref.Name, cluster, err)
	}
	raw, found, _ := unstructuredSelector(obj.Object)
	if !found {
		return 0, nil // a kind without a pod selector has no pods to count
	}
	selector, err := metav1.LabelSelectorAsSelector(raw)
	if err != nil || selector.Empty() {
		return 0, nil
	}
	return int32(nodes.Unschedulable(ref.Namespace, selector, threshold, now)), nil
}

// unstructuredSelector reads spec.selector as a LabelSelector; false when there is none.
func unstructuredSelector(obj map[string]any) (*metav1.LabelSelector, bool, error) {
	raw, found, err := unstructured.NestedMap(obj, "spec", "selector")
	if !found || err != nil {
		return nil, false, err
	}
	out := &metav1.LabelSelector{}
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(raw, out); err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// dynamicWeighted reports a placement that divides replicas by dynamic weights, the only one
// Karmada's descheduler acts on.
func dynamicWeighted(p *policyv1alpha1.Placement) bool {
	if p == nil || p.ReplicaScheduling == nil {
		return false
	}
	rs := p.ReplicaScheduling
	return rs.ReplicaSchedulingType == policyv1alpha1.ReplicaSchedulingTypeDivided &&
		rs.ReplicaDivisionPreference == policyv1alpha1.ReplicaDivisionPreferenceWeighted &&
		rs.WeightPreference != nil && rs.WeightPreference.DynamicWeight != ""
}

// describe says how many replicas were taken from each cluster.
func describe(taken map[string]int32) string {
	parts := make([]string, 0, len(taken))
	for _, name := range slices.Sorted(maps.Keys(taken)) {
		parts = append(parts, fmt.Sprintf("%d unschedulable replica(s) taken from %s", taken[name], name))
	}
	return strings.Join(parts, ", ")
}
