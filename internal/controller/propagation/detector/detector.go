// Package detector implements Karmada's resource detector: it watches every
// resource template the control plane serves (built-in kinds and CRD
// instances alike), finds the PropagationPolicy or ClusterPropagationPolicy
// that claims each one, records the claim on the template, and keeps one
// ResourceBinding (ClusterResourceBinding for cluster-scoped templates) per
// claimed template.
package detector

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/component-base/featuregate"
	"k8s.io/klog/v2"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	rolloutv1alpha1 "github.com/flotilla-io/flotilla/api/rollout/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/eventrecord"
	"github.com/flotilla-io/flotilla/internal/controllerkit/queue"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/controllerkit/statusgate"
	"github.com/flotilla-io/flotilla/internal/interpreter"
	"github.com/flotilla-io/flotilla/internal/model/binding"
	"github.com/flotilla-io/flotilla/internal/model/template"
)

// templateKey identifies one resource template.
type templateKey struct {
	GVR       schema.GroupVersionResource
	Namespace string
	Name      string
}

type watched struct {
	gvk        schema.GroupVersionKind
	namespaced bool
	informer   cache.SharedIndexInformer
}

// Detector is the resource detector. It runs as a manager Runnable.
type Detector struct {
	// Client reads policies and bindings from the manager's cache and writes bindings.
	Client client.Client
	// FirstListsReleased, when set, is closed once the controllers' first-list re-checks
	// are no longer held (queue.Group.FirstListsReleased of the manager): the backlog of
	// templates found by the detector's own first lists waits for it too.
	FirstListsReleased func() <-chan struct{}
	// Cache is the manager's cache, used to subscribe to policy events.
	Cache     crcache.Cache
	Dynamic   dynamic.Interface
	Discovery discovery.DiscoveryInterface
	// Workers is the number of templates reconciled in parallel.
	Workers int
	// RediscoverEvery bounds how long a new API (a CRD added without an
	// event reaching us) goes unwatched.
	RediscoverEvery time.Duration
	// Preschedule, if set, fills a binding's target clusters before it is
	// created, and again before a change of its replicas or placement is
	// written (the in-process scheduler's scheduling.Preschedule).
	Preschedule func(ctx context.Context, c client.Reader, b binding.Object) error
	// Gate, if set, is touched by every claim and binding write, so status
	// reports give way to them (see statusgate.Gate).
	Gate *statusgate.Gate
	// ReadYourWrites keeps each template as the claim patch returned it
	// until the informer delivers it, and serves it to Template readers
	// (fastpath.Options.ReadYourWrites).
	ReadYourWrites bool
	// Events, if set, gets Karmada's ApplyPolicySucceed and
	// ApplyPolicyFailed events on templates when the outcome changes, and
	// PreemptPolicySucceed and PreemptPolicyFailed on every preemption.
	Events *eventrecord.Recorder
	// Features are the feature gates the detector reads
	// (features.PropagationPolicyPreemption); nil means every gate at its
	// default.
	Features featuregate.FeatureGate
	// Interpreter reads replicas and components from templates; nil means
	// the bundled and built-in rules only.
	Interpreter *interpreter.Interpreter

	// changes records, for Lazy policies, when each template and each
	// policy last changed (see activation).
	changes activation

	// claimed holds templates as this detector's claim patches returned
	// them (templateKey -> *unstructured.Unstructured) until the informer
	// delivers that version: readers of Template (the binding controller,
	// woken by the binding created right after the claim) get the claimed
	// template at once instead of waiting for the informer to catch up.
	claimed sync.Map
	// preemptionOffWarned holds the policies warnPreemptionOff has logged.
	preemptionOffWarned sync.Map

	queue workqueue.TypedRateLimitingInterface[templateKey]
	// urgent holds the templates a policy with a spec.schedulePriority selects, by that
	// priority (priorityqueue.go); prioritized are those policies, and inflight the keys a
	// worker of either queue is reconciling, so that one template is never reconciled twice
	// at once.
	urgent      priorityqueue.PriorityQueue[templateKey]
	urgentDown  sync.Once
	prioritized prioritizedPolicies
	inflight    sync.Map
	// backlog holds the templates an informer's first list found: they
	// existed before the detector started and are usually right already.
	// feedBacklog hands them to queue only while queue is nearly empty, so
	// that after a restart with tens of thousands of templates a new one
	// is not queued behind re-checking all of them.
	backlog  workqueue.TypedInterface[templateKey]
	factory  dynamicinformer.DynamicSharedInformerFactory
	mu       sync.RWMutex
	watching map[schema.GroupVersionResource]*watched
	byGVK    map[schema.GroupVersionKind]schema.GroupVersionResource
	// discovered is set once a discovery has listed every API: kinds
	// found after it are new to the control plane.
	discovered bool
	kick       chan struct{}
	// warmOnce runs warmup once, from Warmup or else from Start; warmErr
	// is its outcome, and firstPass is set once its discovery has run.
	warmOnce  sync.Once
	warmErr   error
	firstPass atomic.Bool
	// subscribers are told of template changes (Subscribe).
	subscribers []func(schema.GroupVersionKind, string, string)
}

