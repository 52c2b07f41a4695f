// Package hpascaletargetmarker is Karmada's hpaScaleTargetMarker controller
// (off by default; --controllers=*,hpaScaleTargetMarker): the target of a
// HorizontalPodAutoscaler that a policy propagates gets the label
// resourcetemplate.karmada.io/retain-replicas=true on the control plane, so
// that each member keeps the replicas its own HPA sets. When the HPA is
// deleted or points elsewhere, its old target loses the label.
package hpascaletargetmarker

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	autoscalingv2 "k8s.io/api/autoscaling/v2"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/event"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"

	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
	"github.com/flotilla-io/flotilla/internal/interpreter/native"
)

// ControllerName is the controller's name in --controllers, as Karmada's.
const ControllerName = "hpaScaleTargetMarker"

// Request is the reconcile request of hpa's scale target: its namespace,
// and "<group>/<kind>/<name>" as the name (no part can hold a "/").
func Request(hpa *autoscalingv2.HorizontalPodAutoscaler) reconcile.Request {
	ref := hpa.Spec.ScaleTargetRef
	gv, _ := schema.ParseGroupVersion(ref.APIVersion)
	return reconcile.Request{NamespacedName: types.NamespacedName{Namespace: hpa.Namespace, Name: gv.Group + "/" + ref.Kind + "/" + ref.Name}}
}

// target is the scale target a request names.
type target struct {
	namespace string
	gk        schema.GroupKind
	name      string
}

func targetOf(req reconcile.Request) (target, bool) {
	parts := strings.SplitN(req.Name, "/", 3)
	if len(parts) != 3 || parts[1] == "" || parts[2] == "" {
		return target{}, false
	}
	return target{namespace: req.Namespace, gk: schema.GroupKind{Group: parts[0], Kind: parts[1]}, name: parts[2]}, true
}

// Propagated reports whether a policy claims hpa (it carries a
// PropagationPolicy's or ClusterPropagationPolicy's permanent-id label),
// Karmada's test for marking its target.
func Propagated(hpa *autoscalingv2.HorizontalPodAutoscaler) bool {
	l := hpa.GetLabels()
	return l[policymatch.PropagationPolicyPermanentIDLabel] != "" || l[policymatch.ClusterPropagationPolicyPermanentIDLabel] != ""
}

// Reconciler labels and unlabels scale targets.
type Reconciler struct {
	// Client reads HPAs from the manager's cache.
	Client client.Client
	// Dynamic and Mapper reach targets of any kind.
	Dynamic dynamic.Interface
	Mapper  meta.RESTMapper
}

// SetupWithManager reconciles the target of every HPA that is created,
// changed or deleted, and the old target of one whose scaleTargetRef
// changed.
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	add := func(q workqueue.TypedRateLimitingInterface[reconcile.Request], objs ...client.Object) {
		for _, o := range objs {
			if hpa, ok := o.(*autoscalingv2.HorizontalPodAutoscaler); ok {
				q.Add(Request(hpa))
			}
		}
	}
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		Watches(&autoscalingv2.HorizontalPodAutoscaler{}, handler.Funcs{
			CreateFunc: func(_ context.Context, e event.CreateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				add(q, e.Object)
			},
			UpdateFunc: func(_ context.Context, e event.UpdateEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				add(q, e.ObjectOld, e.ObjectNew)
			},
			DeleteFunc: func(_ context.Context, e event.DeleteEvent, q workqueue.TypedRateLimitingInterface[reconcile.Request]) {
				add(q, e.Object)
			},
		}).
		WithOptions(queue.Options(mgr, 2)).
		Complete(r)
}

// Reconcile gives the scale target that req names the retain-replicas
// label when a propagated HPA of its namespace targets it, and takes the
// label away when none does.
func (r *Reconciler) Reconcile(ctx context.Context, req reconcile.Request) (ctrl.Result, error) {
	t, ok := targetOf(req)
	if !ok {
		return ctrl.Result{}, nil
	}
	hpas := &autoscalingv2.HorizontalPodAutoscalerList{}
	if err := r.Client.List(ctx, hpas, client.InNamespace(t.namespace)); err != nil {
		return ctrl.Result{}, fmt.Errorf("list HorizontalPodAutoscalers of %s: %w", t.namespace, err)
	}
	want := false
	for i := range hpas.Items {
		h := &hpas.Items[i]
		if h.DeletionTimestamp.IsZero() && Propagated(h) && Request(h) == req {
			want = true
			break
		}
	}
	mapping, err := r.Mapper.RESTMapping(t.gk)
	if err != nil {
		klog.FromContext(ctx).V(1).Info("Scale target of an unknown kind, not marked", "target", req.Name, "err", err)
		return ctrl.Result{}, nil
	}
	res := r.Dynamic.Resource(mapping.Resource).Namespace(t.namespace)
	obj, err := res.Get(ctx, t.name, metav1.GetOptions{})
	if apierrors.IsNotFound(err) {
		return ctrl.Result{}, nil
	}
	if err != nil {
		return ctrl.Result{}, fmt.Errorf("get scale target %s %s/%s: %w", t.gk.Kind, t.namespace, t.name, err)
	}
	has := obj.GetLabels()[native.RetainReplicasLabel] == "true"
	if want == has {
		return ctrl.Result{}, nil
	}
	var value any // nil removes the label in a merge patch
	if want {
		value = "true"
	}
	patch, err := json.Marshal(map[string]any{"metadata": map[string]any{"labels": map[string]any{native.RetainReplicasLabel: value}}})
	if err != nil {
		return ctrl.Result{}, err
	}
	if _, err := res.Patch(ctx, t.name, types.MergePatchType, patch, metav1.PatchOptions{}); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(fmt.Errorf("label scale target %s %s/%s: %w", t.gk.Kind, t.namespace, t.name, err))
	}
	klog.FromContext(ctx).Info("Marked the scale target of a propagated HPA", "target", req.Name, "namespace", t.namespace, "retainReplicas", want)
	return ctrl.Result{}, nil
}
