// Package native is Flotilla's built-in resource interpreter: the knowledge Karmada's
// default (native) interpreter has about Kubernetes kinds, as pure functions on unstructured
// objects.
//
// Each operation matches Karmada's interpreter operation of the same name:
//
//   - GetReplicas (InterpretReplica): desired replicas and per-replica scheduling needs;
//   - ReviseReplica (ReviseReplica): the replicas one member cluster runs; ReviseDividedReplicas
//     adds a Job's share of spec.completions, as Karmada's binding controller does;
//   - ReflectStatus (InterpretStatus): the part of a member object's status copied into
//     Work.status.manifestStatuses[].status;
//   - InterpretHealth (InterpretHealth): Healthy, Unhealthy or Unknown for a member object;
//   - AggregateStatus (AggregateStatus): the resource template's status computed from the
//     per-cluster statuses in ResourceBinding.status.aggregatedStatus.
//   - Retain (Retain): the fields a member cluster owns, kept from its copy when it is updated.
//
// Prune is Karmada's prune step, not an interpreter operation: it strips what a template holds
// that makes no sense in a member before the template goes into a Work.
//
// Kinds are recognised by API group and kind, whatever the version. Kinds without a rule get
// Karmada's defaults: no replicas, the whole status reflected, Healthy, status not aggregated.
// Nothing here mutates its arguments.
package native
