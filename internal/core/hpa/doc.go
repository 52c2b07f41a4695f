// Package hpa is the pure core of Karmada's FederatedHPA controller: it turns the
// metrics of a workload that runs in several member clusters into a replica count for the
// resource template, with the Kubernetes HorizontalPodAutoscaler's semantics. It reads no
// API server; the controller hands it what it observed.
//
//   - ReplicaCalculator computes one proposal per metric (Resource, ContainerResource, Pods,
//     Object, External), from the pods gathered from every member cluster and a metrics client
//     of the Kubernetes HPA's shape, divided by the calibration factor of a Duplicated
//     placement as Karmada does.
//   - History.Normalize applies the scaling rules: min/max bounds, and either the classic
//     rules (no spec.behavior) or the behavior's policies and stabilization windows.
//   - Recommender.Recommend runs one sync's decision end to end and says which status
//     conditions, with which of the HPA's reasons (api/autoscaling/v1alpha1), to set.
//   - SetDefaults fills in what a FederatedHPA leaves out, as Kubernetes defaults an HPA.
//   - Config holds the controller manager's --horizontal-pod-autoscaler-* settings.
//
// The calculator and the normalization are ported from Kubernetes'
// pkg/controller/podautoscaler (each ported file says so at its top); what Kubernetes exports
// is used as it is (the metrics client interface, GetResourceUtilizationRatio,
// GetMetricUsageRatio, the API defaulting of pkg/apis/autoscaling/v2).
package hpa
