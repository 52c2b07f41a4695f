package detector

import (
	"context"
	"sync"
	"time"

	schedulingv1 "k8s.io/api/scheduling/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/util/workqueue"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller/priorityqueue"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/controllerkit/features"
	"github.com/flotilla-io/flotilla/internal/core/policymatch"
)

// The detector schedules most bindings itself (the Preschedule fast path), so the order in
// which it takes templates is the order in which they are scheduled. Karmada's
// PriorityBasedScheduling orders its scheduler's queue by the binding's schedulePriority;
// here the templates that a policy with a spec.schedulePriority selects wait in a queue of
// their own, ordered by that priority (higher first, then arrival), with workers of their
// own: a high-priority template created behind a backlog of low-priority ones is taken
// first. Every other template keeps the plain FIFO queue, which costs less per item
// (detector.go), and nothing is computed for it while no policy has a schedulePriority.

// prioritizedPolicies are the policies with a spec.schedulePriority, kept from the policy
// informers' events. Safe for concurrent use.
type prioritizedPolicies struct {
	mu   sync.RWMutex
	pps  map[types.NamespacedName]*policyv1alpha1.PropagationPolicy
	cpps map[string]*policyv1alpha1.ClusterPropagationPolicy
}

// track records o (a policy from an informer event, or a tombstone) as it is now; gone says
// it was deleted.
func (p *prioritizedPolicies) track(o any, gone bool) {
	if t, ok := o.(cache.DeletedFinalStateUnknown); ok {
		o, gone = t.Obj, true
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	switch pol := o.(type) {
	case *policyv1alpha1.PropagationPolicy:
		key := types.NamespacedName{Namespace: pol.Namespace, Name: pol.Name}
		if gone || pol.Spec.SchedulePriority == nil {
			delete(p.pps, key)
			return
		}
		if p.pps == nil {
			p.pps = map[types.NamespacedName]*policyv1alpha1.PropagationPolicy{}
		}
		p.pps[key] = pol
	case *policyv1alpha1.ClusterPropagationPolicy:
		if gone || pol.Spec.SchedulePriority == nil {
			delete(p.cpps, pol.Name)
			return
		}
		if p.cpps == nil {
			p.cpps = map[string]*policyv1alpha1.ClusterPropagationPolicy{}
		}
		p.cpps[pol.Name] = pol
	}
}

// spec returns the schedulePriority of the best match for obj among the policies, and
// whether one matches.
func (p *prioritizedPolicies) match(obj *unstructured.Unstructured) (*policyv1alpha1.SchedulePriority, bool) {
	p.mu.RLock()
	defer p.mu.RUnlock()
	if len(p.pps) == 0 && len(p.cpps) == 0 {
		return nil, false
	}
	var pps []*policyv1alpha1.PropagationPolicy
	for key, pol := range p.pps {
		if key.Namespace == obj.GetNamespace() {
			pps = append(pps, pol)
		}
	}
	cpps := make([]*policyv1alpha1.ClusterPropagationPolicy, 0, len(p.cpps))
	for _, pol := range p.cpps {
		cpps = append(cpps, pol)
	}
	c, ok := policymatch.BestMatch(obj, pps, cpps)
	if !ok {
		return nil, false
	}
	if c.Kind == policymatch.KindClusterPropagationPolicy {
		return p.cpps[c.Name].Spec.SchedulePriority, true
	}
	return p.pps[types.NamespacedName{Namespace: c.Namespace, Name: c.Name}].Spec.SchedulePriority, true
}

// newUrgentQueue is the queue of the templates a prioritized policy selects.
func newUrgentQueue() priorityqueue.PriorityQueue[templateKey] {
	return priorityqueue.New[templateKey]("detector-prioritized")
}

// shutDownUrgent shuts the prioritized queue down, once: unlike client-go's queues,
// controller-runtime's panics when shut down twice.
func (d *Detector) shutDownUrgent() { d.urgentDown.Do(d.urgent.ShutDown) }

// enqueue queues the template key, whose object is obj (nil when unknown or deleted): in
// the prioritized queue at its policy's schedulePriority when a policy with one selects it,
// else in the FIFO queue.
func (d *Detector) enqueue(key templateKey, obj any) {
	if prio, ok := d.priorityOf(obj); ok {
		d.urgent.AddWithOpts(priorityqueue.AddOpts{Priority: &prio}, key)
		return
	}
	d.queue.Add(key)
}

// priorityOf returns the value of the PriorityClass that the best-matching prioritized
// policy names for obj (0 while the class does not exist), and whether there is such a
// policy. False at once while the PriorityBasedScheduling gate is off or no policy has a
// schedulePriority.
func (d *Detector) priorityOf(obj any) (int, bool) {
	u, ok := obj.(*unstructured.Unstructured)
	if !ok || !features.Or(d.Features).Enabled(features.PriorityBasedScheduling) {
		return 0, false
	}
	sp, ok := d.prioritized.match(u)
	if !ok {
		return 0, false
	}
	pc := &schedulingv1.PriorityClass{}
	if err := d.Client.Get(context.Background(), client.ObjectKey{Name: sp.PriorityClassName}, pc); err != nil {
		return 0, true
	}
	return int(pc.Value), true
}

// inflightRetry is how soon a template that the other queue's worker is reconciling is
// tried again.
const inflightRetry = 5 * time.Millisecond

// take claims key for one reconcile across both queues; false when a worker of the other
// queue has it, in which case it is queued again in q shortly.
func (d *Detector) take(q workqueue.TypedRateLimitingInterface[templateKey], key templateKey) bool {
	if _, busy := d.inflight.LoadOrStore(key, struct{}{}); busy {
		q.AddAfter(key, inflightRetry)
		return false
	}
	return true
}
