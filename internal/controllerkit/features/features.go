// Package features declares Flotilla's feature gates, with Karmada's names and
// defaults, on k8s.io/component-base/featuregate. It is a domain package: a
// controller reads a gate through the featuregate.FeatureGate it is given,
// never by importing another controller, and `flotilla controller-manager
// --feature-gates=...` (or `flotilla up --feature-gates=...`, which passes
// the value on) sets them.
package features

import (
	"k8s.io/component-base/featuregate"
)

const (
	// PropagationPolicyPreemption lets a PropagationPolicy or
	// ClusterPropagationPolicy with spec.preemption Always take resource
	// templates from a policy it outranks (Karmada's gate of the same name,
	// alpha, off by default). Off, a claim never moves to another policy
	// while its policy exists and still selects the template.
	PropagationPolicyPreemption featuregate.Feature = "PropagationPolicyPreemption"

	// PropagateDeps lets a policy's spec.propagateDeps send the ConfigMaps,
	// Secrets, ServiceAccounts and PersistentVolumeClaims a workload refers
	// to along with it (Karmada's gate of the same name, beta, on by
	// default). Off, the dependencies distributor does not run and
	// spec.propagateDeps is ignored.
	PropagateDeps featuregate.Feature = "PropagateDeps"

	// MultiClusterService lets a MultiClusterService (networking.karmada.io)
	// act: type CrossCluster sends the Service of the same name to its
	// provider and consumer clusters and the providers' endpoints to the
	// consumers; type LoadBalancer gives it an address from the load
	// balancer provider (Karmada's gate of the same name, alpha, off by
	// default; `flotilla up` turns it on in the local stack). Off, the
	// multiclusterservice and endpointsliceDispatch controllers do not run
	// and endpointsliceCollect collects nothing for them.
	MultiClusterService featuregate.Feature = "MultiClusterService"

	// Failover lets Flotilla move workloads away from failed clusters
	// (Karmada's gate, off by default): with it, the taint manager evicts
	// bindings from clusters with an untolerated NoExecute taint (with the
	// controller manager's --enable-no-execute-taint-eviction). Off, nothing
	// is ever removed from a cluster because it is unhealthy.
	Failover featuregate.Feature = "Failover"

	// GracefulEviction makes an eviction graceful (Karmada's gate, beta, on
	// by default): the cluster goes into the binding's
	// spec.gracefulEvictionTasks, the replacement is scheduled elsewhere,
	// and the old copy is removed once the replacement is healthy or at the
	// task's timeout. Off, an evicted cluster's copy is removed at once.
	GracefulEviction featuregate.Feature = "GracefulEviction"

	// StatefulFailoverInjection puts the values an application failover's
	// statePreservation rules took from the failed copy onto the new
	// copies as labels (Karmada's gate, alpha, off by default).
	StatefulFailoverInjection featuregate.Feature = "StatefulFailoverInjection"

	// PriorityBasedScheduling lets a policy's spec.schedulePriority act
	// (Karmada's gate, beta, on by default): the detector resolves its
	// PriorityClass into the binding's spec.schedulePriority.priority, and
	// the scheduler's queue hands out higher priorities first. Off, the
	// field is stored and the binding gets no priority.
	PriorityBasedScheduling featuregate.Feature = "PriorityBasedScheduling"

	// WorkloadAffinity lets a policy's placement.workloadAffinity act
	// (Karmada's gate, alpha, off by default): the detector writes each
	// ResourceBinding's spec.workloadAffinityGroups from the template's
	// label, and the scheduler keeps a group's workloads on the same
	// clusters (affinity) or apart (anti-affinity). Off, the field is
	// stored and nothing groups workloads.
	WorkloadAffinity featuregate.Feature = "WorkloadAffinity"

	// CustomizedClusterResourceModeling lets Clusters' resource models act
	// (Karmada's gate, beta, on by default): the cluster status controller
	// counts each member's nodes per grade of spec.resourceModels into
	// status.resourceSummary.allocatableModelings, and the scheduler's
	// general estimate caps a cluster's replicas by whole-node fit over
	// those counts. Off, the counts are not written and the estimate is the
	// summed free resources alone.
	CustomizedClusterResourceModeling featuregate.Feature = "CustomizedClusterResourceModeling"

	// SchedulingOvercommitProtection makes the scheduler remember the
	// replicas it has just placed until their member runs them Healthy (or
	// for five minutes), and deduct them from every other binding's capacity
	// estimate, so two workloads scheduled at once do not both take the same
	// free room (Karmada's gate, alpha, off by default).
	SchedulingOvercommitProtection featuregate.Feature = "SchedulingOvercommitProtection"

	// MultiplePodTemplatesScheduling schedules workloads with several pod
	// templates (a FlinkDeployment's job manager and task managers, the
	// interpreter's GetComponents in the binding's spec.components) as whole
	// sets (Karmada's gate, alpha, off by default): when the placement pins
	// one cluster, only a cluster with room for a full set is chosen, and its
	// spec.clusters entry lists the components' replicas. Off, the components
	// are recorded and scheduling sees the workload's replicas alone.
	MultiplePodTemplatesScheduling featuregate.Feature = "MultiplePodTemplatesScheduling"

	// FederatedQuotaEnforcement makes FederatedResourceQuotas' spec.overall
	// binding (Karmada's gate, alpha, off by default): the
	// federatedResourceQuotaEnforcement controller computes overallUsed from
	// the namespace's ResourceBindings, and the scheduler refuses a placement
	// that would take them past overall (Scheduled=False, QuotaExceeded).
	// Off, overallUsed sums what the members' ResourceQuotas report and
	// nothing is refused on the control plane.
	FederatedQuotaEnforcement featuregate.Feature = "FederatedQuotaEnforcement"

	// ClientsAllowCBOR lets Flotilla's clients read objects in CBOR from API
	// servers that serve it (client-go's gate of the same name, KEP-4222;
	// the local stack's API servers run with CBORServingAndStorage). An API
	// server without CBOR answers in JSON as before. On by default in
	// Flotilla, where client-go has it off: a restart at scale spends most of
	// its CPU encoding and decoding the informers' first lists, and CBOR
	// makes both several times cheaper. Off, every read is JSON.
	ClientsAllowCBOR featuregate.Feature = "ClientsAllowCBOR"
)

