package search

import (
	"context"
	"fmt"
	"strconv"
	"sync"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metainternalversion "k8s.io/apimachinery/pkg/apis/meta/internalversion"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	genericrequest "k8s.io/apiserver/pkg/endpoints/request"
	"k8s.io/apiserver/pkg/registry/rest"
)

// fleetStore serves get, list and watch of one cached resource from every
// member cache: the storage behind the proxy's cache answers, read by
// k8s.io/apiserver's own handlers (content negotiation, tables, watch
// streams).
type fleetStore struct {
	cache *Cache
	gvr   schema.GroupVersionResource
	rest.TableConvertor
	// rawJSON makes List answer a rawList, for a request that negotiated
	// plain JSON (rawAwareEncoder writes it).
	rawJSON bool
}

var (
	_ rest.Getter  = &fleetStore{}
	_ rest.Lister  = &fleetStore{}
	_ rest.Watcher = &fleetStore{}
)

func (s *fleetStore) New() runtime.Object     { return &unstructured.Unstructured{} }
func (s *fleetStore) NewList() runtime.Object { return &unstructured.UnstructuredList{} }
func (s *fleetStore) Destroy()                {}

// Get returns the object from the first cluster (by name) that holds it.
func (s *fleetStore) Get(ctx context.Context, name string, _ *metav1.GetOptions) (runtime.Object, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	obj, err := v.get(genericrequest.NamespaceValue(ctx), name)
	if err != nil {
		return nil, err
	}
	return &unstructured.Unstructured{Object: obj.(map[string]any)}, nil
}

// List answers as the search cache does (see view.list).
func (s *fleetStore) List(ctx context.Context, opts *metainternalversion.ListOptions) (runtime.Object, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	from, err := decodeContinue(opts.Continue)
	if err != nil {
		return nil, err
	}
	lq := &listQuery{namespace: genericrequest.NamespaceValue(ctx), labels: opts.LabelSelector, fields: opts.FieldSelector, limit: opts.Limit, from: from}
	if s.rawJSON {
		return newRawList(v, v.collect(lq)), nil
	}
	return v.list(lq), nil
}

func (s *fleetStore) view(ctx context.Context) (*view, error) {
	v, err := s.cache.Resource(s.gvr)
	if err != nil {
		return nil, err
	}
	addWarnings(ctx, v.skipped)
	addWarnings(ctx, v.uncovered(genericrequest.NamespaceValue(ctx)))
	return v, nil
}

// Watch streams the changes of every member cache, each object annotated
// with its cluster and carrying the multi-cluster resourceVersion of the
// stream so far, so that a client resumes from the last event it saw. A
// resourceVersion of "" or "0" starts with the current objects (ADDED); a
// multi-cluster one replays each cluster's recorded events after it (a
// cluster it does not name starts with its current objects), or fails with
// 410 Gone when a cluster's events since then are no longer kept.
func (s *fleetStore) Watch(ctx context.Context, opts *metainternalversion.ListOptions) (watch.Interface, error) {
	v, err := s.view(ctx)
	if err != nil {
		return nil, err
	}
	since, ok := decodeMultiClusterVersion(opts.ResourceVersion)
	if !ok {
		return nil, apierrors.NewBadRequest(fmt.Sprintf("resourceVersion %q is not one this server returned (base64url of {\"<cluster>\":\"<resourceVersion>\"}); list again", opts.ResourceVersion))
	}
	lq := &listQuery{namespace: genericrequest.NamespaceValue(ctx), labels: opts.LabelSelector, fields: opts.FieldSelector}
	w := newFleetWatch(lq)
	initialEvents := opts.SendInitialEvents != nil && *opts.SendInitialEvents
	for _, mc := range v.caches {
		if err := w.subscribe(mc, since, initialEvents); err != nil {
			w.Stop()
			return nil, err
		}
	}
	if initialEvents && opts.AllowWatchBookmarks {
		w.bookmarkInitialEventsEnd(v.gvk)
	}
	go w.pump()
	go func() {
		select {
		case <-ctx.Done():
			w.Stop()
		case <-w.done:
		}
	}()
	return w, nil
}

// maxPending is how many events a watcher may have waiting; a client that
// falls further behind is cut off and watches again.
const maxPending = 10000

// fleetWatch is one watch over several member caches.
type fleetWatch struct {
	query  *listQuery
	result chan watch.Event
	done   chan struct{}
	notify chan struct{}
	once   sync.Once

	mu      sync.Mutex
	pending []watch.Event
	rvs     map[string]uint64 // per cluster, the newest resourceVersion sent
	caches  []*memberCache
}

