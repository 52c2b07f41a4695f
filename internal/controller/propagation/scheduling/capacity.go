package scheduling

import (
	"context"
	"sync"
	"time"

	"k8s.io/client-go/tools/cache"
	"k8s.io/utils/clock"
	ctrl "sigs.k8s.io/controller-runtime"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/controllerkit/reconciler"
	"github.com/flotilla-io/flotilla/internal/core/scheduler"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/capacity"
	"github.com/flotilla-io/flotilla/internal/member/registry"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// DefaultEstimatorTimeout is --scheduler-estimator-timeout's default, Karmada's 3s.
const DefaultEstimatorTimeout = 3 * time.Second

// AssumptionTTL is how long replicas just placed are deducted from other bindings' estimates
// when their member does not report them Healthy: Karmada's five minutes.
const AssumptionTTL = 5 * time.Minute

// Capacity is what this process's scheduling estimates draw on, shared by the scheduler of
// both binding kinds and the detector's Preschedule. The zero value (and nil) is Karmada's
// default scheduler: the general estimator with resource models.
type Capacity struct {
	// IgnoreModels is CustomizedClusterResourceModeling off.
	IgnoreModels bool
	// Members, if set, turns on the node-level estimator (--enable-scheduler-estimator): a
	// cluster's estimate is also capped by fitting replicas onto its real nodes, which the
	// member's informers follow (registry.Nodes). A member whose nodes are not known within
	// Timeout of first asking, such as a Pull-mode cluster the control plane cannot reach,
	// is estimated by the general estimator alone, as Karmada does when its estimator does
	// not answer. Pull-mode clusters are always estimated so: the control plane does not
	// reach into them.
	Members *registry.Registry
	// Timeout is --scheduler-estimator-timeout; 0 is DefaultEstimatorTimeout.
	Timeout time.Duration
	// MultiplePodTemplates is MultiplePodTemplatesScheduling: a binding with spec.components
	// whose placement pins one cluster goes only where a full set of components fits
	// (scheduler.Input.MultiplePodTemplates).
	MultiplePodTemplates bool
	// Overcommit is SchedulingOvercommitProtection: the replicas a decision adds to a cluster
	// are deducted from every other binding's estimate of that cluster until the binding's
	// aggregatedStatus reports the cluster Healthy, for AssumptionTTL at most. Decisions are
	// then made one at a time, so two bindings scheduled together see each other's.
	Overcommit bool
	// Clock tells the time assumptions expire at; nil is the real clock.
	Clock clock.PassiveClock

	groups  groupDecisions // the decisions of workload affinity groups (workloadgroups.go)
	waited  sync.Map       // cluster names whose nodes the estimator has waited for once
	mu      sync.Mutex     // held across a decision and its assumption, with Overcommit
	amu     sync.Mutex     // guards assumed
	assumed map[string]assumption
}

// assumption is what one binding's last decision added to clusters and not yet running.
type assumption struct {
	added   map[string]capacity.Demand
	expires time.Time
}

// groupDecisions is the memory of workload-group decisions that every decision with this
// Capacity shares; with no Capacity (some tests), a fresh one.
func (c *Capacity) groupDecisions() *groupDecisions {
	if c == nil {
		return &groupDecisions{}
	}
	return &c.groups
}

// decide runs fn (a scheduling decision of the binding key) with the estimators the binding
// should see and, with Overcommit, records what a successful decision adds to each cluster.
func (c *Capacity) decide(key string, spec *workv1alpha2.ResourceBindingSpec, in *scheduler.Input, fn func() (scheduler.Decision, error)) (scheduler.Decision, error) {
	if c == nil {
		return fn()
	}
	in.Estimators = &capacity.Estimators{IgnoreModels: c.IgnoreModels}
	in.MultiplePodTemplates = c.MultiplePodTemplates
	if c.Members != nil {
		in.Estimators.Nodes = c.nodes
	}
	if !c.Overcommit || spec.Replicas == 0 {
		return fn()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	in.Estimators.Assumed = func(cluster string) []capacity.Demand { return c.others(key, cluster) }
	d, err := fn()
	if err == nil {
		c.assume(key, spec, in.Previous, d.Clusters)
	}
	return d, err
}

// nodes is the node-level estimator's view of cluster. A Pull-mode cluster's
// nodes are not read: the control plane does not reach into it.
func (c *Capacity) nodes(cluster *clusterv1alpha1.Cluster) ([]capacity.Node, bool) {
	if cluster.Spec.SyncMode == clusterv1alpha1.Pull {
		return nil, false
	}
	timeout := c.Timeout
	if timeout <= 0 {
		timeout = DefaultEstimatorTimeout
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	m, err := c.Members.Get(ctx, cluster.Name)
	if err != nil {
		return nil, false
	}
	n := m.Nodes()
	if !n.Synced() {
		// Only the first question waits: a member that cannot be listed
		// must not hold every scheduling decision up by the timeout.
		if _, asked := c.waited.LoadOrStore(cluster.Name, true); asked || !n.WaitSynced(ctx, timeout) {
			return nil, false
		}
	}
	return n.Capacity(), true
}

// others are the replicas assumed in cluster for bindings other than key.
func (c *Capacity) others(key, cluster string) []capacity.Demand {
	c.amu.Lock()
	defer c.amu.Unlock()
	now := reconciler.Now(c.Clock)
	var out []capacity.Demand
	for k, a := range c.assumed {
		if now.After(a.expires) {
			delete(c.assumed, k)
			continue
		}
		if d, ok := a.added[cluster]; ok && k != key {
			out = append(out, d)
		}
	}
	return out
}

// assume records what the binding's new decision clusters adds over previous (its
// spec.clusters before the decision) to what it already had assumed: a decision that adds
// nothing keeps the replicas still assumed, each cluster's entry capped at the replicas the
// decision gives it, and a cluster the decision leaves is dropped.
func (c *Capacity) assume(key string, spec *workv1alpha2.ResourceBindingSpec, previous, clusters []workv1alpha2.TargetCluster) {
	held := map[string]int32{}
	for _, tc := range previous {
		held[tc.Name] += tc.Replicas
	}
	c.amu.Lock()
	defer c.amu.Unlock()
	if c.assumed == nil {
		c.assumed = map[string]assumption{}
	}
	old := c.assumed[key]
	a := assumption{added: map[string]capacity.Demand{}, expires: reconciler.Now(c.Clock).Add(AssumptionTTL)}
	for _, tc := range clusters {
		more := max(tc.Replicas-held[tc.Name], 0) + old.added[tc.Name].Replicas
		if more = min(more, tc.Replicas); more > 0 {
			d := capacity.Demand{Replicas: more}
			if r := spec.ReplicaRequirements; r != nil {
				d.Requests, d.NodeClaim = r.ResourceRequest, r.NodeClaim
			}
			a.added[tc.Name] = d
		}
	}
	if len(a.added) == 0 {
		delete(c.assumed, key)
		return
	}
	if len(old.added) > 0 && !old.expires.IsZero() {
		a.expires = old.expires // the TTL runs from the first decision that assumed
	}
	c.assumed[key] = a
}

// release drops the assumptions of binding key in the clusters whose aggregatedStatus turned
// Healthy between was and is (Karmada's rule: a cluster already Healthy before the decision
// does not release the replicas it has yet to start), and all of them once it is deleted (is
// nil).
func (c *Capacity) release(key string, was, is binding.Object) {
	c.amu.Lock()
	defer c.amu.Unlock()
	a, ok := c.assumed[key]
	if !ok {
		return
	}
	if is == nil {
		delete(c.assumed, key)
		return
	}
	healthy := func(b binding.Object) map[string]bool {
		out := map[string]bool{}
		if b == nil {
			return out
		}
		for _, s := range binding.Status(b).AggregatedStatus {
			out[s.ClusterName] = s.Health == workv1alpha2.ResourceHealthy
		}
		return out
	}
	before, after := healthy(was), healthy(is)
	for cluster := range a.added {
		if after[cluster] && !before[cluster] {
			delete(a.added, cluster)
		}
	}
	if len(a.added) == 0 {
		delete(c.assumed, key)
	}
}

// watch releases assumptions as the bindings of kind change, from the manager's informer.
func (c *Capacity) watch(mgr ctrl.Manager, kind binding.Kind) error {
	if c == nil || !c.Overcommit {
		return nil
	}
	inf, err := mgr.GetCache().GetInformer(context.Background(), kind.Empty())
	if err != nil {
		return err
	}
	object := func(o any) binding.Object {
		if d, ok := o.(cache.DeletedFinalStateUnknown); ok {
			o = d.Obj
		}
		b, _ := o.(binding.Object)
		return b
	}
	_, err = inf.AddEventHandler(cache.ResourceEventHandlerFuncs{
		UpdateFunc: func(o, n any) {
			if was, is := object(o), object(n); was != nil && is != nil {
				c.release(is.GetNamespace()+"/"+is.GetName(), was, is)
			}
		},
		DeleteFunc: func(o any) {
			if b := object(o); b != nil {
				c.release(b.GetNamespace()+"/"+b.GetName(), b, nil)
			}
		},
	})
	return err
}