// New returns a detector; Start runs it.
func New(c client.Client, cache crcache.Cache, dyn dynamic.Interface, disc discovery.DiscoveryInterface) *Detector {
	return &Detector{
		Client: c, Cache: cache, Dynamic: dyn, Discovery: disc,
		watching: map[schema.GroupVersionResource]*watched{},
		byGVK:    map[schema.GroupVersionKind]schema.GroupVersionResource{},
	}
}

// NeedLeaderElection makes the detector's workers run only on the leader;
// its informers run on every replica (Warmup).
func (d *Detector) NeedLeaderElection() bool { return true }

// Warmup starts discovery and the template informers, on every replica
// before leader election (controller-runtime runs it for each runnable that
// has it), so that a replica taking over has its templates listed already
// and the binding and status controllers, which read templates from here,
// have them at once. What the informers deliver before this replica leads
// waits in the queues. It returns once the informers are started, without
// waiting for their first lists (see Synced); they and periodic discovery
// run until ctx ends. Errors: the manager's cache refused an informer for
// policies, bindings or CRDs.
func (d *Detector) Warmup(ctx context.Context) error {
	d.warmOnce.Do(func() { d.warmErr = d.warmup(ctx) })
	return d.warmErr
}

func (d *Detector) warmup(ctx context.Context) error {
	logger := klog.FromContext(ctx).WithName("detector")
	ctx = klog.NewContext(ctx, logger)
	// A plain queue: controller-runtime's priority queue (which would put
	// the first list's re-checks behind new templates) cost a burst of
	// 1,000 templates a quarter more time (bench/results/2026-12-01-coldstart.md).
	d.queue = workqueue.NewTypedRateLimitingQueueWithConfig(queue.RateLimiter[templateKey](),
		workqueue.TypedRateLimitingQueueConfig[templateKey]{Name: "detector"})
	d.urgent = newUrgentQueue()
	d.backlog = workqueue.NewTypedWithConfig(workqueue.TypedQueueConfig[templateKey]{Name: "detector-backlog"})
	d.factory = dynamicinformer.NewDynamicSharedInformerFactory(d.Dynamic, 0)
	d.kick = make(chan struct{}, 1)
	if d.Workers == 0 {
		d.Workers = 8
	}
	if d.RediscoverEvery == 0 {
		d.RediscoverEvery = 30 * time.Second
	}
	if err := d.watchPolicies(ctx); err != nil {
		d.queue.ShutDown()
		d.shutDownUrgent()
		d.backlog.ShutDown()
		return err
	}
	if err := d.discover(ctx); err != nil {
		logger.Error(err, "Initial discovery was partial; retrying periodically")
	}
	d.firstPass.Store(true)
	go func() {
		defer d.queue.ShutDown()
		defer d.shutDownUrgent()
		defer d.backlog.ShutDown()
		tick := time.NewTicker(d.RediscoverEvery)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			case <-d.kick:
			}
			if err := d.discover(ctx); err != nil {
				logger.Error(err, "Discovery failed")
			}
		}
	}()
	return nil
}

// Start runs the workers until ctx ends, once this replica leads; it warms
// up first when Warmup has not run.
func (d *Detector) Start(ctx context.Context) error {
	if err := d.Warmup(ctx); err != nil {
		return err
	}
	ctx = klog.NewContext(ctx, klog.FromContext(ctx).WithName("detector"))
	for range d.Workers {
		go d.work(ctx, d.queue)
		go d.work(ctx, d.urgent)
	}
	go d.feedBacklog(ctx)
	<-ctx.Done()
	// Leadership (or the process) has ended: the workers stop here, not
	// when the manager's context ends. A detector is never started twice.
	d.backlog.ShutDown()
	d.queue.ShutDown()
	d.shutDownUrgent()
	return nil
}

