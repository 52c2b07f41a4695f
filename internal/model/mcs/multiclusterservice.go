package mcs

import (
	"context"
	"slices"
	"sort"
	"strings"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/equality"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/util/retry"
	"sigs.k8s.io/controller-runtime/pkg/client"

	networkingv1alpha1 "github.com/flotilla-io/flotilla/api/networking/v1alpha1"
	workv1alpha1 "github.com/flotilla-io/flotilla/api/work/v1alpha1"
	"github.com/flotilla-io/flotilla/internal/model/binding"
)

// MultiClusterServiceGVK is networking.karmada.io/v1alpha1 MultiClusterService.
var MultiClusterServiceGVK = networkingv1alpha1.SchemeGroupVersion.WithKind("MultiClusterService")

// ServiceGVK is core/v1 Service, the kind a MultiClusterService exposes.
var ServiceGVK = schema.GroupVersionKind{Version: "v1", Kind: "Service"}

// Karmada's keys of the MultiClusterService path.
const (
	// MCSNameLabel and MCSNamespaceLabel, on a Work, name the
	// MultiClusterService it serves: the provider's marker Work, the Works
	// of the slices collected for it, and the Works that dispatch them to
	// the consumers.
	MCSNameLabel      = "multiclusterservice.karmada.io/name"
	MCSNamespaceLabel = "multiclusterservice.karmada.io/namespace"
	// ManagedByMultiClusterService is the value EndpointSliceManagedByLabel
	// holds (alone, or "."-joined with ManagedByServiceExport) on a slice
	// collected for a MultiClusterService.
	ManagedByMultiClusterService = "MultiClusterService"
	// ProvisionClusterAnnotation, on a dispatched slice and its Work, names
	// the provider cluster the endpoints come from.
	ProvisionClusterAnnotation = "endpointslice.karmada.io/provision-cluster"
	// MCSFinalizer holds a MultiClusterService until what it made (the
	// Service's clusters, the markers, a load balancer) is released.
	MCSFinalizer = "karmada.io/multiclusterservice-controller"
)

// ManagedBy splits an EndpointSliceManagedByLabel value into its owners.
func ManagedBy(value string) []string {
	if value == "" {
		return nil
	}
	return strings.Split(value, ".")
}

// JoinManagedBy is the EndpointSliceManagedByLabel value of owners: sorted
// and "."-joined ("MultiClusterService.ServiceExport"); "" for none.
func JoinManagedBy(owners []string) string {
	sort.Strings(owners)
	return strings.Join(slices.Compact(owners), ".")
}

// MarkerWorkName is the name of the marker Work the multiclusterservice
// controller keeps in each provider's execution namespace for the
// MultiClusterService namespace/name: the order to collect that cluster's
// slices of the Service of the same name. It holds the MultiClusterService
// and is never applied (spec.suspendDispatching).
func MarkerWorkName(namespace, name string) string {
	return binding.WorkName(MultiClusterServiceGVK.Kind, namespace, name)
}

// DispatchedSliceName is the name of the EndpointSlice a consumer gets for
// slice of provider: Karmada's "<provider>-<slice>".
func DispatchedSliceName(provider, slice string) string { return provider + "-" + slice }

// RequirerName is the name under which a MultiClusterService lists its
// clusters in the spec.requiredBy of its Service's binding:
// "<name>-multiclusterservice", a name no ResourceBinding has (a
// MultiClusterService is never a template).
func RequirerName(name string) string { return binding.Name(name, MultiClusterServiceGVK.Kind) }

// Has reports whether m asks for exposure type t.
func Has(m *networkingv1alpha1.MultiClusterService, t networkingv1alpha1.ExposureType) bool {
	return slices.Contains(m.Spec.Types, t)
}

