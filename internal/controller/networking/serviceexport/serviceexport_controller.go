// Package serviceexport implements Karmada's serviceExport and
// endpointsliceCollect controllers, as one: in every Ready member it watches
// EndpointSlices (and ServiceExports, multicluster.x-k8s.io, where the
// member serves them), and records on the control plane the slices of each
// Service that is exported there (a ServiceExport in the member) or that a
// MultiClusterService collects from there (a marker Work in the member's
// execution namespace, kept by the multiclusterservice controller). Each
// slice is one Work in the member's execution namespace, born with
// spec.suspendDispatching so it is never applied back; its labels say who
// it is for (endpointslice.karmada.io/name|namespace for the export,
// multiclusterservice.karmada.io/name|namespace for the
// MultiClusterService, and endpointslice.karmada.io/managed-by listing
// both), and the Work goes when neither wants it any more. The endpointSlice
// controller makes control-plane slices of the exported ones; the
// endpointsliceDispatch controller sends the others to the consumers.
//
// Two of Karmada's bugs are avoided by construction: a slice Flotilla (or
// Karmada) wrote itself is never collected (mcs.MadeByFlotilla), so an
// imported or dispatched backend is not reported twice; and nothing is
// withdrawn for a member until its caches have synced, so a restart
// withdraws no endpoint. A member that is NotReady keeps what was
// collected from it.
package serviceexport

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
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
	"k8s.io/klog/v2"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/builder"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/predicate"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/mcs"
)

// ControllerName and CollectControllerName are the controller's names in
// --controllers, Karmada's: the first collects for ServiceExports, the
// second for MultiClusterServices.
const (
	ControllerName        = "serviceExport"
	CollectControllerName = "endpointsliceCollect"
)

// Reconciler collects EndpointSlices from the members.
//
// Its requests are of two shapes: {Name: cluster} (re)builds a member's
// watches; {Namespace: ns, Name: cluster/service} collects the slices of
// one Service of one member.
type Reconciler struct {
	Client  client.Client
	Members *registry.Registry
	// Exports collects the slices of Services a member exports with a
	// ServiceExport (the serviceExport controller is on).
	Exports bool
	// MultiClusterServices collects the slices a MultiClusterService's
	// marker Work asks for (endpointsliceCollect is on, and the
	// MultiClusterService gate).
	MultiClusterServices bool

	mu      sync.Mutex
	watches map[string]*memberWatch
	feed    queue.Feed
}

// memberWatch is the informers of one member. exports is nil where
// ServiceExports are not collected or the member does not serve them.
type memberWatch struct {
	member  *registry.Member
	exports cache.SharedIndexInformer
	slices  cache.SharedIndexInformer
	stop    chan struct{}
}

func (w *memberWatch) synced() bool {
	return (w.exports == nil || w.exports.HasSynced()) && w.slices.HasSynced()
}

// exported reports whether the member has a ServiceExport namespace/name.
func (w *memberWatch) exported(namespace, name string) bool {
	if w.exports == nil {
		return false
	}
	_, ok, _ := w.exports.GetStore().GetByKey(namespace + "/" + name)
	return ok
}

// SetupWithManager registers the controller: Clusters, the collected
// Works (so a Work deleted by hand, or left from before a restart, is put
// right) and the MultiClusterServices' marker Works, and the member
// informers' events (through the queue).
func (r *Reconciler) SetupWithManager(mgr ctrl.Manager) error {
	r.watches = map[string]*memberWatch{}
	ours := predicate.NewPredicateFuncs(func(o client.Object) bool {
		l := o.GetLabels()
		// Not the Works that dispatch slices to consumers.
		return l[mcs.EndpointSliceNameLabel] != "" || l[mcs.MCSNameLabel] != "" && o.GetAnnotations()[mcs.ProvisionClusterAnnotation] == ""
	})
	return ctrl.NewControllerManagedBy(mgr).Named(ControllerName).
		Watches(&clusterv1alpha1.Cluster{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			return []ctrl.Request{{NamespacedName: types.NamespacedName{Name: o.GetName()}}}
		})).
		Watches(&workv1alpha1.Work{}, handler.EnqueueRequestsFromMapFunc(func(_ context.Context, o client.Object) []ctrl.Request {
			return workKeys(o)
		}), builder.WithPredicates(ours)).
		WatchesRawSource(r.feed.Source()).
		WithOptions(queue.Options(mgr, 4)).
		Complete(r)
}

