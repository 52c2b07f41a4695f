package search

import (
	"encoding/base64"
	"encoding/json"
	"strconv"
	"sync"

	"k8s.io/apimachinery/pkg/watch"
	toolscache "k8s.io/client-go/tools/cache"
)

// historySize is how many recent events each member cache keeps, so that a
// watch can resume from a resourceVersion a little in the past (a list's,
// or the last event a client saw); older ones get 410 Gone and relist.
const historySize = 4096

// cachedEvent is one change of a member cache.
type cachedEvent struct {
	typ watch.EventType
	obj *cachedObject
	rv  uint64
}

// history records a member cache's recent events and hands them to the
// watchers subscribed to it.
type history struct {
	mu     sync.Mutex
	events []cachedEvent // oldest first, at most historySize
	// floor is the resourceVersion below which events are unknown: the
	// informer's state when it was first synced, then the newest event
	// dropped from events.
	floor    uint64
	watchers map[*fleetWatch]struct{}
	mc       *memberCache
}

func newHistory(mc *memberCache) *history {
	return &history{mc: mc, watchers: map[*fleetWatch]struct{}{}}
}

// handler returns the informer handler that feeds h.
func (h *history) handler(inf toolscache.SharedIndexInformer) toolscache.ResourceEventHandler {
	record := func(typ watch.EventType, obj any) {
		if d, ok := obj.(toolscache.DeletedFinalStateUnknown); ok {
			obj = d.Obj
		}
		u, ok := obj.(*cachedObject)
		if !ok {
			return
		}
		rv, _ := strconv.ParseUint(u.GetResourceVersion(), 10, 64)
		h.mu.Lock()
		defer h.mu.Unlock()
		if typ == watch.Deleted {
			// A delete carries the object's last version; the deletion is newer.
			if last, err := strconv.ParseUint(inf.LastSyncResourceVersion(), 10, 64); err == nil && last > rv {
				rv = last
			}
		}
		ev := cachedEvent{typ: typ, obj: u, rv: rv}
		if len(h.events) == historySize {
			h.floor = h.events[0].rv
			h.events = h.events[1:]
		}
		h.events = append(h.events, ev)
		for w := range h.watchers {
			w.offer(h.mc, ev)
		}
	}
	return toolscache.ResourceEventHandlerDetailedFuncs{
		AddFunc: func(obj any, initial bool) {
			if initial {
				return
			}
			record(watch.Added, obj)
		},
		UpdateFunc: func(_, obj any) { record(watch.Modified, obj) },
		DeleteFunc: func(obj any) { record(watch.Deleted, obj) },
	}
}

// synced records where the history is known to begin: the informer's
// resourceVersion once it has synced (every later event is recorded; the
// first list's adds are state, not history).
func (h *history) synced(rv string) {
	v, err := strconv.ParseUint(rv, 10, 64)
	h.mu.Lock()
	defer h.mu.Unlock()
	if err == nil && v > h.floor {
		h.floor = v
	}
}

// decodeMultiClusterVersion reads Karmada's multi-cluster resourceVersion:
// base64url (no padding) of {"<cluster>":"<rv>"}. It returns nil for "" and
// "0" (any version), and ok false when rv is not one.
func decodeMultiClusterVersion(rv string) (map[string]string, bool) {
	if rv == "" || rv == "0" {
		return nil, true
	}
	data, err := base64.RawURLEncoding.DecodeString(rv)
	if err != nil {
		return nil, false
	}
	out := map[string]string{}
	if err := json.Unmarshal(data, &out); err != nil {
		return nil, false
	}
	return out, true
}
