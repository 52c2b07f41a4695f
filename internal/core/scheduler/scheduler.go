// Package scheduler is the placement core of Flotilla's scheduler: pure functions that take a
// snapshot (one binding's placement and replica needs, plus the member clusters known now) and
// decide which clusters receive the resource and how many replicas each runs. It implements
// the behaviour of Karmada's default scheduler for ResourceBinding.spec.clusters:
//
//   - filters: cluster readiness, API enablement, placement.clusterAffinity (or the ordered
//     groups of placement.clusterAffinities), placement.clusterTolerations against
//     Cluster.spec.taints, and the fields spreadConstraints group by;
//   - selection: placement.spreadConstraints (by cluster, region, zone or provider);
//   - replica assignment: placement.replicaScheduling (Duplicated, or Divided by static
//     weights, dynamic weights or Aggregated).
//
// Nothing here reads or writes the API server; the controller that owns bindings builds the
// Input, calls Schedule and writes the result and the Scheduled condition.
package scheduler

import (
	"fmt"
	"slices"
	"sort"
	"time"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
	workv1alpha2 "github.com/flotilla-io/flotilla/api/work/v1alpha2"
	"github.com/flotilla-io/flotilla/internal/core/scheduler/capacity"
)

// Input is one scheduling problem: a binding's placement and replica needs plus the member
// clusters known now. Schedule does not modify anything Input points to.
type Input struct {
	// Resource is the binding's spec.resource; its apiVersion and kind must be served by a
	// cluster (status.apiEnablements) for the cluster to be feasible.
	Resource workv1alpha2.ObjectReference

	// Placement is the binding's spec.placement. Nil places the resource, duplicated, on
	// every feasible cluster.
	Placement *policyv1alpha1.Placement

	// Replicas is the binding's spec.replicas; 0 for kinds without replicas (ConfigMap,
	// Service, ...), which go to every selected cluster with 0 replicas.
	Replicas int32

	// ReplicaRequirements is the binding's spec.replicaRequirements, the requests of one
	// replica, used to estimate how many replicas a cluster can take. May be nil.
	ReplicaRequirements *workv1alpha2.ReplicaRequirements

	// Components are the binding's spec.components: the pod templates of a multi-component
	// workload (a FlinkDeployment's job manager and task managers).
	Components []workv1alpha2.Component

	// MultiplePodTemplates is Karmada's MultiplePodTemplatesScheduling: when the binding has
	// Components and its placement pins one cluster (a spreadConstraint by cluster with
	// minGroups = maxGroups = 1), only clusters with room for one full set of components are
	// chosen (capacity.Estimators.AvailableSets), and, with several components, the chosen
	// cluster's spec.clusters entry lists each component's replicas.
	MultiplePodTemplates bool

	// Estimators are what the estimate of a cluster's free room draws on besides its
	// resource summary: resource models, the node-level estimator and the placements
	// assumed but not yet running. Nil is Karmada's default: the general estimator with
	// resource models.
	Estimators *capacity.Estimators

	// Clusters are the member clusters known now. Nil entries are ignored.
	Clusters []*clusterv1alpha1.Cluster

	// Previous is the binding's current spec.clusters. A cluster listed here keeps the
	// resource through transient trouble (not Ready, API list not reported, NoSchedule
	// taints), breaks ties in its favour, and Aggregated and dynamic weight division change
	// its replicas only by the difference between Replicas and what Previous holds. Pass nil
	// to schedule from scratch, for example after the placement itself changed.
	Previous []workv1alpha2.TargetCluster

	// ObservedAffinityName is the binding's status.schedulerObservingAffinityName: the
	// clusterAffinities term the last decision used. Scheduling starts from that term, so a
	// binding that failed over to a later term does not move back on its own. Empty starts
	// from the first term.
	ObservedAffinityName string

	// Evicting are the clusters of the binding's spec.gracefulEvictionTasks: the resource is
	// leaving them, so they are not chosen again until the task is done, as in Karmada.
	Evicting []string

	// TaintManagerEvicts says that the taint manager evicts bindings from clusters with
	// untolerated NoExecute taints (Failover on, with --enable-no-execute-taint-eviction), so
	// that eviction can be graceful: a cluster in Previous then keeps the resource through a
	// NoExecute taint here. Off, such a cluster is dropped by the scheduler itself.
	TaintManagerEvicts bool

	// Workloads are the other workloads of the binding's workload affinity groups
	// (placement.workloadAffinity, resolved into spec.workloadAffinityGroups), for
	// Karmada's WorkloadAffinity and WorkloadAntiAffinity filters. Nil when it has none.
	Workloads *WorkloadGroups

	// StepTimer, if set, is told how long each step of the algorithm took, per affinity term
	// tried: "Filter" (the filters), "Select" (capacity estimates and spread constraints) and
	// "AssignReplicas" (replicaScheduling), Karmada's scheduleStep names. Nil reads no clock.
	StepTimer func(step string, d time.Duration)
}

