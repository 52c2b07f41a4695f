package crds

import (
	"fmt"
	"strings"
)

// FieldUse says what acts on one spec field of the served CRDs, or that
// nothing does. Every spec field of every served CRD is covered by one
// entry (a test walks the CRDs), so a field that is added without deciding
// what reads it fails CI instead of being served and silently ignored.
type FieldUse struct {
	// Kinds are the kinds whose CRDs have the field (twins such as
	// PropagationPolicy and ClusterPropagationPolicy share entries).
	Kinds []string
	// Path is the field's path under the object, such as
	// "spec.placement.clusterAffinities[].overflowAffinities"; "[]" marks
	// the items of a list.
	Path string
	// Subtree says that the entry covers every field under Path too: for
	// values acted on whole (a label selector, a pod template, a metric
	// spec). Without it, each field under Path needs its own entry.
	Subtree bool
	// ActedOnBy names the controllers or admission plugins that act on the
	// field; empty when the field does not act.
	ActedOnBy string
	// NotActing, when the field does not act, says why and what happens to
	// it (stored, kept, documented); docs/reference/compatibility.md lists
	// every such field.
	NotActing string
}

var (
	propagationPolicies = []string{"PropagationPolicy", "ClusterPropagationPolicy"}
	overridePolicies    = []string{"OverridePolicy", "ClusterOverridePolicy"}
	bindings            = []string{"ResourceBinding", "ClusterResourceBinding"}
	rolloutStrategies   = []string{"RolloutStrategy", "ClusterRolloutStrategy"}
)

