// Package federatedhpa implements Karmada's FederatedHPA controller
// (federatedHorizontalPodAutoscaler in --controllers): every sync period it
// reads a FederatedHPA's scale target on the control plane (its /scale),
// gathers the target's pods from every member cluster its binding places it
// in, asks the control plane's metrics APIs (metrics.k8s.io,
// custom.metrics.k8s.io, external.metrics.k8s.io: the metrics adapter
// serves them from the members) for their metrics, and writes the replica
// count the Kubernetes HPA's rules give (internal/core/hpa) to the
// template's /scale. The scheduler then divides the new count between the
// clusters. It never writes a member object.
package federatedhpa

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/tools/record"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	autoscalingv1alpha1 "github.com/flotilla-io/flotilla/api/autoscaling/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/metrics"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	hpa "github.com/flotilla-io/flotilla/internal/core/hpa"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// ControllerName is the controller's name in --controllers: Karmada's.
const ControllerName = "federatedHorizontalPodAutoscaler"

// Reconciler syncs FederatedHPAs.
type Reconciler struct {
	Client client.Client
	// Dynamic and Mapper reach the scale targets on the control plane.
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
	// Members reach the member clusters' pods and workload copies.
	Members *registry.Registry
	// Recommender decides the replica counts; one for the controller's
	// lifetime (it keeps each FederatedHPA's scaling history).
	Recommender *hpa.Recommender
	// SyncPeriod is --horizontal-pod-autoscaler-sync-period.
	SyncPeriod time.Duration
	// Clock stamps the status (lastScaleTime, conditions); nil is the real clock. The
	// Recommender has its own, for the stabilization windows.
	Clock clock.PassiveClock
	// Recorder gets the HPA's events (SuccessfulRescale, FailedRescale,
	// FailedGetScale, FailedGet*Metric, ...).
	Recorder record.EventRecorder
}

// SetupWithManager registers the controller on FederatedHPAs (created,
// deleted, or changed in their spec: not this controller's status writes);
// each is synced again every SyncPeriod.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		For(&autoscalingv1alpha1.FederatedHPA{}, builder.WithPredicates(predicate.GenerationChangedPredicate{})).
		WithOptions(queue.Options(mgr, 4)).
		Complete(r)
}

// Reconcile runs one sync of one FederatedHPA.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	f := &autoscalingv1alpha1.FederatedHPA{}
	if err := r.Client.Get(ctx, req.NamespacedName, f); err != nil {
		if apierrors.IsNotFound(err) {
			r.Recommender.Forget(req.NamespacedName)
		}
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !f.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil
	}
	start := time.Now()
	failure, err := r.sync(ctx, f)
	metrics.ObserveFederatedHPAProcess(errors.Join(failure, err), time.Since(start))
	return reconciler.Result(ctrl.Result{RequeueAfter: r.SyncPeriod}, err)
}

// sync runs one sync of f and writes its status. failure is why the sync
// could not scale as the HPA's rules say (reported in the status and
// events, not retried sooner than the next sync); err is a status write
// that failed.
func (r *Reconciler) sync(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA) (failure, err error) {
	status := f.Status.DeepCopy()
	now := metav1.NewTime(reconciler.Now(r.Clock))
	target, scaleRes, err := r.observe(ctx, f)
	if err != nil {
		var te *targetError
		if errors.As(err, &te) {
			r.Recorder.Event(f, corev1.EventTypeWarning, te.event, te.err.Error())
			status.Conditions = hpa.SetCondition(status.Conditions, hpa.TargetUnavailableCondition(te.reason, te.err), now)
		} else {
			r.Recorder.Event(f, corev1.EventTypeWarning, autoscalingv1alpha1.FailedGetScaleReason, err.Error())
			status.Conditions = hpa.SetCondition(status.Conditions, hpa.FailedGetScaleCondition(err), now)
		}
		return err, r.writeStatus(ctx, f, status)
	}
	if others := r.rivals(ctx, f); len(others) > 0 {
		ref := f.Spec.ScaleTargetRef
		c := hpa.AmbiguousCondition(fmt.Sprintf("%s %s/%s", ref.Kind, f.Namespace, ref.Name), others)
		r.Recorder.Event(f, corev1.EventTypeWarning, autoscalingv1alpha1.AmbiguousSelectorReason, c.Message)
		status.Conditions = hpa.SetCondition(status.Conditions, c, now)
		return errors.New(c.Message), r.writeStatus(ctx, f, status)
	}
	rec := r.Recommender.Recommend(ctx, f, target)
	failure = rec.Err
	for _, c := range rec.Conditions {
		status.Conditions = hpa.SetCondition(status.Conditions, c, now)
	}
	for _, e := range rec.Events {
		r.Recorder.Event(f, e.Type, e.Reason, e.Message)
	}
	status.CurrentReplicas, status.DesiredReplicas = rec.CurrentReplicas, rec.DesiredReplicas
	if rec.MetricStatuses != nil || rec.Err == nil {
		status.CurrentMetrics = rec.MetricStatuses
	}
	if rec.Rescale {
		err := r.scale(ctx, scaleRes, f.Spec.ScaleTargetRef.Name, rec.DesiredReplicas)
		if err != nil {
			failure = errors.Join(failure, err)
			r.Recorder.Event(f, corev1.EventTypeWarning, autoscalingv1alpha1.FailedRescaleReason, hpa.RescaleEventMessage(rec.DesiredReplicas, rec.RescaleReason, err))
			status.Conditions = hpa.SetCondition(status.Conditions, hpa.FailedUpdateScaleCondition(err), now)
			status.DesiredReplicas = rec.CurrentReplicas
		} else {
			r.Recorder.Event(f, corev1.EventTypeNormal, autoscalingv1alpha1.SuccessfulRescaleReason, hpa.RescaleEventMessage(rec.DesiredReplicas, rec.RescaleReason, nil))
			status.Conditions = hpa.SetCondition(status.Conditions, hpa.RescaledCondition(rec.DesiredReplicas), now)
			status.LastScaleTime = &now
			r.Recommender.RecordRescale(f, rec.CurrentReplicas, rec.DesiredReplicas)
		}
	}
	return failure, r.writeStatus(ctx, f, status)
}

