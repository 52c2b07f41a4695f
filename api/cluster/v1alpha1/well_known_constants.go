package v1alpha1

// Condition types of Cluster.status.conditions, as Karmada names them.
const (
	// ClusterConditionReady is True when the member API server answers its health checks.
	ClusterConditionReady = "Ready"
	// ClusterReadyReason: the Ready condition is True.
	ClusterReadyReason = "ClusterReady"
	// ClusterNotReadyReason: the member answers but reports itself unhealthy.
	ClusterNotReadyReason = "ClusterNotReady"
	// ClusterNotReachableReason: the member's API server cannot be reached.
	ClusterNotReachableReason = "ClusterNotReachable"
	// ClusterStatusUnknownReason: a Pull-mode cluster's agent has stopped
	// renewing the cluster's Lease, so its status is no longer known
	// (Ready is Unknown).
	ClusterStatusUnknownReason = "ClusterStatusUnknown"

	// ClusterConditionCompleteAPIEnablements is True when status.apiEnablements lists every
	// group/version the member cluster serves (discovery returned no partial failure).
	ClusterConditionCompleteAPIEnablements = "CompleteAPIEnablements"
)

// Taint keys that the control plane puts on Cluster.spec.taints by itself.
const (
	// TaintClusterNotReady marks a cluster whose Ready condition is False.
	TaintClusterNotReady = "cluster.karmada.io/not-ready"

	// TaintClusterUnreachable marks a cluster whose Ready condition is Unknown.
	TaintClusterUnreachable = "cluster.karmada.io/unreachable"

	// TaintClusterUnschedulable marks a cordoned cluster (karmadactl cordon), with effect
	// NoSchedule.
	TaintClusterUnschedulable = "cluster.karmada.io/unschedulable"
)

// Keys of the Secret named by ClusterSpec.SecretRef and ClusterSpec.ImpersonatorSecretRef.
const (
	// SecretCADataKey holds the PEM CA bundle of the member API server.
	SecretCADataKey = "caBundle"

	// SecretTokenKey holds the bearer token.
	SecretTokenKey = "token"
)

// ExecutionSpacePrefix prefixes a cluster name to form its execution namespace, the namespace
// in the control plane that holds the cluster's Work objects ("karmada-es-<cluster name>").
const ExecutionSpacePrefix = "karmada-es-"

// ExecutionNamespace returns the execution namespace of the named member cluster.
func ExecutionNamespace(clusterName string) string {
	return ExecutionSpacePrefix + clusterName
}

// OrphanResourcesAnnotation is the annotation that, "true" on a Cluster being deleted, leaves the
// objects Flotilla propagated in the member instead of removing them
// (`flotilla unjoin --orphan`: a cluster handed back to its owners keeps its
// workloads running). Flotilla's own; Karmada always removes them.
const OrphanResourcesAnnotation = "cluster.flotilla.io/orphan-resources"
