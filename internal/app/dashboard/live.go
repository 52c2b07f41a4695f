package dashboard

import (
	"context"
	"fmt"
	"net/http"
	"sort"
	"strings"
	"sync"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
)

// watched are the kinds whose changes wake the pages, by topic (the
// resource's plural name, which pages subscribe to). Works and Events are
// not watched: what they change reaches a binding (its aggregatedStatus,
// conditions) in the same moment, and a fleet holds many times more of
// them (three Works per template on three members, and several events).
var watched = map[string]schema.GroupVersionResource{
	"clusters":                   {Group: "cluster.karmada.io", Version: "v1alpha1", Resource: "clusters"},
	"resourcebindings":           {Group: "work.karmada.io", Version: "v1alpha2", Resource: "resourcebindings"},
	"clusterresourcebindings":    {Group: "work.karmada.io", Version: "v1alpha2", Resource: "clusterresourcebindings"},
	"propagationpolicies":        {Group: "policy.karmada.io", Version: "v1alpha1", Resource: "propagationpolicies"},
	"clusterpropagationpolicies": {Group: "policy.karmada.io", Version: "v1alpha1", Resource: "clusterpropagationpolicies"},
	"overridepolicies":           {Group: "policy.karmada.io", Version: "v1alpha1", Resource: "overridepolicies"},
	"clusteroverridepolicies":    {Group: "policy.karmada.io", Version: "v1alpha1", Resource: "clusteroverridepolicies"},
	"federatedhpas":              {Group: "autoscaling.karmada.io", Version: "v1alpha1", Resource: "federatedhpas"},
	"cronfederatedhpas":          {Group: "autoscaling.karmada.io", Version: "v1alpha1", Resource: "cronfederatedhpas"},
	"workloadrebalancers":        {Group: "apps.karmada.io", Version: "v1alpha1", Resource: "workloadrebalancers"},
}

// hub hands change notices to the pages' event streams. A notice names a
// kind only: the page reads again with its user's credentials, so what
// the dashboard itself watches is never shown to anyone.
type hub struct {
	mu   sync.Mutex
	subs map[*subscriber]struct{}
}

type subscriber struct {
	topics map[string]bool
	mu     sync.Mutex
	// pending are the topics changed since the stream last wrote.
	pending map[string]bool
	wake    chan struct{}
}

func newHub() *hub { return &hub{subs: map[*subscriber]struct{}{}} }

func (h *hub) subscribe(topics []string) *subscriber {
	s := &subscriber{topics: map[string]bool{}, pending: map[string]bool{}, wake: make(chan struct{}, 1)}
	for _, t := range topics {
		s.topics[t] = true
	}
	h.mu.Lock()
	h.subs[s] = struct{}{}
	h.mu.Unlock()
	return s
}

func (h *hub) unsubscribe(s *subscriber) {
	h.mu.Lock()
	delete(h.subs, s)
	h.mu.Unlock()
}

// publish tells every subscriber of topic that it changed.
func (h *hub) publish(topic string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for s := range h.subs {
		if !s.topics[topic] {
			continue
		}
		s.mu.Lock()
		s.pending[topic] = true
		s.mu.Unlock()
		select {
		case s.wake <- struct{}{}:
		default:
		}
	}
}

func (s *subscriber) take() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]string, 0, len(s.pending))
	for t := range s.pending {
		out = append(out, t)
	}
	clear(s.pending)
	sort.Strings(out)
	return out
}

// startWatches runs one metadata-only informer per watched kind with the
// dashboard's credentials, keeping only each object's name (a few hundred
// bytes each, however big the object), and publishes every change.
func (s *Server) startWatches(ctx context.Context) error {
	mc, err := metadata.NewForConfig(s.own)
	if err != nil {
		return err
	}
	factory := metadatainformer.NewSharedInformerFactory(mc, 0)
	for topic, gvr := range watched {
		inf := factory.ForResource(gvr).Informer()
		if err := inf.SetTransform(slim); err != nil {
			return err
		}
		publish := func(any) { s.hub.publish(topic) }
		if _, err := inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
			AddFunc:    publish,
			UpdateFunc: func(_, o any) { publish(o) },
			DeleteFunc: publish,
		}); err != nil {
			return err
		}
	}
	factory.Start(ctx.Done())
	return nil
}

// slim keeps an object's namespace, name and resourceVersion: enough for
// the informer's bookkeeping.
func slim(obj any) (any, error) {
	m, ok := obj.(*metav1.PartialObjectMetadata)
	if !ok {
		return obj, nil
	}
	return &metav1.PartialObjectMetadata{TypeMeta: m.TypeMeta, ObjectMeta: metav1.ObjectMeta{
		Namespace: m.Namespace, Name: m.Name, ResourceVersion: m.ResourceVersion, UID: m.UID}}, nil
}

// serveLive is GET /live?topics=a,b: a server-sent event stream with one
// "change" event (data: the topic) per changed kind, at most one per topic
// every 100 ms, and a comment every 20 s to keep proxies from closing it.
func (s *Server) serveLive(w http.ResponseWriter, r *http.Request, _ *user) {
	flusher, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming is not supported here", http.StatusInternalServerError)
		return
	}
	var topics []string
	for _, t := range strings.Split(r.URL.Query().Get("topics"), ",") {
		if _, known := watched[t]; known {
			topics = append(topics, t)
		}
	}
	sub := s.hub.subscribe(topics)
	defer s.hub.unsubscribe(sub)
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Accel-Buffering", "no")
	fmt.Fprint(w, "retry: 2000\n\n")
	flusher.Flush()
	keepalive := time.NewTicker(20 * time.Second)
	defer keepalive.Stop()
	for {
		select {
		case <-r.Context().Done():
			return
		case <-keepalive.C:
			fmt.Fprint(w, ": keepalive\n\n")
		case <-sub.wake:
			for _, t := range sub.take() {
				fmt.Fprintf(w, "event: change\ndata: %s\n\n", t)
			}
			flusher.Flush()
			// Coalesce a burst: what changes in the next 100 ms goes out together.
			select {
			case <-r.Context().Done():
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		flusher.Flush()
	}
}
