// Package serviceexport implements Karmada's serviceExport controller: in
// every Ready member it watches ServiceExports (multicluster.x-k8s.io) and
// EndpointSlices, and for each exported Service it records the member's
// EndpointSlices on the control plane, one Work per slice in the member's
// execution namespace, born with spec.suspendDispatching so it is never
// applied back. The endpointSlice controller makes control-plane slices of
// them.
//
// Two of Karmada's bugs are avoided by construction: a slice Flotilla (or
// Karmada) wrote itself is never collected (mcs.MadeByFlotilla), so an
// imported backend is not reported twice; and nothing is withdrawn for a
// member until its caches have synced, so a restart withdraws no endpoint.
package serviceexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"
	discoveryv1 "k8s.io/api/discovery/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"
	"sigs.k8s.io/controller-runtime/pkg/source"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/binding"
	"github.com/flotilla-io/flotilla/internal/mcs"
	"github.com/flotilla-io/flotilla/internal/membercluster"
	"github.com/flotilla-io/flotilla/internal/reconcilequeue"
)

// ControllerName is the controller's name in --controllers: Karmada's.
const ControllerName = "serviceExport"

// Reconciler collects exported EndpointSlices from the members.
//
// Its requests are of two shapes: {Name: cluster} (re)builds a member's
// watches; {Namespace: ns, Name: cluster/service} collects one exported
// Service of one member.
type Reconciler struct {
	Client  client.Client
	Members *membercluster.Registry

	mu      sync.Mutex
	watches map[string]*memberWatch
	queue   workqueue.TypedRateLimitingInterface[ctrl.Request]
}

// memberWatch is the informers of one member.
type memberWatch struct {
	member  *membercluster.Member
	exports cache.SharedIndexInformer
	slices  cache.SharedIndexInformer
	stop    chan struct{}
}

func (w *memberWatch) synced() bool { return w.exports.HasSynced() && w.slices.HasSynced() }

// SetupWithManager registers the controller: Clusters, the collected
// Works (so a Work deleted by hand, or left from before a restart, is put
// right), and the member informers' events (through the queue).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.watches = map[string]*memberWatch{}
	collected := predicate.NewPredicateFuncs(func(o client.Object) bool { return o.GetLabels()[mcs.EndpointSliceNameLabel] != "" })
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			cluster := strings.TrimPrefix(o.GetNamespace(), clusterv1alpha1.ExecutionSpacePrefix)
			l := o.GetLabels()
			return []ctrl.Request{exportKey(cluster, l[mcs.EndpointSliceNamespaceLabel], l[mcs.EndpointSliceNameLabel])}
		}), builder.WithPredicates(collected)).
		WatchesRawSource(source.Func(func(_ context.Context, q workqueue.TypedRateLimitingInterface[ctrl.Request]) error {
			r.mu.Lock()
			r.queue = q
			r.mu.Unlock()
			return nil
		})).
		WithOptions(reconcilequeue.Options(4)).
		Complete(r)
}

func exportKey(cluster, namespace, service string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: cluster + "/" + service}}
}

func (r *Reconciler) enqueue(req ctrl.Request) {
	r.mu.Lock()
	q := r.queue
	r.mu.Unlock()
	if q != nil {
		q.Add(req)
	}
}

// Reconcile dispatches on the request's shape.
func (r *Reconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	if req.Namespace == "" {
		return ctrl.Result{}, r.watchCluster(ctx, req.Name)
	}
	cluster, service, ok := strings.Cut(req.Name, "/")
	if !ok {
		return ctrl.Result{}, nil
	}
	return r.collect(ctx, cluster, req.Namespace, service)
}

// watchCluster starts the informers of a Ready member (again, when its
// connection changed), and stops those of a Cluster that is gone. A
// member that is NotReady keeps its informers and its collected slices.
func (r *Reconciler) watchCluster(ctx context.Context, name string) error {
	c := &clusterv1alpha1.Cluster{}
	err := r.Client.Get(ctx, client.ObjectKey{Name: name}, c)
	if apierrors.IsNotFound(err) || (err == nil && !c.DeletionTimestamp.IsZero()) {
		r.stop(name)
		return nil
	}
	if err != nil {
		return err
	}
	if c.Spec.SyncMode == clusterv1alpha1.Pull || !meta.IsStatusConditionTrue(c.Status.Conditions, clusterv1alpha1.ClusterConditionReady) {
		return nil
	}
	m, err := r.Members.ForCluster(ctx, c)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.watches[name]; w != nil {
		if w.member == m {
			return nil
		}
		close(w.stop)
	}
	if _, err := m.Mapper.RESTMapping(mcs.ServiceExportGVK.GroupKind(), mcs.ServiceExportGVK.Version); err != nil {
		delete(r.watches, name)
		klog.FromContext(ctx).Info("Member does not serve ServiceExport; install the mcs-api CRDs there to export Services from it", "cluster", name)
		return nil
	}
	w := &memberWatch{member: m, stop: make(chan struct{})}
	w.exports = dynamicinformer.NewDynamicSharedInformerFactory(m.Dynamic, 0).ForResource(mcs.ServiceExportGVR).Informer()
	w.slices = informers.NewSharedInformerFactoryWithOptions(m.Kube, 0, informers.WithTweakListOptions(func(o *metav1.ListOptions) {
		o.LabelSelector = mcs.ServiceNameLabel
	})).Discovery().V1().EndpointSlices().Informer()
	onExport := func(obj any) {
		if o, ok := metaOf(obj); ok {
			r.enqueue(exportKey(name, o.GetNamespace(), o.GetName()))
		}
	}
	onSlice := func(obj any) {
		if o, ok := metaOf(obj); ok && o.GetLabels()[mcs.ServiceNameLabel] != "" {
			r.enqueue(exportKey(name, o.GetNamespace(), o.GetLabels()[mcs.ServiceNameLabel]))
		}
	}
	_, _ = w.exports.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onExport, UpdateFunc: func(_, n any) { onExport(n) }, DeleteFunc: onExport})
	_, _ = w.slices.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onSlice, UpdateFunc: func(o, n any) { onSlice(o); onSlice(n) }, DeleteFunc: onSlice})
	go w.exports.Run(w.stop)
	go w.slices.Run(w.stop)
	r.watches[name] = w
	go r.afterSync(name, w)
	return nil
}