// Synced is a readiness check (healthz.Checker's shape): nil once the
// first discovery has run and every template informer it started has
// listed; otherwise an error saying what is still loading.
func (d *Detector) Synced(*http.Request) error {
	if !d.firstPass.Load() {
		return errors.New("the detector has not discovered the template kinds yet")
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for gvr, w := range d.watching {
		if !w.informer.HasSynced() {
			return fmt.Errorf("the detector has not listed %s yet", gvr.GroupResource())
		}
	}
	return nil
}

// discover starts an informer for every listable, watchable, creatable
// resource the control plane serves that is not skipped.
func (d *Detector) discover(ctx context.Context) error {
	lists, discErr := d.Discovery.ServerPreferredResources()
	started := false
	// Templates listed when the detector starts existed before it: they
	// are no change for a Lazy policy. A kind discovered later (a new CRD)
	// brings templates the detector has never seen: those are.
	d.mu.RLock()
	atStart := !d.discovered
	d.mu.RUnlock()
	for _, l := range lists {
		gv, err := schema.ParseGroupVersion(l.GroupVersion)
		if err != nil || !template.IsTemplateResource(gv.WithResource("")) {
			continue
		}
		for _, r := range l.APIResources {
			if strings.Contains(r.Name, "/") || !hasVerbs(r.Verbs, "list", "watch", "create", "update") {
				continue
			}
			gvr := gv.WithResource(r.Name)
			if !template.IsTemplateResource(gvr) {
				continue
			}
			gvk := gv.WithKind(r.Kind)
			d.mu.Lock()
			if _, ok := d.watching[gvr]; ok {
				d.mu.Unlock()
				continue
			}
			inf := d.factory.ForResource(gvr).Informer()
			// Rendering drops managedFields anyway; not caching them
			// saves a large share of every template's memory.
			_ = inf.SetTransform(crcache.TransformStripManagedFields())
			// Policies that name their templates find them by name.
			_ = inf.AddIndexers(cache.Indexers{nameIndex: indexByName})
			w := &watched{gvk: gvk, namespaced: r.Namespaced, informer: inf}
			d.watching[gvr] = w
			d.byGVK[gvk] = gvr
			d.mu.Unlock()
			d.handleTemplates(gvr, gvk, inf, atStart)
			started = true
		}
	}
	if started {
		d.factory.Start(ctx.Done())
	}
	if discErr == nil {
		d.mu.Lock()
		d.discovered = true
		d.mu.Unlock()
	}
	return discErr
}

func hasVerbs(verbs metav1.Verbs, want ...string) bool {
	for _, w := range want {
		found := false
		for _, v := range verbs {
			found = found || v == w
		}
		if !found {
			return false
		}
	}
	return true
}

// handleTemplates enqueues a template on every change but its status
// writes (what the first list finds goes to the backlog), and records the
// changes a Lazy policy waits for: a template created while the detector
// runs (or of a kind discovered after it started, when atStart is false),
// and every later change by a user (template.ChangedByUser).
func (d *Detector) handleTemplates(gvr schema.GroupVersionResource, gvk schema.GroupVersionKind, inf cache.SharedIndexInformer, atStart bool) {
	keyOf := func(obj any) (templateKey, bool) {
		if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
			obj = t.Obj
		}
		o, ok := obj.(metav1.Object)
		if !ok || template.SkipNamespace(o.GetNamespace()) {
			return templateKey{}, false
		}
		return templateKey{GVR: gvr, Namespace: o.GetNamespace(), Name: o.GetName()}, true
	}
	_, _ = inf.AddEventHandler(cache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, isInInitialList bool) {
			d.settle(gvr, obj)
			if key, ok := keyOf(obj); ok {
				if o, typed := obj.(*unstructured.Unstructured); typed && (!isInInitialList || !atStart) {
					d.changes.templateChanged(key, o.GetResourceVersion())
				}
				if isInInitialList {
					d.backlog.Add(key)
				} else {
					d.enqueue(key, obj)
				}
				d.notify(gvk, key)
			}
		},
		UpdateFunc: func(oldObj, newObj any) {
			d.settle(gvr, newObj)
			key, ok := keyOf(newObj)
			if !ok {
				return
			}
			if o, n, typed := asTemplates(oldObj, newObj); typed && template.ChangedByUser(o, n) {
				d.changes.templateChanged(key, n.GetResourceVersion())
			}
			if statusOnlyChange(oldObj, newObj) {
				return
			}
			d.enqueue(key, newObj)
			d.notify(gvk, key)
		},
		DeleteFunc: func(obj any) {
			if key, ok := keyOf(obj); ok {
				d.claimed.Delete(key)
				d.changes.templateGone(key)
				d.queue.Add(key)
				d.notify(gvk, key)
			}
		},
	})
}