func newFleetWatch(lq *listQuery) *fleetWatch {
	return &fleetWatch{query: lq, result: make(chan watch.Event), done: make(chan struct{}),
		notify: make(chan struct{}, 1), rvs: map[string]uint64{}}
}

func (w *fleetWatch) ResultChan() <-chan watch.Event { return w.result }

// Stop ends the watch; its result channel closes.
func (w *fleetWatch) Stop() {
	w.once.Do(func() {
		close(w.done)
		w.mu.Lock()
		caches := w.caches
		w.mu.Unlock()
		for _, mc := range caches {
			mc.history.mu.Lock()
			delete(mc.history.watchers, w)
			mc.history.mu.Unlock()
		}
	})
}

// subscribe queues what the client has not seen of mc and registers w for
// mc's next events, atomically with respect to them.
func (w *fleetWatch) subscribe(mc *memberCache, since map[string]string, initialEvents bool) error {
	h := mc.history
	h.mu.Lock()
	defer h.mu.Unlock()
	from, resumed := since[mc.cluster]
	if resumed && !initialEvents {
		rv, err := strconv.ParseUint(from, 10, 64)
		if err != nil || rv < h.floor {
			return apierrors.NewResourceExpired(fmt.Sprintf("too old resource version for cluster %s: %s (the events kept start after %d); list again", mc.cluster, from, h.floor))
		}
		w.setRV(mc.cluster, rv)
		for _, ev := range h.events {
			if ev.rv > rv {
				w.offer(mc, ev)
			}
		}
	} else {
		rv, _ := strconv.ParseUint(mc.informer.LastSyncResourceVersion(), 10, 64)
		w.setRV(mc.cluster, rv)
		for _, obj := range mc.informer.GetStore().List() {
			if o, ok := obj.(*cachedObject); ok {
				w.offer(mc, cachedEvent{typ: watch.Added, obj: o})
			}
		}
	}
	h.watchers[w] = struct{}{}
	w.mu.Lock()
	w.caches = append(w.caches, mc)
	w.mu.Unlock()
	return nil
}

func (w *fleetWatch) setRV(cluster string, rv uint64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if rv > w.rvs[cluster] {
		w.rvs[cluster] = rv
	}
}

// multiVersion is the stream's multi-cluster resourceVersion (under w.mu).
func (w *fleetWatch) multiVersion() string {
	rvs := map[string]string{}
	for c, rv := range w.rvs {
		rvs[c] = strconv.FormatUint(rv, 10)
	}
	return multiClusterVersion(rvs)
}

// offer queues an event of mc for the client if it matches the query.
// It never blocks: it runs under the member cache's history lock.
func (w *fleetWatch) offer(mc *memberCache, ev cachedEvent) {
	cluster := mc.cluster
	match, decoded := w.query.matches(mc, ev.obj)
	if !match {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if ev.rv > w.rvs[cluster] {
		w.rvs[cluster] = ev.rv
	}
	if len(w.pending) >= maxPending {
		go w.Stop()
		return
	}
	obj := &unstructured.Unstructured{Object: annotatedOr(mc, ev.obj, decoded)}
	obj.SetResourceVersion(w.multiVersion())
	w.pending = append(w.pending, watch.Event{Type: ev.typ, Object: obj})
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// bookmarkInitialEventsEnd queues the bookmark that ends the initial events
// of a watch-list (sendInitialEvents=true).
func (w *fleetWatch) bookmarkInitialEventsEnd(gvk schema.GroupVersionKind) {
	w.mu.Lock()
	defer w.mu.Unlock()
	obj := &unstructured.Unstructured{}
	obj.SetGroupVersionKind(gvk)
	obj.SetResourceVersion(w.multiVersion())
	obj.SetAnnotations(map[string]string{metav1.InitialEventsAnnotationKey: "true"})
	w.pending = append(w.pending, watch.Event{Type: watch.Bookmark, Object: obj})
	select {
	case w.notify <- struct{}{}:
	default:
	}
}

// pump hands queued events to the client in order, and closes the result
// channel when the watch stops.
func (w *fleetWatch) pump() {
	defer close(w.result)
	for {
		w.mu.Lock()
		batch := w.pending
		w.pending = nil
		w.mu.Unlock()
		for _, ev := range batch {
			select {
			case w.result <- ev:
			case <-w.done:
				return
			}
		}
		select {
		case <-w.notify:
		case <-w.done:
			return
		}
	}
}

// stopWatchers ends every watch on a member cache that is going away; their
// clients watch again and find the caches as they are then.
func (h *history) stopWatchers() {
	h.mu.Lock()
	ws := make([]*fleetWatch, 0, len(h.watchers))
	for w := range h.watchers {
		ws = append(ws, w)
	}
	h.mu.Unlock()
	for _, w := range ws {
		w.Stop()
	}
}