// Fields is the table of every spec field of every served CRD.
var Fields = []FieldUse{
	// PropagationPolicy and ClusterPropagationPolicy.
	{Kinds: propagationPolicies, Path: "spec", ActedOnBy: "detector"},
	{Kinds: propagationPolicies, Path: "spec.resourceSelectors", Subtree: true, ActedOnBy: "detector (claims), FlotillaPolicyClaim admission"},
	{Kinds: propagationPolicies, Path: "spec.priority", ActedOnBy: "detector"},
	{Kinds: propagationPolicies, Path: "spec.preemption", ActedOnBy: "detector (gate PropagationPolicyPreemption)"},
	{Kinds: propagationPolicies, Path: "spec.activationPreference", ActedOnBy: "detector"},
	{Kinds: propagationPolicies, Path: "spec.dependentOverrides", ActedOnBy: "detector"},
	{Kinds: propagationPolicies, Path: "spec.propagateDeps", ActedOnBy: "dependencies distributor (gate PropagateDeps)"},
	{Kinds: propagationPolicies, Path: "spec.association", NotActing: "deprecated by Karmada in favour of propagateDeps, and read by no Karmada controller either; stored"},
	{Kinds: propagationPolicies, Path: "spec.schedulerName", ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.conflictResolution", ActedOnBy: "execution controller"},
	{Kinds: propagationPolicies, Path: "spec.preserveResourcesOnDeletion", ActedOnBy: "execution controller"},
	{Kinds: propagationPolicies, Path: "spec.suspension", Subtree: true, ActedOnBy: "detector, binding controller, execution controller"},
	{Kinds: propagationPolicies, Path: "spec.schedulePriority", Subtree: true, ActedOnBy: "detector (the PriorityClass's value into the binding; gate PriorityBasedScheduling)"},
	{Kinds: propagationPolicies, Path: "spec.failover", ActedOnBy: "taint manager, application failover"},
	{Kinds: propagationPolicies, Path: "spec.failover.cluster", Subtree: true, ActedOnBy: "taint manager, graceful eviction"},
	{Kinds: propagationPolicies, Path: "spec.failover.application", Subtree: true, ActedOnBy: "application failover, graceful eviction"},
	{Kinds: propagationPolicies, Path: "spec.placement", ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinity", Subtree: true, ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities", ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities[].affinityName", ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities[].clusterNames", ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities[].exclude", ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities[].fieldSelector", Subtree: true, ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities[].labelSelector", Subtree: true, ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterAffinities[].overflowAffinities", Subtree: true, ActedOnBy: "scheduler (tier by tier with dynamic weight or Aggregated), FlotillaValidation admission"},
	{Kinds: propagationPolicies, Path: "spec.placement.clusterTolerations", Subtree: true, ActedOnBy: "scheduler, taint manager"},
	{Kinds: propagationPolicies, Path: "spec.placement.spreadConstraints", Subtree: true, ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.replicaScheduling", Subtree: true, ActedOnBy: "scheduler"},
	{Kinds: propagationPolicies, Path: "spec.placement.workloadAffinity", Subtree: true, ActedOnBy: "detector (the binding's groups), scheduler (gate WorkloadAffinity)"},

	// OverridePolicy and ClusterOverridePolicy.
	{Kinds: overridePolicies, Path: "spec", ActedOnBy: "binding controller"},
	{Kinds: overridePolicies, Path: "spec.resourceSelectors", Subtree: true, ActedOnBy: "binding controller"},
	{Kinds: overridePolicies, Path: "spec.overrideRules", Subtree: true, ActedOnBy: "binding controller, FlotillaValidation admission"},
	{Kinds: overridePolicies, Path: "spec.targetCluster", Subtree: true, ActedOnBy: "binding controller (Karmada's deprecated single rule)"},
	{Kinds: overridePolicies, Path: "spec.overriders", Subtree: true, ActedOnBy: "binding controller (Karmada's deprecated single rule)"},

	// ResourceBinding and ClusterResourceBinding: written by the detector
	// and the scheduler, read by the binding, status and failover
	// controllers.
	{Kinds: bindings, Path: "spec", ActedOnBy: "binding controller"},
	{Kinds: bindings, Path: "spec.resource", Subtree: true, ActedOnBy: "binding controller, status controller"},
	{Kinds: bindings, Path: "spec.replicas", ActedOnBy: "scheduler"},
	{Kinds: bindings, Path: "spec.replicaRequirements", Subtree: true, ActedOnBy: "scheduler"},
	{Kinds: bindings, Path: "spec.components", Subtree: true, ActedOnBy: "detector (from the interpreter's GetComponents), scheduler (MultiplePodTemplatesScheduling: a cluster with room for a full set when the placement pins one cluster), federatedResourceQuotaEnforcement"},
	{Kinds: bindings, Path: "spec.clusters", ActedOnBy: "binding controller"},
	{Kinds: bindings, Path: "spec.clusters[].name", ActedOnBy: "binding controller"},
	{Kinds: bindings, Path: "spec.clusters[].replicas", ActedOnBy: "binding controller"},
	{Kinds: bindings, Path: "spec.clusters[].components", Subtree: true, ActedOnBy: "scheduler (MultiplePodTemplatesScheduling: the chosen cluster's components and their replicas)"},
	{Kinds: bindings, Path: "spec.placement", Subtree: true, ActedOnBy: "scheduler (the policy's placement, copied; see the policy's entries)"},
	{Kinds: bindings, Path: "spec.propagateDeps", ActedOnBy: "dependencies distributor"},
	{Kinds: bindings, Path: "spec.requiredBy", Subtree: true, ActedOnBy: "dependencies distributor, binding controller"},
	{Kinds: bindings, Path: "spec.gracefulEvictionTasks", Subtree: true, ActedOnBy: "graceful eviction, binding controller"},
	{Kinds: bindings, Path: "spec.failover", Subtree: true, ActedOnBy: "taint manager, application failover"},
	{Kinds: bindings, Path: "spec.conflictResolution", ActedOnBy: "binding controller, execution controller"},
	{Kinds: bindings, Path: "spec.rescheduleTriggeredAt", ActedOnBy: "scheduler"},
	{Kinds: bindings, Path: "spec.suspension", Subtree: true, ActedOnBy: "scheduler (scheduling), binding controller (dispatching)"},
	{Kinds: bindings, Path: "spec.preserveResourcesOnDeletion", ActedOnBy: "binding controller"},
	{Kinds: bindings, Path: "spec.schedulerName", ActedOnBy: "scheduler"},
	{Kinds: bindings, Path: "spec.schedulePriority", Subtree: true, ActedOnBy: "scheduler (its queue hands out higher priorities first)"},
	{Kinds: bindings, Path: "spec.workloadAffinityGroups", Subtree: true, ActedOnBy: "scheduler (WorkloadAffinity and WorkloadAntiAffinity filters)"},

	// Work.
	{Kinds: []string{"Work"}, Path: "spec", ActedOnBy: "execution controller"},
	{Kinds: []string{"Work"}, Path: "spec.workload", Subtree: true, ActedOnBy: "execution controller"},
	{Kinds: []string{"Work"}, Path: "spec.suspendDispatching", ActedOnBy: "execution controller"},
	{Kinds: []string{"Work"}, Path: "spec.preserveResourcesOnDeletion", ActedOnBy: "execution controller"},

	// Cluster.
	{Kinds: []string{"Cluster"}, Path: "spec", ActedOnBy: "cluster controller"},
	{Kinds: []string{"Cluster"}, Path: "spec.id", ActedOnBy: "join, register (set); agentcsrapproving"},
	{Kinds: []string{"Cluster"}, Path: "spec.syncMode", ActedOnBy: "execution controller, agent"},
	{Kinds: []string{"Cluster"}, Path: "spec.apiEndpoint", ActedOnBy: "member registry"},
	{Kinds: []string{"Cluster"}, Path: "spec.secretRef", Subtree: true, ActedOnBy: "member registry"},
	{Kinds: []string{"Cluster"}, Path: "spec.insecureSkipTLSVerification", ActedOnBy: "member registry"},
	{Kinds: []string{"Cluster"}, Path: "spec.impersonatorSecretRef", Subtree: true, ActedOnBy: "Cluster proxy (unified authentication); unifiedAuth controller; join, agent (set)"},
	{Kinds: []string{"Cluster"}, Path: "spec.proxyURL", NotActing: "members are reached directly, not through an HTTP proxy; stored"},
	{Kinds: []string{"Cluster"}, Path: "spec.proxyHeader", Subtree: true, NotActing: "members are reached directly, not through an HTTP proxy; stored"},
	{Kinds: []string{"Cluster"}, Path: "spec.provider", ActedOnBy: "scheduler"},
	{Kinds: []string{"Cluster"}, Path: "spec.region", ActedOnBy: "scheduler"},
	{Kinds: []string{"Cluster"}, Path: "spec.zone", ActedOnBy: "scheduler"},
	{Kinds: []string{"Cluster"}, Path: "spec.zones", ActedOnBy: "scheduler"},
	{Kinds: []string{"Cluster"}, Path: "spec.taints", Subtree: true, ActedOnBy: "scheduler, taint manager"},
	{Kinds: []string{"Cluster"}, Path: "spec.resourceModels", Subtree: true, ActedOnBy: "cluster controller (allocatableModelings), scheduler (general estimate), FlotillaDefaulting and FlotillaValidation admission"},

	// ClusterTaintPolicy, WorkloadRebalancer.
	{Kinds: []string{"ClusterTaintPolicy"}, Path: "spec", Subtree: true, ActedOnBy: "clusterTaintPolicy controller"},
	{Kinds: []string{"WorkloadRebalancer"}, Path: "spec", Subtree: true, ActedOnBy: "workloadRebalancer controller"},

	// Autoscaling.
	{Kinds: []string{"FederatedHPA"}, Path: "spec", Subtree: true, ActedOnBy: "federatedHPA controller, FlotillaValidation and FlotillaDefaulting admission"},
	{Kinds: []string{"CronFederatedHPA"}, Path: "spec", Subtree: true, ActedOnBy: "cronFederatedHPA controller, FlotillaValidation admission"},

	// Resource interpreter.
	{Kinds: []string{"ResourceInterpreterCustomization"}, Path: "spec", Subtree: true, ActedOnBy: "resource interpreter"},

	// Networking.
	{Kinds: []string{"MultiClusterService"}, Path: "spec", Subtree: true, ActedOnBy: "multiClusterService, endpointsliceCollect and endpointsliceDispatch controllers"},
	{Kinds: []string{"MultiClusterIngress"}, Path: "spec", ActedOnBy: "multiClusterIngress controller"},
	{Kinds: []string{"MultiClusterIngress"}, Path: "spec.ingressClassName", ActedOnBy: "multiClusterIngress controller (served when the class's spec.controller is --provider-ingress-class)"},
	{Kinds: []string{"MultiClusterIngress"}, Path: "spec.defaultBackend", Subtree: true, ActedOnBy: "multiClusterIngress controller (serviceLocations, the provider's routes)"},
	{Kinds: []string{"MultiClusterIngress"}, Path: "spec.rules", Subtree: true, ActedOnBy: "multiClusterIngress controller (serviceLocations, the provider's routes)"},
	{Kinds: []string{"MultiClusterIngress"}, Path: "spec.tls", Subtree: true, NotActing: "the local provider serves plain HTTP (a cloud's provider would terminate TLS); stored"},
	{Kinds: []string{"ServiceExport"}, Path: "spec", ActedOnBy: "serviceExport controller"},
	{Kinds: []string{"ServiceExport"}, Path: "spec.exportedLabels", Subtree: true, NotActing: "mcs-api's newer field, not in Karmada's mcs-api; stored"},
	{Kinds: []string{"ServiceExport"}, Path: "spec.exportedAnnotations", Subtree: true, NotActing: "mcs-api's newer field, not in Karmada's mcs-api; stored"},
	{Kinds: []string{"ServiceImport"}, Path: "spec", ActedOnBy: "serviceImport controller"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.type", ActedOnBy: "serviceImport controller"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.ports", Subtree: true, ActedOnBy: "serviceImport controller"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.ips", NotActing: "written to the derived Service's status.loadBalancer.ingress as Karmada does, which the API server refuses on a ClusterIP Service since Kubernetes 1.29: a SyncDerivedServiceFailed warning on the ServiceImport says so"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.sessionAffinity", NotActing: "accepted and ignored"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.sessionAffinityConfig", Subtree: true, NotActing: "accepted and ignored"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.ipFamilies", NotActing: "accepted and ignored"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.internalTrafficPolicy", NotActing: "accepted and ignored"},
	{Kinds: []string{"ServiceImport"}, Path: "spec.trafficDistribution", NotActing: "accepted and ignored"},

	// Kinds served and stored, with no controller yet.
	{Kinds: []string{"FederatedResourceQuota"}, Path: "spec", Subtree: true, ActedOnBy: "federatedResourceQuotaSync, federatedResourceQuotaStatus and federatedResourceQuotaEnforcement controllers, scheduler (FederatedQuotaEnforcement), FlotillaValidation admission"},
	{Kinds: []string{"ClusterProfile"}, Path: "spec", Subtree: true, ActedOnBy: "clusterProfile controller (writes it, one per Cluster; the Cluster Inventory API's consumers read it)"},
	{Kinds: []string{"Remedy"}, Path: "spec", Subtree: true, ActedOnBy: "remedy controller (Cluster.status.remedyActions)"},
	// Flotilla's staged rollouts (rollout.flotilla.io).
	{Kinds: rolloutStrategies, Path: "spec", Subtree: true, ActedOnBy: "rollout controller (the binding's status.rollout, which the binding controller's gate reads)"},
}

// NotActingMarkdown is the list of the fields that do not act, one
// Markdown bullet per entry ("- Kind, Kind2 `path`: why"), in table order:
// docs/reference/compatibility.md holds it between the markers
// <!-- not-acting:begin --> and <!-- not-acting:end -->, checked by a test.
func NotActingMarkdown() string {
	var b strings.Builder
	for _, e := range Fields {
		if e.NotActing == "" {
			continue
		}
		fmt.Fprintf(&b, "- %s `%s`: %s.\n", strings.Join(e.Kinds, ", "), e.Path, e.NotActing)
	}
	return b.String()
}