// Subscribe registers fn to be called with the kind, namespace and name of
// every template that is created, deleted or changed other than in its
// status, after the cache Template reads from has it. fn runs on the
// informer's goroutine: it must only enqueue. Call before Start.
func (d *Detector) Subscribe(fn func(gvk schema.GroupVersionKind, namespace, name string)) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.subscribers = append(d.subscribers, fn)
}

func (d *Detector) notify(gvk schema.GroupVersionKind, key templateKey) {
	d.mu.RLock()
	subs := d.subscribers
	d.mu.RUnlock()
	for _, fn := range subs {
		fn(gvk, key.Namespace, key.Name)
	}
}

// asTemplates returns both versions of an updated template.
func asTemplates(oldObj, newObj any) (*unstructured.Unstructured, *unstructured.Unstructured, bool) {
	o, ok1 := oldObj.(*unstructured.Unstructured)
	n, ok2 := newObj.(*unstructured.Unstructured)
	return o, n, ok1 && ok2
}

// statusOnlyChange reports an update that cannot change the claim or the
// binding: same generation (for kinds that have one), labels and annotations.
// Status aggregation writes template status often; this keeps those writes
// from echoing through the detector.
func statusOnlyChange(oldObj, newObj any) bool {
	o, ok1 := oldObj.(*unstructured.Unstructured)
	n, ok2 := newObj.(*unstructured.Unstructured)
	if !ok1 || !ok2 || n.GetGeneration() == 0 {
		return false
	}
	return o.GetGeneration() == n.GetGeneration() &&
		mapsEqual(o.GetLabels(), n.GetLabels()) && mapsEqual(o.GetAnnotations(), n.GetAnnotations()) &&
		o.GetDeletionTimestamp().Equal(n.GetDeletionTimestamp())
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if bv, ok := b[k]; !ok || bv != v {
			return false
		}
	}
	return true
}

// watchPolicies enqueues the templates a policy may claim whenever the policy
// changes, and re-runs discovery when a CRD changes.
func (d *Detector) watchPolicies(ctx context.Context) error {
	for _, obj := range []client.Object{&policyv1alpha1.PropagationPolicy{}, &policyv1alpha1.ClusterPropagationPolicy{}} {
		inf, err := d.Cache.GetInformer(ctx, obj)
		if err != nil {
			return fmt.Errorf("watch %T: %w", obj, err)
		}
		_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc: func(o any) {
				d.prioritized.track(o, false)
				d.changes.policyChanged(o)
				d.enqueueForPolicy(o)
			},
			UpdateFunc: func(o, n any) {
				// Only a changed spec or a deletion can change claims; the
				// permanent-id label the detector itself adds must not
				// re-evaluate every template.
				if policySpecUnchanged(o, n) {
					return
				}
				d.prioritized.track(n, false)
				d.changes.policyChanged(n)
				// The old selectors find the templates the policy may
				// release, the new ones those it may claim; a changed
				// priority finds the templates it holds among them.
				d.enqueueForPolicy(o)
				d.enqueueForPolicy(n)
			},
			DeleteFunc: func(o any) {
				d.prioritized.track(o, true)
				d.changes.policyGone(o)
				d.enqueueForPolicy(o)
			},
		})
		if err != nil {
			return err
		}
	}
	crdInf, err := d.Cache.GetInformer(ctx, &apiextensionsv1.CustomResourceDefinition{})
	if err != nil {
		return err
	}
	kick := func(any) {
		select {
		case d.kick <- struct{}{}:
		default:
		}
	}
	_, err = crdInf.AddEventHandler(cache.ResourceEventHandlerFuncs{AddFunc: kick, UpdateFunc: func(_, n any) { kick(n) }})
	if err != nil {
		return err
	}
	for _, obj := range []client.Object{&workv1alpha2.ResourceBinding{}, &workv1alpha2.ClusterResourceBinding{}} {
		inf, err := d.Cache.GetInformer(ctx, obj)
		if err != nil {
			return err
		}
		// A binding deleted behind our back is recreated.
		_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{DeleteFunc: d.enqueueForBinding})
		if err != nil {
			return err
		}
	}
	if err := d.watchOverrides(ctx); err != nil {
		return err
	}
	return d.watchPriorityClasses(ctx)
}