// WorkloadGroups are the binding's workload affinity groups and the other ResourceBindings
// of its namespace in each (Karmada's WorkloadAffinity and WorkloadAntiAffinity filters).
type WorkloadGroups struct {
	// AffinityGroup is spec.workloadAffinityGroups.affinityGroup ("<key>=<value>"); a
	// cluster is feasible only if every binding in Affinity is placed on it.
	AffinityGroup string
	Affinity      []Peer
	// AntiAffinityGroup is spec.workloadAffinityGroups.antiAffinityGroup; a cluster is
	// feasible only if no binding in AntiAffinity is placed on it.
	AntiAffinityGroup string
	AntiAffinity      []Peer
}

// Peer is another binding of a workload group and the clusters it is placed on. A peer
// with no clusters yet constrains nothing, so the first workload of a group is never
// blocked.
type Peer struct {
	Name     string
	Clusters []string
}

// The steps StepTimer is told about.
const (
	StepFilter         = "Filter"
	StepSelect         = "Select"
	StepAssignReplicas = "AssignReplicas"
)

// Decision is the outcome of scheduling one binding.
type Decision struct {
	// Clusters is the new spec.clusters: target clusters sorted by name, with replicas.
	Clusters []workv1alpha2.TargetCluster
	// AffinityName is the clusterAffinities term that produced Clusters, for the binding's
	// status.schedulerObservingAffinityName; empty when the placement has none.
	AffinityName string
}

// Schedule returns the target clusters for in, sorted by name, with their replicas. See
// Decide for the errors; Decide also reports which clusterAffinities term was used.
func Schedule(in Input) ([]workv1alpha2.TargetCluster, error) {
	d, err := Decide(in)
	return d.Clusters, err
}

// Decide schedules in. For placement.clusterAffinities it tries the terms in order, starting
// from in.ObservedAffinityName, and returns the first term that schedules; if none does, the
// error of the last term tried.
//
// Errors: *NoClusterFitError when the filters reject every cluster; *UnschedulableError when
// spread constraints or resources cannot be met; any other error for a placement that cannot
// be evaluated (invalid selector, unknown enum value). ConditionReason maps them to the
// Scheduled condition's reason.
func Decide(in Input) (Decision, error) {
	if in.Replicas < 0 {
		return Decision{}, fmt.Errorf("replicas must not be negative, got %d", in.Replicas)
	}
	p, err := newProblem(in)
	if err != nil {
		return Decision{}, err
	}
	terms := affinityTerms(p.placement)
	var lastErr error
	for _, term := range terms[currentTerm(terms, in.ObservedAffinityName):] {
		clusters, err := p.scheduleTerm(term)
		if err == nil {
			return Decision{Clusters: clusters, AffinityName: term.name}, nil
		}
		lastErr = err
	}
	return Decision{}, lastErr
}

