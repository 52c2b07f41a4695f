package scheduling

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"sigs.k8s.io/controller-runtime/pkg/client"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// groupDecisions serialises the decisions of bindings with workload affinity groups in this
// process (the controller's workers and the detector's Preschedule, through the Capacity
// they share), and remembers each such decision by binding (namespace/name) until the cache
// has it: two workloads of one group decided at once, or one decided before the other's
// placement reached the cache, would otherwise not see each other (Karmada's scheduler keeps
// its assigning bindings for this). The zero value is ready to use.
type groupDecisions struct {
	sync.Mutex
	decided map[string][]string
}

// decide is scheduler.Decide for b over clusters, with the estimators
// capacity gives (nil: the general estimator with resource models) and b's
// workload groups (spec.workloadAffinityGroups) resolved against the other
// ResourceBindings of its namespace that c reads; quotas, if set, then
// admit the decision or refuse it (quota.ExceededError).
func decide(ctx context.Context, c client.Reader, b binding.Object, clusters []*clusterv1alpha1.Cluster, taintManagerEvicts bool, capacity *Capacity, quotas *Quotas) (scheduler.Decision, error) {
	in := input(b, clusters, taintManagerEvicts)
	return capacity.decide(b.GetNamespace()+"/"+b.GetName(), binding.Spec(b), &in, func() (scheduler.Decision, error) {
		d, err := decideGrouped(ctx, c, b, in, capacity.groupDecisions())
		if err == nil {
			err = quotas.admit(ctx, c, b, d.Clusters)
		}
		return d, err
	})
}

// decideGrouped is scheduler.Decide(in) for b with its workload groups.
// grouped holds the process's recent group decisions.
func decideGrouped(ctx context.Context, c client.Reader, b binding.Object, in scheduler.Input, grouped *groupDecisions) (scheduler.Decision, error) {
	groups := binding.Spec(b).WorkloadAffinityGroups
	if groups == nil || b.GetNamespace() == "" || (groups.AffinityGroup == "" && groups.AntiAffinityGroup == "") {
		return scheduler.Decide(in)
	}
	grouped.Lock()
	defer grouped.Unlock()
	w, err := workloadGroups(ctx, c, b, groups, grouped)
	if err != nil {
		return scheduler.Decision{}, err
	}
	in.Workloads = w
	d, err := scheduler.Decide(in)
	if err == nil {
		if grouped.decided == nil {
			grouped.decided = map[string][]string{}
		}
		grouped.decided[b.GetNamespace()+"/"+b.GetName()] = targetNames(d.Clusters)
	}
	return d, err
}

// workloadGroups lists the other ResourceBindings of b's namespace in its
// affinity and anti-affinity groups, with their clusters (this process's
// latest decision, in grouped, whose lock the caller holds, where the cache has an older
// placement).
func workloadGroups(ctx context.Context, c client.Reader, b binding.Object, groups *workv1alpha2.WorkloadAffinityGroups, grouped *groupDecisions) (*scheduler.WorkloadGroups, error) {
	list := &workv1alpha2.ResourceBindingList{}
	if err := c.List(ctx, list, client.InNamespace(b.GetNamespace())); err != nil {
		return nil, fmt.Errorf("list the ResourceBindings of %s for workload affinity: %w", b.GetNamespace(), err)
	}
	out := &scheduler.WorkloadGroups{AffinityGroup: groups.AffinityGroup, AntiAffinityGroup: groups.AntiAffinityGroup}
	for i := range list.Items {
		rb := &list.Items[i]
		g := rb.Spec.WorkloadAffinityGroups
		if rb.Name == b.GetName() || g == nil || !rb.DeletionTimestamp.IsZero() {
			continue
		}
		clusters := targetNames(rb.Spec.Clusters)
		if d, ok := grouped.decided[rb.Namespace+"/"+rb.Name]; ok {
			if slices.Equal(d, clusters) {
				delete(grouped.decided, rb.Namespace+"/"+rb.Name) // the cache has caught up
			}
			clusters = d
		}
		peer := scheduler.Peer{Name: rb.Name, Clusters: clusters}
		if groups.AffinityGroup != "" && g.AffinityGroup == groups.AffinityGroup {
			out.Affinity = append(out.Affinity, peer)
		}
		if groups.AntiAffinityGroup != "" && g.AntiAffinityGroup == groups.AntiAffinityGroup {
			out.AntiAffinity = append(out.AntiAffinity, peer)
		}
	}
	return out, nil
}