func policySpecUnchanged(o, n any) bool {
	oo, ok1 := o.(client.Object)
	nn, ok2 := n.(client.Object)
	if !ok1 || !ok2 || !oo.GetDeletionTimestamp().Equal(nn.GetDeletionTimestamp()) {
		return false
	}
	return oo.GetGeneration() == nn.GetGeneration() && oo.GetGeneration() != 0 &&
		oo.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation] == nn.GetAnnotations()[rolloutv1alpha1.StrategyAnnotation]
}

func (d *Detector) enqueueForBinding(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	var res workv1alpha2.ObjectReference
	switch b := obj.(type) {
	case *workv1alpha2.ResourceBinding:
		res = b.Spec.Resource
	case *workv1alpha2.ClusterResourceBinding:
		res = b.Spec.Resource
	default:
		return
	}
	d.mu.RLock()
	gvr, ok := d.byGVK[schema.FromAPIVersionAndKind(res.APIVersion, res.Kind)]
	d.mu.RUnlock()
	if ok {
		d.queue.Add(templateKey{GVR: gvr, Namespace: res.Namespace, Name: res.Name})
	}
}

// enqueueForPolicy enqueues the templates the policy selects, and only
// those: one lookup per named template, the templates of the selector's
// namespace (a PropagationPolicy's own) otherwise, filtered by the label
// selector. The reconcile of each decides; templates the policy holds are
// among those it selects (or selected, for the old version of an update).
func (d *Detector) enqueueForPolicy(obj any) {
	if t, ok := obj.(cache.DeletedFinalStateUnknown); ok {
		obj = t.Obj
	}
	var ns string
	var spec *policyv1alpha1.PropagationSpec
	switch p := obj.(type) {
	case *policyv1alpha1.PropagationPolicy:
		ns, spec = p.Namespace, &p.Spec
	case *policyv1alpha1.ClusterPropagationPolicy:
		spec = &p.Spec
	default:
		return
	}
	d.mu.RLock()
	defer d.mu.RUnlock()
	for _, sel := range spec.ResourceSelectors {
		gvr, ok := d.byGVK[schema.FromAPIVersionAndKind(sel.APIVersion, sel.Kind)]
		if !ok {
			continue
		}
		for _, o := range selectedTemplates(d.watching[gvr], ns, sel) {
			if !template.SkipNamespace(o.GetNamespace()) {
				d.enqueue(templateKey{GVR: gvr, Namespace: o.GetNamespace(), Name: o.GetName()}, o)
			}
		}
	}
}

// RequeueKind reconciles every template of gvk again: its interpretation
// changed (a ResourceInterpreterCustomization was applied or edited).
func (d *Detector) RequeueKind(gvk schema.GroupVersionKind) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	gvr, ok := d.byGVK[gvk]
	if !ok {
		return
	}
	w := d.watching[gvr]
	if w == nil {
		return
	}
	for _, o := range w.informer.GetStore().List() {
		if m, err := meta.Accessor(o); err == nil && !template.SkipNamespace(m.GetNamespace()) {
			d.queue.Add(templateKey{GVR: gvr, Namespace: m.GetNamespace(), Name: m.GetName()})
		}
	}
}

// nameIndex indexes templates by name, for selectors that name a template
// in every namespace (a ClusterPropagationPolicy's without a namespace).
const nameIndex = "name"

func indexByName(obj any) ([]string, error) {
	o, err := meta.Accessor(obj)
	if err != nil {
		return nil, nil
	}
	return []string{o.GetName()}, nil
}

