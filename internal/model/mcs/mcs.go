// Package mcs holds the vocabulary of the mcs-api path (ServiceExport and
// ServiceImport, multicluster.x-k8s.io) that Flotilla's serviceExport,
// endpointSlice and serviceImport controllers share: Karmada's labels, the
// names of the objects they make, and the kinds.
package mcs

import (
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// Kinds and resources of the mcs-api and of EndpointSlices.
var (
	ServiceExportGVK = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceExport"}
	ServiceImportGVK = schema.GroupVersionKind{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Kind: "ServiceImport"}
	ServiceExportGVR = schema.GroupVersionResource{Group: "multicluster.x-k8s.io", Version: "v1alpha1", Resource: "serviceexports"}
	EndpointSliceGVK = schema.GroupVersionKind{Group: "discovery.k8s.io", Version: "v1", Kind: "EndpointSlice"}
)

// Karmada's labels on the Works that hold EndpointSlices collected from a
// member (in the member's execution namespace, never applied back:
// spec.suspendDispatching).
const (
	// EndpointSliceNamespaceLabel and EndpointSliceNameLabel name the
	// exported Service the collected slice belongs to.
	EndpointSliceNamespaceLabel = "endpointslice.karmada.io/namespace"
	EndpointSliceNameLabel      = "endpointslice.karmada.io/name"
	// EndpointSliceManagedByLabel lists, "."-joined, who collected the
	// slice: "ServiceExport" (and "MultiClusterService").
	EndpointSliceManagedByLabel = "endpointslice.karmada.io/managed-by"
	// ManagedByServiceExport is the value EndpointSliceManagedByLabel
	// holds for the mcs-api path.
	ManagedByServiceExport = "ServiceExport"
	// CollectedFinalizer on a collected Work holds it until the
	// control-plane EndpointSlice made from it is gone.
	CollectedFinalizer = "karmada.io/endpointslice-controller"
)

// Labels Kubernetes and Karmada put on EndpointSlices.
const (
	// ServiceNameLabel ties an EndpointSlice to its Service.
	ServiceNameLabel = "kubernetes.io/service-name"
	// SliceManagedByLabel names the controller that manages a slice.
	SliceManagedByLabel = "endpointslice.kubernetes.io/managed-by"
	// ImportedSliceManager is SliceManagedByLabel on the slices Flotilla
	// makes on the control plane (and so on the consumers): Karmada's
	// endpointSlice controller.
	ImportedSliceManager = "endpointslice-controller.karmada.io"
	// DispatchedSliceManager is SliceManagedByLabel on the slices Karmada's
	// MultiClusterService dispatches to consumers.
	DispatchedSliceManager = "endpointslice-dispatch-controller.karmada.io"
	// WorkIDLabel on a control-plane slice is the permanent id of the Work
	// it was made from.
	WorkIDLabel = "work.karmada.io/permanent-id"
	// DerivedServiceLabel marks a derived Service with the ServiceImport it
	// is made for (mcs-api's well-known label).
	DerivedServiceLabel = "multicluster.kubernetes.io/service-name"
)

// DerivedServiceName is the Service made on the control plane for
// ServiceImport name: Karmada's "derived-<name>".
func DerivedServiceName(name string) string { return "derived-" + name }

// ImportedSliceName is the name of the control-plane EndpointSlice made
// from slice of cluster: Karmada's "imported-<cluster>-<slice>".
func ImportedSliceName(cluster, slice string) string { return "imported-" + cluster + "-" + slice }

// MadeByFlotilla reports a slice Flotilla (or Karmada) wrote itself, by its
// managed-by label: such a slice is never collected again (Karmada issue
// 6522 reported every backend twice because it was). Not by
// karmada.io/managed: a member's own slices copy their Service's labels,
// and a propagated Service carries that one.
func MadeByFlotilla(labels map[string]string) bool {
	switch labels[SliceManagedByLabel] {
	case ImportedSliceManager, DispatchedSliceManager:
		return true
	}
	return false
}