// problem is an Input prepared for scheduling: clusters sorted by name and the placement's
// replica strategy resolved.
type problem struct {
	in        Input
	placement *policyv1alpha1.Placement
	strategy  strategy
	clusters  []*clusterv1alpha1.Cluster
	previous  map[string]int32
	// sets: the binding is scheduled as sets of components (Input.MultiplePodTemplates).
	sets bool
}

func newProblem(in Input) (*problem, error) {
	p := &problem{in: in, placement: in.Placement, previous: map[string]int32{}}
	if p.placement == nil {
		p.placement = &policyv1alpha1.Placement{}
	}
	var err error
	if p.strategy, err = strategyOf(p.placement.ReplicaScheduling); err != nil {
		return nil, err
	}
	for _, c := range in.Clusters {
		if c != nil {
			p.clusters = append(p.clusters, c)
		}
	}
	sort.SliceStable(p.clusters, func(i, j int) bool { return p.clusters[i].Name < p.clusters[j].Name })
	for _, tc := range in.Previous {
		p.previous[tc.Name] += tc.Replicas
	}
	p.sets = in.MultiplePodTemplates && len(in.Components) > 0 && pinsOneCluster(p.placement)
	return p, nil
}

// candidate is a cluster that passed the filters.
type candidate struct {
	cluster *clusterv1alpha1.Cluster
	// available is the estimate of further replicas the cluster can take; only computed
	// when spread constraints or the division need it.
	available int32
	// held tells whether the cluster is in Input.Previous; previous is its replicas there.
	held     bool
	previous int32
	// tier is the group of the affinity term the cluster belongs to: 0 for the term's own
	// affinity, i for its overflowAffinities[i-1] (see tiers).
	tier int
}

// scheduleTerm runs filter, selection and replica assignment against one affinity term.
func (p *problem) scheduleTerm(term affinityTerm) ([]workv1alpha2.TargetCluster, error) {
	tiers, err := term.compile()
	if err != nil {
		return nil, err
	}
	watch := p.stopwatch()
	feasible, rejections := p.filter(tiers)
	watch.lap(StepFilter)
	if len(feasible) == 0 {
		return nil, &NoClusterFitError{Total: len(p.clusters), AffinityName: term.name, Rejections: rejections}
	}
	// Karmada ignores spread constraints when replicas are divided by static weights: the
	// weights alone say where replicas go.
	spread := p.strategy != staticWeighted && len(p.placement.SpreadConstraints) > 0
	if p.sets {
		if feasible = p.withRoomForASet(feasible); len(feasible) == 0 {
			return nil, unschedulable("no cluster has room for one full set of the %d components", len(p.in.Components))
		}
	} else if spread || p.strategy == dynamicWeighted || p.strategy == aggregated {
		for _, c := range feasible {
			c.available = p.in.Estimators.Available(c.cluster, p.in.ReplicaRequirements)
		}
	}
	selected := feasible
	if spread {
		if selected, err = selectClusters(p.placement.SpreadConstraints, feasible); err != nil {
			return nil, err
		}
	}
	watch.lap(StepSelect)
	if len(selected) == 0 {
		return nil, unschedulable("spreadConstraints: no cluster selected")
	}
	if p.sets && len(p.in.Components) > 1 {
		// Sets are not divided: the chosen cluster runs the whole workload, and its entry
		// lists the components, as Karmada writes it.
		watch.lap(StepAssignReplicas)
		return componentTargets(selected, p.in.Components), nil
	}
	clusters, err := p.assign(selected, p.overflows(tiers))
	watch.lap(StepAssignReplicas)
	return clusters, err
}

// pinsOneCluster reports a placement with a spreadConstraint by cluster of minGroups and
// maxGroups 1, which Karmada's multi-component scheduling requires.
func pinsOneCluster(p *policyv1alpha1.Placement) bool {
	for _, c := range p.SpreadConstraints {
		if c.SpreadByField == policyv1alpha1.SpreadByFieldCluster && c.MinGroups == 1 && c.MaxGroups == 1 {
			return true
		}
	}
	return false
}