// selectedTemplates returns the templates in w's cache that sel, a selector
// of a policy of namespace policyNamespace ("" for a
// ClusterPropagationPolicy), can select: by name a single lookup, otherwise
// those of the namespace that match the label selector (an invalid one
// selects nothing). It reads the informer's indexes; it lists the whole
// kind only for a ClusterPropagationPolicy selector with neither a name nor
// a namespace, which selects the whole kind.
func selectedTemplates(w *watched, policyNamespace string, sel policyv1alpha1.ResourceSelector) []metav1.Object {
	ns := sel.Namespace
	if policyNamespace != "" {
		if !w.namespaced || (ns != "" && ns != policyNamespace) {
			return nil
		}
		ns = policyNamespace
	}
	if !w.namespaced && ns != "" {
		return nil
	}
	store := w.informer.GetIndexer()
	var items []any
	switch {
	case sel.Name != "" && (ns != "" || !w.namespaced):
		key := sel.Name
		if ns != "" {
			key = ns + "/" + sel.Name
		}
		if item, exists, _ := store.GetByKey(key); exists {
			items = []any{item}
		}
	case sel.Name != "":
		items, _ = store.ByIndex(nameIndex, sel.Name)
	case ns != "":
		items, _ = store.ByIndex(cache.NamespaceIndex, ns)
	default:
		items = store.List()
	}
	var match labels.Selector
	if sel.Name == "" && sel.LabelSelector != nil {
		s, err := metav1.LabelSelectorAsSelector(sel.LabelSelector)
		if err != nil {
			return nil
		}
		match = s
	}
	out := make([]metav1.Object, 0, len(items))
	for _, item := range items {
		o, err := meta.Accessor(item)
		if err != nil || (match != nil && !match.Matches(labels.Set(o.GetLabels()))) {
			continue
		}
		out = append(out, o)
	}
	return out
}

// backlogPoll is how often feedBacklog looks whether the queue has room.
const backlogPoll = 2 * time.Millisecond

// feedBacklog moves templates from backlog to queue, keeping at most two
// per worker waiting in queue, until backlog is shut down. A key that is
// also changed meanwhile goes to queue directly and is reconciled again
// from here later: one more check that writes nothing.
func (d *Detector) feedBacklog(ctx context.Context) {
	// Like the controllers' first-list re-checks, the backlog waits until
	// every controller of the process runs (queue.Group's hold).
	if d.FirstListsReleased != nil {
		select {
		case <-d.FirstListsReleased():
		case <-ctx.Done():
			return
		}
	}
	for {
		key, quit := d.backlog.Get()
		if quit {
			return
		}
		for d.queue.Len() >= 2*d.Workers && !d.queue.ShuttingDown() {
			time.Sleep(backlogPoll)
		}
		d.queue.Add(key)
		d.backlog.Done(key)
	}
}

// work reconciles the templates of q (the FIFO queue or the prioritized one) until q shuts
// down.
func (d *Detector) work(ctx context.Context, q workqueue.TypedRateLimitingInterface[templateKey]) {
	for {
		key, quit := q.Get()
		if quit {
			return
		}
		if ctx.Err() != nil {
			// Shutting down: what is left stays for the next leader's list.
			q.Done(key)
			continue
		}
		if !d.take(q, key) {
			q.Done(key)
			continue
		}
		err := d.reconcile(ctx, key)
		d.inflight.Delete(key)
		switch {
		case reconciler.IsTerminal(err):
			// Only the user can mend it; the change that does reconciles the template again.
			klog.FromContext(ctx).Error(err, "Template not reconciled", "gvr", key.GVR.String(), "namespace", key.Namespace, "name", key.Name)
			q.Forget(key)
		case err != nil:
			klog.FromContext(ctx).V(1).Info("Requeue template", "gvr", key.GVR.String(), "namespace", key.Namespace, "name", key.Name, "err", err.Error())
			q.AddRateLimited(key)
		default:
			q.Forget(key)
		}
		q.Done(key)
	}
}