// workKeys are the Services a collected or marker Work is about.
func workKeys(o client.Object) []ctrl.Request {
	cluster := strings.TrimPrefix(o.GetNamespace(), clusterv1alpha1.ExecutionSpacePrefix)
	l := o.GetLabels()
	var out []ctrl.Request
	if l[mcs.EndpointSliceNameLabel] != "" {
		out = append(out, exportKey(cluster, l[mcs.EndpointSliceNamespaceLabel], l[mcs.EndpointSliceNameLabel]))
	}
	if l[mcs.MCSNameLabel] != "" && (l[mcs.EndpointSliceNameLabel] != l[mcs.MCSNameLabel] || l[mcs.EndpointSliceNamespaceLabel] != l[mcs.MCSNamespaceLabel]) {
		out = append(out, exportKey(cluster, l[mcs.MCSNamespaceLabel], l[mcs.MCSNameLabel]))
	}
	return out
}

func exportKey(cluster, namespace, service string) ctrl.Request {
	return ctrl.Request{NamespacedName: types.NamespacedName{Namespace: namespace, Name: cluster + "/" + service}}
}

func (r *Reconciler) enqueue(req ctrl.Request) { r.feed.Add(req) }

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
	exports := r.Exports
	if _, err := m.Mapper.RESTMapping(mcs.ServiceExportGVK.GroupKind(), mcs.ServiceExportGVK.Version); exports && err != nil {
		exports = false
		klog.FromContext(ctx).Info("Member does not serve ServiceExport; install the mcs-api CRDs there to export Services from it", "cluster", name)
	}
	if !exports && !r.MultiClusterServices {
		delete(r.watches, name)
		return nil
	}
	w := &memberWatch{member: m, stop: make(chan struct{})}
	if exports {
		w.exports = dynamicinformer.NewDynamicSharedInformerFactory(m.Dynamic, 0).ForResource(mcs.ServiceExportGVR).Informer()
	}
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
	if w.exports != nil {
		_, _ = w.exports.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onExport, UpdateFunc: func(_, n any) { onExport(n) }, DeleteFunc: onExport})
		go w.exports.Run(w.stop)
	}
	_, _ = w.slices.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: onSlice, UpdateFunc: func(o, n any) { onSlice(o); onSlice(n) }, DeleteFunc: onSlice})
	go w.slices.Run(w.stop)
	r.watches[name] = w
	go r.afterSync(name, w)
	return nil
}