// Providers are the clusters whose endpoints a CrossCluster
// MultiClusterService collects: spec.providerClusters (v1.9), else
// spec.serviceProvisionClusters (v1.8), else every cluster in clusters
// (including those that join later). Names not in clusters are returned
// apart, as unknown.
func Providers(m *networkingv1alpha1.MultiClusterService, clusters []string) (known, unknown []string) {
	names := selectorNames(m.Spec.ProviderClusters)
	if len(names) == 0 {
		names = m.Spec.ServiceProvisionClusters
	}
	return resolve(names, clusters)
}

// Consumers are the clusters a CrossCluster MultiClusterService exposes the
// Service in: spec.consumerClusters (v1.9), else
// spec.serviceConsumptionClusters (v1.8), else spec.range.clusterNames
// (v1.7), else every cluster in clusters. Names not in clusters are
// returned apart, as unknown.
func Consumers(m *networkingv1alpha1.MultiClusterService, clusters []string) (known, unknown []string) {
	names := selectorNames(m.Spec.ConsumerClusters)
	if len(names) == 0 {
		names = m.Spec.ServiceConsumptionClusters
	}
	if len(names) == 0 {
		names = m.Spec.Range.ClusterNames
	}
	return resolve(names, clusters)
}

func selectorNames(s []networkingv1alpha1.ClusterSelector) []string {
	out := make([]string, 0, len(s))
	for _, c := range s {
		out = append(out, c.Name)
	}
	return out
}

// resolve is names split into those in clusters and the others, each
// sorted and once; no names means all of clusters.
func resolve(names, clusters []string) (known, unknown []string) {
	if len(names) == 0 {
		known = append(known, clusters...)
	}
	for _, n := range names {
		if slices.Contains(clusters, n) {
			known = append(known, n)
		} else {
			unknown = append(unknown, n)
		}
	}
	slices.Sort(known)
	slices.Sort(unknown)
	return slices.Compact(known), slices.Compact(unknown)
}

// WorkIndex is the field index of Works by the MultiClusterService their
// MCSNamespaceLabel and MCSNameLabel name, as "namespace/name".
const WorkIndex = "flotilla.multiClusterService"

// IndexWorks registers WorkIndex on Works.
func IndexWorks(ctx context.Context, indexer client.FieldIndexer) error {
	return indexer.IndexField(ctx, &workv1alpha1.Work{}, WorkIndex, func(o client.Object) []string {
		l := o.GetLabels()
		if l[MCSNameLabel] == "" {
			return nil
		}
		return []string{l[MCSNamespaceLabel] + "/" + l[MCSNameLabel]}
	})
}

// Role tells the Works that carry a MultiClusterService's labels apart.
type Role int

const (
	// Marker is a provider's marker Work (MarkerWorkName).
	Marker Role = iota
	// Collected holds a slice collected from a provider.
	Collected
	// Dispatched sends a collected slice to a consumer.
	Dispatched
)

// RoleOf is the role of a Work that carries MCSNameLabel.
func RoleOf(w client.Object) Role {
	switch {
	case w.GetAnnotations()[ProvisionClusterAnnotation] != "":
		return Dispatched
	case slices.Contains(ManagedBy(w.GetLabels()[EndpointSliceManagedByLabel]), ManagedByMultiClusterService):
		return Collected
	}
	return Marker
}

// UpdateStatus applies mutate to the MultiClusterService key's status and
// writes it when it changed, retrying on conflicts with a fresh read. Two
// controllers write the status (each its own condition); this keeps them
// from undoing each other. A MultiClusterService that is gone is no error.
func UpdateStatus(ctx context.Context, c client.Client, key client.ObjectKey, mutate func(*corev1.ServiceStatus)) error {
	return retry.RetryOnConflict(retry.DefaultRetry, func() error {
		m := &networkingv1alpha1.MultiClusterService{}
		if err := c.Get(ctx, key, m); err != nil {
			return client.IgnoreNotFound(err)
		}
		before := m.Status.DeepCopy()
		mutate(&m.Status)
		if equality.Semantic.DeepEqual(before, &m.Status) {
			return nil
		}
		return c.Status().Update(ctx, m)
	})
}