// template returns the cached template and whether its kind is namespaced.
func (d *Detector) template(key templateKey) (*unstructured.Unstructured, *watched, bool) {
	d.mu.RLock()
	w, ok := d.watching[key.GVR]
	d.mu.RUnlock()
	if !ok {
		return nil, nil, false
	}
	storeKey := key.Name
	if key.Namespace != "" {
		storeKey = key.Namespace + "/" + key.Name
	}
	item, exists, err := w.informer.GetStore().GetByKey(storeKey)
	if err != nil || !exists {
		d.claimed.Delete(key)
		return nil, w, false
	}
	obj := item.(*unstructured.Unstructured)
	if v, ok := d.claimed.Load(key); ok {
		fresh := v.(*unstructured.Unstructured)
		if obj.GetUID() == fresh.GetUID() && !sameClaim(obj, fresh) {
			// The informer has not delivered the claim yet.
			return fresh, w, true
		}
		// The informer has the claim (this version or a later one), or
		// the template was re-created: the cache is authoritative again.
		d.claimed.CompareAndDelete(key, v)
	}
	return obj, w, true
}

// sameClaim reports whether two versions of a template carry the same claim
// labels and annotations.
func sameClaim(a, b *unstructured.Unstructured) bool {
	for _, k := range claimLabelKeys {
		if a.GetLabels()[k] != b.GetLabels()[k] {
			return false
		}
	}
	for _, k := range claimAnnotationKeys {
		if a.GetAnnotations()[k] != b.GetAnnotations()[k] {
			return false
		}
	}
	return true
}

// settle drops the claimed copy of a template once the informer delivers
// that very version (its resourceVersion, compared for equality only:
// resource versions are opaque).
func (d *Detector) settle(gvr schema.GroupVersionResource, obj any) {
	o, ok := obj.(*unstructured.Unstructured)
	if !ok {
		return
	}
	key := templateKey{GVR: gvr, Namespace: o.GetNamespace(), Name: o.GetName()}
	if v, ok := d.claimed.Load(key); ok && v.(*unstructured.Unstructured).GetResourceVersion() == o.GetResourceVersion() {
		d.claimed.CompareAndDelete(key, v)
	}
}

// ErrTemplatesLoading means the detector has not loaded a kind's templates
// yet (just started, or a CRD just appeared); retry shortly.
var ErrTemplatesLoading = binding.ErrTemplatesLoading

// Template returns a resource template from the detector's informers (the
// one cache of templates in the process). Errors: the kind is not watched
// yet, or its informer has not synced; callers retry.
func (d *Detector) Template(gvk schema.GroupVersionKind, namespace, name string) (*unstructured.Unstructured, bool, error) {
	gvr, ok := d.ResourceFor(gvk)
	if !ok {
		return nil, false, fmt.Errorf("kind %s is not watched yet: %w", gvk, ErrTemplatesLoading)
	}
	d.mu.RLock()
	w := d.watching[gvr]
	d.mu.RUnlock()
	if !w.informer.HasSynced() {
		return nil, false, fmt.Errorf("templates of %s: %w", gvk, ErrTemplatesLoading)
	}
	obj, _, found := d.template(templateKey{GVR: gvr, Namespace: namespace, Name: name})
	return obj, found, nil
}

// TemplatesMatching lists the templates of kind gvk in namespace whose labels
// match selector, from the detector's informers. The objects are the
// cache's own: read them, never change them. Errors as Template's.
func (d *Detector) TemplatesMatching(gvk schema.GroupVersionKind, namespace string, selector labels.Selector) ([]*unstructured.Unstructured, error) {
	gvr, ok := d.ResourceFor(gvk)
	if !ok {
		return nil, fmt.Errorf("kind %s is not watched yet: %w", gvk, ErrTemplatesLoading)
	}
	d.mu.RLock()
	w := d.watching[gvr]
	d.mu.RUnlock()
	if !w.informer.HasSynced() {
		return nil, fmt.Errorf("templates of %s: %w", gvk, ErrTemplatesLoading)
	}
	items, err := w.informer.GetIndexer().ByIndex(cache.NamespaceIndex, namespace)
	if err != nil {
		return nil, err
	}
	var out []*unstructured.Unstructured
	for _, item := range items {
		if u, ok := item.(*unstructured.Unstructured); ok && selector.Matches(labels.Set(u.GetLabels())) {
			out = append(out, u)
		}
	}
	return out, nil
}

// ResourceFor maps a template kind to its resource, for kinds the detector watches.
func (d *Detector) ResourceFor(gvk schema.GroupVersionKind) (schema.GroupVersionResource, bool) {
	d.mu.RLock()
	defer d.mu.RUnlock()
	gvr, ok := d.byGVK[gvk]
	return gvr, ok
}