// afterSync waits for a member's informers, then revisits every Service
// collected from it before, or marked for collection: one whose export
// went while nothing watched has no member event left to say so.
func (r *Reconciler) afterSync(cluster string, w *memberWatch) {
	if !cache.WaitForCacheSync(w.stop, w.synced) {
		return
	}
	for _, label := range []string{mcs.EndpointSliceNameLabel, mcs.MCSNameLabel} {
		works := &workv1alpha1.WorkList{}
		if err := r.Client.List(context.Background(), works, client.InNamespace(clusterv1alpha1.ExecutionNamespace(cluster)),
			client.HasLabels{label}); err != nil {
			return
		}
		for i := range works.Items {
			for _, k := range workKeys(&works.Items[i]) {
				r.enqueue(k)
			}
		}
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

// collect makes the collected Works of one Service of one member match the
// member: one per EndpointSlice while the member exports the Service or a
// MultiClusterService collects it there, none otherwise.
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
	ns := clusterv1alpha1.ExecutionNamespace(cluster)
	owners := owners{exported: r.Exports && w.exported(namespace, service)}
	if r.MultiClusterServices {
		marker := &workv1alpha1.Work{}
		err := r.Client.Get(ctx, client.ObjectKey{Namespace: ns, Name: mcs.MarkerWorkName(namespace, service)}, marker)
		if err != nil && !apierrors.IsNotFound(err) {
			return ctrl.Result{}, err
		}
		owners.provided = err == nil && marker.DeletionTimestamp.IsZero()
	}
	desired := map[string]*discoveryv1.EndpointSlice{}
	if owners.exported || owners.provided {
		items, _ := w.slices.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
		for _, item := range items {
			s, ok := item.(*discoveryv1.EndpointSlice)
			if !ok || s.Labels[mcs.ServiceNameLabel] != service || mcs.MadeByFlotilla(s.Labels) || !s.DeletionTimestamp.IsZero() {
				continue
			}
			desired[binding.WorkName("EndpointSlice", namespace, s.Name)] = s
		}
	}
	have := map[string]*workv1alpha1.Work{}
	for _, sel := range []client.MatchingLabels{
		{mcs.EndpointSliceNamespaceLabel: namespace, mcs.EndpointSliceNameLabel: service},
		{mcs.MCSNamespaceLabel: namespace, mcs.MCSNameLabel: service},
	} {
		existing := &workv1alpha1.WorkList{}
		if err := r.Client.List(ctx, existing, client.InNamespace(ns), sel, client.HasLabels{mcs.EndpointSliceManagedByLabel}); err != nil {
			return ctrl.Result{}, err
		}
		for i := range existing.Items {
			have[existing.Items[i].Name] = &existing.Items[i]
		}
	}
	var errs []error
	for name, work := range have {
		if _, keep := desired[name]; keep {
			continue
		}
		delete(have, name)
		if err := r.Client.Delete(ctx, work); err != nil && !apierrors.IsNotFound(err) {
			errs = append(errs, fmt.Errorf("withdraw Work %s/%s: %w", ns, work.Name, err))
		}
	}
	for name, s := range desired {
		if err := r.ensureWork(ctx, ns, name, service, owners, s, have[name]); err != nil {
			errs = append(errs, err)
		}
	}
	if err := errors.Join(errs...); err != nil {
		if apierrors.IsConflict(err) || apierrors.IsAlreadyExists(err) {
			return reconciler.Result(ctrl.Result{}, err)
		}
		return ctrl.Result{}, err
	}
	return ctrl.Result{}, nil
}

// owners is who wants a Service's slices collected from a member.
type owners struct {
	exported bool // a ServiceExport in the member
	provided bool // a MultiClusterService's marker Work
}

// labels sets on a collected Work's labels those that name its owners, and
// removes those of former owners.
func (o owners) labels(l map[string]string, namespace, service string) {
	var by []string
	for _, m := range mcs.ManagedBy(l[mcs.EndpointSliceManagedByLabel]) {
		if m != mcs.ManagedByServiceExport && m != mcs.ManagedByMultiClusterService {
			by = append(by, m) // another collector's (Karmada's agent): kept
		}
	}
	set := func(on bool, nsKey, nameKey, owner string) {
		if on {
			l[nsKey], l[nameKey] = namespace, service
			by = append(by, owner)
		} else {
			delete(l, nsKey)
			delete(l, nameKey)
		}
	}
	set(o.exported, mcs.EndpointSliceNamespaceLabel, mcs.EndpointSliceNameLabel, mcs.ManagedByServiceExport)
	set(o.provided, mcs.MCSNamespaceLabel, mcs.MCSNameLabel, mcs.ManagedByMultiClusterService)
	l[mcs.EndpointSliceManagedByLabel] = mcs.JoinManagedBy(by)
}

// ensureWork writes the Work holding slice s (current, if it exists).
func (r *Reconciler) ensureWork(ctx context.Context, ns, name, service string, o owners, s *discoveryv1.EndpointSlice, current *workv1alpha1.Work) error {
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
		labels := maps.Clone(current.Labels)
		o.labels(labels, s.Namespace, service)
		if maps.Equal(labels, current.Labels) && len(current.Spec.Workload.Manifests) == 1 && string(current.Spec.Workload.Manifests[0].Raw) == string(raw) {
			return nil
		}
		current.Labels = labels
		current.Spec.Workload.Manifests = []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}
		if err := r.Client.Update(ctx, current); err != nil {
			return fmt.Errorf("update Work %s/%s: %w", ns, name, err)
		}
		return nil
	}
	suspend := true
	labels := map[string]string{mcs.WorkIDLabel: uuid.NewString()}
	o.labels(labels, s.Namespace, service)
	work := &workv1alpha1.Work{
		ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, Labels: labels},
		Spec: workv1alpha1.WorkSpec{SuspendDispatching: &suspend,
			Workload: workv1alpha1.WorkloadTemplate{Manifests: []workv1alpha1.Manifest{{RawExtension: runtime.RawExtension{Raw: raw}}}}},
	}
	if err := r.Client.Create(ctx, work); err != nil {
		return fmt.Errorf("create Work %s/%s: %w", ns, name, err)
	}
	return nil
}