// withRoomForASet keeps the candidates with room for at least one full set of components,
// each with its count of sets as available.
func (p *problem) withRoomForASet(feasible []*candidate) []*candidate {
	var out []*candidate
	for _, c := range feasible {
		if c.available = p.in.Estimators.AvailableSets(c.cluster, p.in.Components); c.available > 0 || c.held {
			out = append(out, c)
		}
	}
	return out
}

// componentTargets puts the whole workload on each selected cluster, with every component's
// replicas.
func componentTargets(selected []*candidate, components []workv1alpha2.Component) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, 0, len(selected))
	for _, c := range selected {
		tc := workv1alpha2.TargetCluster{Name: c.cluster.Name}
		for _, comp := range components {
			tc.Components = append(tc.Components, workv1alpha2.ComponentReplicas{Name: comp.Name, Replicas: comp.Replicas})
		}
		out = append(out, tc)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// stopwatch times the steps of one term for Input.StepTimer.
type stopwatch struct {
	timer func(step string, d time.Duration)
	last  time.Time
}

// stopwatch starts timing; without a StepTimer it reads no clock.
func (p *problem) stopwatch() stopwatch {
	w := stopwatch{timer: p.in.StepTimer}
	if w.timer != nil {
		w.last = time.Now()
	}
	return w
}

// lap tells the StepTimer that step took the time since the previous lap.
func (w *stopwatch) lap(step string) {
	if w.timer == nil {
		return
	}
	now := time.Now()
	w.timer(step, now.Sub(w.last))
	w.last = now
}

// affinityTerm is one group of clusters to try: placement.clusterAffinity, or one term of
// placement.clusterAffinities with its overflowAffinities.
type affinityTerm struct {
	name     string
	path     string
	affinity *policyv1alpha1.ClusterAffinity
	overflow []overflowTerm
}

func affinityTerms(placement *policyv1alpha1.Placement) []affinityTerm {
	if len(placement.ClusterAffinities) == 0 {
		return []affinityTerm{{path: "clusterAffinity", affinity: placement.ClusterAffinity}}
	}
	terms := make([]affinityTerm, len(placement.ClusterAffinities))
	for i := range placement.ClusterAffinities {
		t := &placement.ClusterAffinities[i]
		terms[i] = affinityTerm{
			name:     t.AffinityName,
			path:     fmt.Sprintf("clusterAffinities[%s]", t.AffinityName),
			affinity: &t.ClusterAffinity,
			overflow: t.OverflowAffinities,
		}
	}
	return terms
}

// currentTerm is the index of the term named observed (the binding's
// status.schedulerObservingAffinityName), or 0 when none is: where scheduling starts.
func currentTerm(terms []affinityTerm, observed string) int {
	return max(slices.IndexFunc(terms, func(t affinityTerm) bool { return t.name != "" && t.name == observed }), 0)
}

// targetClusters turns cluster→replicas into a name-sorted result, dropping clusters with no
// replicas unless keepZero is set.
func targetClusters(replicas map[string]int32, keepZero bool) []workv1alpha2.TargetCluster {
	out := make([]workv1alpha2.TargetCluster, 0, len(replicas))
	for name, n := range replicas {
		if n > 0 || keepZero {
			out = append(out, workv1alpha2.TargetCluster{Name: name, Replicas: n})
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Rejections runs the filters of in's current clusterAffinities term (the
// one in.ObservedAffinityName names, else the first) and returns why each
// cluster that is not feasible was rejected, in name order: what `flotilla
// explain` prints for the clusters a binding is not placed on. Errors: a
// placement that cannot be evaluated.
func Rejections(in Input) ([]Rejection, error) {
	p, err := newProblem(in)
	if err != nil {
		return nil, err
	}
	terms := affinityTerms(p.placement)
	tiers, err := terms[currentTerm(terms, in.ObservedAffinityName)].compile()
	if err != nil {
		return nil, err
	}
	_, rejections := p.filter(tiers)
	return rejections, nil
}
