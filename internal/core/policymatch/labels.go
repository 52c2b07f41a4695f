package policymatch

// Bookkeeping keys that Karmada writes on a resource template once a policy has claimed it, and
// on the policy itself (the permanent IDs, set by Karmada's mutating webhook). The strings are
// Karmada's own so that templates claimed by either system are recognised by both.
const (
	// PropagationPolicyPermanentIDLabel carries the permanent ID of a PropagationPolicy. Karmada
	// puts it on the policy when the policy is created and copies it to every resource template
	// the policy claims, so a claim survives the policy being renamed or recreated.
	PropagationPolicyPermanentIDLabel = "propagationpolicy.karmada.io/permanent-id"

	// PropagationPolicyNameAnnotation is set on a claimed resource template to the name of the
	// PropagationPolicy that claimed it.
	PropagationPolicyNameAnnotation = "propagationpolicy.karmada.io/name"

	// PropagationPolicyNamespaceAnnotation is set on a claimed resource template to the
	// namespace of the PropagationPolicy that claimed it.
	PropagationPolicyNamespaceAnnotation = "propagationpolicy.karmada.io/namespace"

	// ClusterPropagationPolicyPermanentIDLabel carries the permanent ID of a
	// ClusterPropagationPolicy, on the policy and on every resource template it claims.
	ClusterPropagationPolicyPermanentIDLabel = "clusterpropagationpolicy.karmada.io/permanent-id"

	// ClusterPropagationPolicyNameAnnotation is set on a claimed resource template to the name of
	// the ClusterPropagationPolicy that claimed it.
	ClusterPropagationPolicyNameAnnotation = "clusterpropagationpolicy.karmada.io/name"
)

// Per-template conflict handling (Karmada's batch-migration feature).
const (
	// ConflictResolutionAnnotation, on a resource template, says what to do when the object
	// already exists in a member cluster and Karmada does not manage it yet. Its value wins over
	// the claiming policy's spec.conflictResolution. Valid values are ConflictResolutionOverwrite
	// and ConflictResolutionAbort, in lower case; anything else is ignored.
	ConflictResolutionAnnotation = "work.karmada.io/conflict-resolution"

	// ConflictResolutionOverwrite is the ConflictResolutionAnnotation value that takes over and
	// overwrites an existing, unmanaged object in the member cluster.
	ConflictResolutionOverwrite = "overwrite"

	// ConflictResolutionAbort is the ConflictResolutionAnnotation value that leaves an existing,
	// unmanaged object alone and reports the conflict.
	ConflictResolutionAbort = "abort"
)

// Kinds of the two propagation policies, as they appear in Claim.Kind.
const (
	// KindPropagationPolicy is the kind of the namespaced policy.
	KindPropagationPolicy = "PropagationPolicy"
	// KindClusterPropagationPolicy is the kind of the cluster-scoped policy.
	KindClusterPropagationPolicy = "ClusterPropagationPolicy"
)

// HasClaim reports whether labels (of a template, or of its binding) carry
// the claim of a PropagationPolicy or ClusterPropagationPolicy.
func HasClaim(labels map[string]string) bool {
	return labels[PropagationPolicyPermanentIDLabel] != "" || labels[ClusterPropagationPolicyPermanentIDLabel] != ""
}