// rivals names the other FederatedHPAs in f's namespace that scale the same
// target (same group, kind and name), sorted.
func (r *Reconciler) rivals(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA) []string {
	list := &autoscalingv1alpha1.FederatedHPAList{}
	if err := r.Client.List(ctx, list, client.InNamespace(f.Namespace)); err != nil {
		return nil
	}
	group := func(apiVersion string) string {
		gv, _ := schema.ParseGroupVersion(apiVersion)
		return gv.Group
	}
	ref := f.Spec.ScaleTargetRef
	var out []string
	for i := range list.Items {
		o := &list.Items[i]
		r := o.Spec.ScaleTargetRef
		if o.Name != f.Name && o.DeletionTimestamp.IsZero() && r.Kind == ref.Kind && r.Name == ref.Name && group(r.APIVersion) == group(ref.APIVersion) {
			out = append(out, o.Name)
		}
	}
	sort.Strings(out)
	return out
}

// writeStatus writes status when it differs from f's.
func (r *Reconciler) writeStatus(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, status *autoscalingv2.HorizontalPodAutoscalerStatus) error {
	status.ObservedGeneration = &f.Generation
	before, _ := json.Marshal(f.Status)
	after, _ := json.Marshal(status)
	if string(before) == string(after) {
		return nil
	}
	f.Status = *status
	if err := r.Client.Status().Update(ctx, f); err != nil {
		if apierrors.IsConflict(err) {
			return nil // the next sync writes it
		}
		r.Recorder.Event(f, corev1.EventTypeWarning, autoscalingv1alpha1.FailedUpdateStatusReason, err.Error())
		return fmt.Errorf("write the status of FederatedHPA %s/%s: %w", f.Namespace, f.Name, err)
	}
	return nil
}

// targetError is a sync that stopped before /scale: the target, its
// binding or its clusters are missing. reason is the AbleToScale condition's,
// event the Warning event's (Karmada's reasons).
type targetError struct {
	reason, event string
	err           error
}

func (e *targetError) Error() string { return e.err.Error() }