// afterSync waits for a member's informers, then revisits every Service
// collected from it before: one whose export went while nothing watched
// has no member event left to say so.
func (r *Reconciler) afterSync(cluster string, w *memberWatch) {
	if !cache.WaitForCacheSync(w.stop, w.exports.HasSynced, w.slices.HasSynced) {
		return
	}
	works := &workv1alpha1.WorkList{}
	if err := r.Client.List(context.Background(), works, client.InNamespace(clusterv1alpha1.ExecutionNamespace(cluster)),
		client.HasLabels{mcs.EndpointSliceNameLabel}); err != nil {
		return
	}
	for _, work := range works.Items {
		r.enqueue(exportKey(cluster, work.Labels[mcs.EndpointSliceNamespaceLabel], work.Labels[mcs.EndpointSliceNameLabel]))
	}
}

func metaOf(obj any) (metav1.Object, bool) {
	if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = d.Obj
	}
	o, ok := obj.(metav1.Object)
	return o, ok
}

// stop ends the informers of a member that left.
func (r *Reconciler) stop(name string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if w := r.watches[name]; w != nil {
		close(w.stop)
		delete(r.watches, name)
	}
}

// errNotSynced: the member's caches are not filled yet; nothing may be
// withdrawn on their word.
var errNotSynced = errors.New("the member's caches have not synced yet")

// collect makes the collected Works of one exported Service of one member
// match the member: one per EndpointSlice while the member has the
// ServiceExport, none otherwise.
func (r *Reconciler) collect(ctx context.Context, cluster, namespace, service string) (ctrl.Result, error) {
	r.mu.Lock()
	w := r.watches[cluster]
	r.mu.Unlock()
	if w == nil || !w.synced() {
		// Not watched (yet, or not Ready): leave what was collected as it
		// is. The member's informers enqueue everything once they sync.
		if w != nil {
			return ctrl.Result{RequeueAfter: time.Second}, nil
		}
		return ctrl.Result{}, nil
	}
	desired := map[string]*discoveryv1.EndpointSlice{}
	if _, exported, _ := w.exports.GetStore().GetByKey(namespace + "/" + service); exported {
		items, _ := w.slices.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		for _, item := range items {
			s, ok := item.(*discoveryv1.EndpointSlice)
			if !ok || s.Labels[mcs.ServiceNameLabel] != service || mcs.MadeByFlotilla(s.Labels) || !s.DeletionTimestamp.IsZero() {
				continue
			}
			desired[binding.WorkName("EndpointSlice", namespace, s.Name)] = s
		}
	}
	ns := clusterv1alpha1.ExecutionNamespace(cluster)
	existing := &workv1alpha1.WorkList{}
	if err := r.Client.List(ctx, existing, client.InNamespace(ns),
		client.MatchingLabels{mcs.EndpointSliceNamespaceLabel: namespace, mcs.EndpointSliceNameLabel: service}); err != nil {
		return ctrl.Result{}, err
	}
	var errs []error
	have := map[string]*workv1alpha1.Work{}
	for i := range existing.Items {
		work := &existing.Items[i]
		if _, keep := desired[work.Name]; keep {
			have[work.Name] = work
			continue
		}
		if err := r.Client.Delete(ctx, work); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("withdraw Work %s/%s: %w", ns, work.Name, err))
		}
	}
	for name, s := range desired {
		if err := r.ensureWork(ctx, ns, name, service, s, have[name]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			return ctrl.Result{RequeueAfter: reconcilequeue.ConflictRetry}, nil
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// ensureWork writes the Work holding slice s (current, if it exists).
func (r *Reconciler) ensureWork(ctx context.Context, ns, name, service string, s *discoveryv1.EndpointSlice, current *workv1alpha1.Work) error {
	manifest := &discoveryv1.EndpointSlice{
		TypeMeta:    metav1.TypeMeta{APIVersion: "discovery.k8s.io/v1", Kind: "EndpointSlice"},
		ObjectMeta:  metav1.ObjectMeta{Namespace: s.Namespace, Name: s.Name, Labels: s.Labels},
		AddressType: s.AddressType, Endpoints: s.Endpoints, Ports: s.Ports,
	}
	raw, err := json.Marshal(manifest)
	if err != nil {
		return err
	}
	if current != nil {
		if len(current.Spec.Workload.Manifests) == 1 && string(current.Spec.Workload.Manifests[0].Raw) == string(raw) {
			return nil
		}
		current.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
		if err := r.Client.Update(ctx, current); err != nil {
			return fmt.Errorf("update Work %s/%s: %w", ns, name, err)
		}
		return nil
	}
	suspend := true
	work := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: map[string]string{
			mcs.EndpointSliceNamespaceLabel: s.Namespace,
			mcs.EndpointSliceNameLabel:      service,
			mcs.EndpointSliceManagedByLabel: mcs.ManagedByServiceExport,
			mcs.WorkIDLabel:                 uuid.NewString(),
		}},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: &suspend,
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
	if err := r.Client.Create(ctx, work); err != nil {
		return fmt.Errorf("create Work %s/%s: %w", ns, name, err)
	}
	return nil
}
