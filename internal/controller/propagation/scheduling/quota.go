package scheduling

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/utils/clock"
	"sigs.k8s.io/controller-runtime/pkg/client"

	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/quota"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// recentFor is how long a decision's usage stands in for its binding's cached placement.
const recentFor = 30 * time.Second

// Quotas enforces FederatedResourceQuotas on placements (FederatedQuotaEnforcement), as
// Karmada's ResourceBinding webhook does: a decision that makes a namespace's bindings use
// more of a resource than a quota's spec.overall allows is refused with quota.ExceededError
// (Scheduled=False, reason QuotaExceeded), and the binding keeps its last placement; a
// decision that uses no more than the binding's current placement (scaling down) is always
// admitted. Admissions in one namespace are made one at a time, and each admitted decision's
// usage counts until the cache shows it. nil enforces nothing.
type Quotas struct {
	// Clock tells the time recent usages are forgotten by; nil is the real clock.
	Clock clock.PassiveClock

	mu     sync.Mutex
	recent map[string]recentUsage // namespace/name of a binding → its latest admitted usage
}

type recentUsage struct {
	usage corev1.ResourceList
	at    time.Time
}

// admit checks b's decision to place onto clusters against the FederatedResourceQuotas of its
// namespace, read through c.
func (q *Quotas) admit(ctx context.Context, c client.Reader, b binding.Object, clusters []workv1alpha2.TargetCluster) error {
	if q == nil || b.GetNamespace() == "" {
		return nil
	}
	quotas := &policyv1alpha1.FederatedResourceQuotaList{}
	if err := c.List(ctx, quotas, client.InNamespace(b.GetNamespace())); err != nil {
		return fmt.Errorf("list the FederatedResourceQuotas of %s: %w", b.GetNamespace(), err)
	}
	if len(quotas.Items) == 0 {
		return nil
	}
	spec := binding.Spec(b)
	before, after := quota.Usage(spec, spec.Clusters), quota.Usage(spec, clusters)
	q.mu.Lock()
	defer q.mu.Unlock()
	grows := false
	for i := range quotas.Items {
		grows = grows || quota.Grows(quotas.Items[i].Spec.Overall, before, after)
	}
	if grows {
		bindings := &workv1alpha2.ResourceBindingList{}
		if err := c.List(ctx, bindings, client.InNamespace(b.GetNamespace())); err != nil {
			return fmt.Errorf("list the ResourceBindings of %s: %w", b.GetNamespace(), err)
		}
		override := q.recentIn(b.GetNamespace())
		override[b.GetName()] = after
		for i := range quotas.Items {
			fq := &quotas.Items[i]
			if over := quota.Exceeded(fq.Spec.Overall, quota.Namespace(fq.Spec.Overall, bindings.Items, override)); len(over) > 0 {
				return &quota.ExceededError{Quota: fq.Namespace + "/" + fq.Name, Resources: over}
			}
		}
	}
	if q.recent == nil {
		q.recent = map[string]recentUsage{}
	}
	q.recent[b.GetNamespace()+"/"+b.GetName()] = recentUsage{usage: after, at: reconciler.Now(q.Clock)}
	return nil
}

// recentIn returns the fresh recent usages of namespace's bindings by name, dropping stale
// ones. Callers hold q.mu.
func (q *Quotas) recentIn(namespace string) map[string]corev1.ResourceList {
	out := map[string]corev1.ResourceList{}
	for key, r := range q.recent {
		if reconciler.Now(q.Clock).Sub(r.at) > recentFor {
			delete(q.recent, key)
			continue
		}
		if ns, name, _ := strings.Cut(key, "/"); ns == namespace {
			out[name] = r.usage
		}
	}
	return out
}