// observe reads the scale target's /scale on the control plane, and its
// pods and copies in the member clusters its binding places it in. Errors:
// a *targetError when the target does not exist, is not propagated or is
// placed nowhere; otherwise the /scale could not be read.
func (r *Reconciler) observe(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA) (hpa.Target, dynamic.ResourceInterface, error) {
	ref := f.Spec.ScaleTargetRef
	gv, err := schema.ParseGroupVersion(ref.APIVersion)
	if err != nil {
		return hpa.Target{}, nil, fmt.Errorf("spec.scaleTargetRef.apiVersion %q: %w", ref.APIVersion, err)
	}
	mapping, err := r.Mapper.RESTMapping(schema.GroupKind{Group: gv.Group, Kind: ref.Kind}, gv.Version)
	if err != nil {
		return hpa.Target{}, nil, fmt.Errorf("the control plane serves no %s in %s: %w", ref.Kind, ref.APIVersion, err)
	}
	res := r.Dynamic.Resource(mapping.Resource).Namespace(f.Namespace)
	sc, err := res.Get(ctx, ref.Name, metav1.GetOptions{}, "scale")
	if err != nil {
		if apierrors.IsNotFound(err) {
			if _, gerr := res.Get(ctx, ref.Name, metav1.GetOptions{}); gerr == nil {
				return hpa.Target{}, nil, fmt.Errorf("%s %s/%s has no scale subresource: scaleTargetRef must name a kind that has one", ref.Kind, f.Namespace, ref.Name)
			}
			return hpa.Target{}, nil, &targetError{reason: autoscalingv1alpha1.FailedGetScaleTargetRefReason, event: autoscalingv1alpha1.FailedGetScaleTargetRefReason,
				err: fmt.Errorf("%s %s/%s does not exist", ref.Kind, f.Namespace, ref.Name)}
		}
		return hpa.Target{}, nil, fmt.Errorf("read the scale of %s %s/%s: %w", ref.Kind, f.Namespace, ref.Name, err)
	}
	b := &workv1alpha2.ResourceBinding{}
	if err := r.Client.Get(ctx, types.NamespacedName{Namespace: f.Namespace, Name: binding.Name(ref.Name, ref.Kind)}, b); err != nil {
		if apierrors.IsNotFound(err) {
			err = fmt.Errorf("%s %s/%s has no ResourceBinding: no PropagationPolicy or ClusterPropagationPolicy propagates it", ref.Kind, f.Namespace, ref.Name)
		}
		return hpa.Target{}, nil, &targetError{reason: autoscalingv1alpha1.FailedGetBindingReason, event: autoscalingv1alpha1.FailedGetBindingsReason, err: err}
	}
	if len(b.Spec.Clusters) == 0 {
		return hpa.Target{}, nil, &targetError{reason: autoscalingv1alpha1.FailedGetTargetClustersReason, event: autoscalingv1alpha1.FailedGetTargetClustersReason,
			err: fmt.Errorf("ResourceBinding %s/%s places %s %s in no cluster yet", b.Namespace, b.Name, ref.Kind, ref.Name)}
	}
	spec, _, _ := unstructured.NestedInt64(sc.Object, "spec", "replicas")
	stat, _, _ := unstructured.NestedInt64(sc.Object, "status", "replicas")
	selector, _, _ := unstructured.NestedString(sc.Object, "status", "selector")
	t := hpa.Target{SpecReplicas: int32(spec), StatusReplicas: int32(stat), Selector: selector}
	t.Pods, t.Calibration = r.members(ctx, f, b, mapping.Resource, selector, int32(spec))
	return t, res, nil
}

// members gathers the target's pods (those selector matches) in every
// cluster b places it in, and the calibration: the copies' spec.replicas
// summed, over the template's. A cluster that cannot be read is left out of
// this sync (its pods count as missing).
func (r *Reconciler) members(ctx context.Context, f *autoscalingv1alpha1.FederatedHPA, b *workv1alpha2.ResourceBinding, gvr schema.GroupVersionResource, selector string, specReplicas int32) ([]hpa.Pod, float64) {
	sel, err := labels.Parse(selector)
	if err != nil || selector == "" {
		return nil, 1
	}
	var pods []hpa.Pod
	var memberReplicas int64
	for _, tc := range b.Spec.Clusters {
		m, err := r.Members.Get(ctx, tc.Name)
		if err != nil {
			continue
		}
		list, err := m.Kube.CoreV1().Pods(f.Namespace).List(ctx, metav1.ListOptions{LabelSelector: sel.String()})
		if err != nil {
			continue
		}
		for i := range list.Items {
			pods = append(pods, hpa.Pod{Cluster: tc.Name, Pod: &list.Items[i]})
		}
		if copyObj, err := m.Dynamic.Resource(gvr).Namespace(f.Namespace).Get(ctx, f.Spec.ScaleTargetRef.Name, metav1.GetOptions{}); err == nil {
			n, _, _ := unstructured.NestedInt64(copyObj.Object, "spec", "replicas")
			memberReplicas += n
		}
	}
	if specReplicas <= 0 || memberReplicas == 0 {
		return pods, 1
	}
	return pods, float64(memberReplicas) / float64(specReplicas)
}

// scale writes replicas to the target's /scale.
func (r *Reconciler) scale(ctx context.Context, res dynamic.ResourceInterface, name string, replicas int32) error {
	patch, _ := json.Marshal(map[string]any{"spec": map[string]any{"replicas": replicas}})
	_, err := res.Patch(ctx, name, types.MergePatchType, patch, metav1.PatchOptions{}, "scale")
	return err
}