// specs are the gates Flotilla knows, at Karmada's maturity and defaults.
var specs = map[featuregate.Feature]featuregate.FeatureSpec{
	PropagationPolicyPreemption: {Default: false, PreRelease: featuregate.Alpha},
	PropagateDeps:               {Default: true, PreRelease: featuregate.Beta},
	MultiClusterService:         {Default: false, PreRelease: featuregate.Alpha},
	Failover:                    {Default: false, PreRelease: featuregate.Beta},
	GracefulEviction:            {Default: true, PreRelease: featuregate.Beta},
	StatefulFailoverInjection:   {Default: false, PreRelease: featuregate.Alpha},
	PriorityBasedScheduling:     {Default: true, PreRelease: featuregate.Beta},
	WorkloadAffinity:            {Default: false, PreRelease: featuregate.Alpha},
	ClientsAllowCBOR:            {Default: true, PreRelease: featuregate.Alpha},

	CustomizedClusterResourceModeling: {Default: true, PreRelease: featuregate.Beta},
	SchedulingOvercommitProtection:    {Default: false, PreRelease: featuregate.Alpha},
	FederatedQuotaEnforcement:         {Default: false, PreRelease: featuregate.Alpha},
	MultiplePodTemplatesScheduling:    {Default: false, PreRelease: featuregate.Alpha},
}

// New returns a gate holding every Flotilla feature at its default. Set it
// from a "Name=true,Other=false" string with Set, or register it as the
// --feature-gates flag with AddFlag (after which nothing can be added to
// it). Set fails, naming the gate, on an unknown name or a value that is not
// a boolean.
func New() featuregate.MutableFeatureGate {
	g := featuregate.NewFeatureGate()
	if err := g.Add(specs); err != nil {
		// Only a malformed spec above can fail; that is a programming error
		// caught by this package's tests.
		panic(err)
	}
	return g
}

// Defaults is a gate with every feature at its default, for callers given no
// gate. Nothing may Set it.
var Defaults featuregate.FeatureGate = New()

// Or returns g, or Defaults when g is nil.
func Or(g featuregate.FeatureGate) featuregate.FeatureGate {
	if g == nil {
		return Defaults
	}
	return g
}

// Check reports whether value is a valid --feature-gates value (for example
// "PropagationPolicyPreemption=true"; empty is valid). Errors name the
// unknown gate or the bad value, as the flag would.
func Check(value string) error {
	return New().Set(value)
}
