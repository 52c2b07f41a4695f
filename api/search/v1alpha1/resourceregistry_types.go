package v1alpha1

import (
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	clusterv1alpha1 "github.com/flotilla-io/flotilla/api/cluster/v1alpha1"
	policyv1alpha1 "github.com/flotilla-io/flotilla/api/policy/v1alpha1"
)

// Names of the ResourceRegistry resource, as Karmada serves it.
const (
	ResourceKindResourceRegistry     = "ResourceRegistry"
	ResourcePluralResourceRegistry   = "resourceregistries"
	ResourceSingularResourceRegistry = "resourceregistry"
)

// ResourceRegistry (Karmada's search.karmada.io/v1alpha1 ResourceRegistry, cluster-scoped) names
// the kinds `flotilla search` caches from the member clusters its targetCluster selects.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ResourceRegistry struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is what to cache, from which clusters.
	Spec ResourceRegistrySpec `json:"spec,omitempty"`
	// Status reports whether the cache holds what Spec names.
	// +optional
	Status ResourceRegistryStatus `json:"status,omitempty"`
}

// ResourceRegistrySpec is Karmada's spec of a ResourceRegistry.
type ResourceRegistrySpec struct {
	// TargetCluster selects the member clusters whose objects are cached, as a
	// PropagationPolicy's clusterAffinity selects clusters (names, label and field
	// selectors, exclusions).
	TargetCluster policyv1alpha1.ClusterAffinity `json:"targetCluster"`
	// ResourceSelectors are the kinds cached: apiVersion and kind, and optionally
	// one namespace (empty means all namespaces).
	ResourceSelectors []ResourceSelector `json:"resourceSelectors"`
	// BackendStore is where Karmada would also write the cached items (OpenSearch).
	// Flotilla accepts it and validates the addresses, but keeps every item in its own
	// memory cache only, and says so in the Ready condition's message.
	// +optional
	BackendStore *BackendStoreConfig `json:"backendStore,omitempty"`
}

// ResourceSelector is one cached kind: Karmada's search.karmada.io ResourceSelector.
type ResourceSelector struct {
	// APIVersion of the kind, for example "apps/v1".
	APIVersion string `json:"apiVersion"`
	// Kind, for example "Deployment".
	Kind string `json:"kind"`
	// Namespace narrows the cache to one namespace; empty means all.
	// +optional
	Namespace string `json:"namespace,omitempty"`
}

// BackendStoreConfig is Karmada's choice of an external store for cached items.
type BackendStoreConfig struct {
	// OpenSearch is an OpenSearch cluster Karmada copies the items into.
	// +optional
	OpenSearch *OpenSearchConfig `json:"openSearch,omitempty"`
}

// OpenSearchConfig is how Karmada reaches an OpenSearch cluster.
type OpenSearchConfig struct {
	// Addresses are the node URLs (http or https), for example https://localhost:9200.
	Addresses []string `json:"addresses"`
	// SecretRef names a Secret of karmada-system with userName and password.
	SecretRef clusterv1alpha1.LocalSecretReference `json:"secretRef"`
}

// ResourceRegistryStatus is what `flotilla search` reports of a ResourceRegistry.
type ResourceRegistryStatus struct {
	// Conditions: Ready, True when every selected kind is cached from every
	// selected cluster that serves it; False with reason UnknownKind when a
	// selector names a kind no selected cluster serves, or CacheNotSynced while
	// the caches fill (the message names the kinds and clusters).
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

// Condition type and reasons `flotilla search` sets on a ResourceRegistry.
const (
	// ConditionReady reports whether the registry's kinds are cached.
	ConditionReady = "Ready"
	// ReasonCached: every selected kind is cached from every selected cluster.
	ReasonCached = "Cached"
	// ReasonUnknownKind: a selector's kind is served by none of the selected clusters
	// (or its apiVersion is malformed).
	ReasonUnknownKind = "UnknownKind"
	// ReasonCacheNotSynced: some caches are still filling, or a cluster cannot be reached.
	ReasonCacheNotSynced = "CacheNotSynced"
	// ReasonNoCluster: targetCluster selects no cluster.
	ReasonNoCluster = "NoClusterSelected"
)

// ResourceRegistryList is a list of ResourceRegistries.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type ResourceRegistryList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []ResourceRegistry `json:"items"`
}

// Search is the virtual resource behind /apis/search.karmada.io/v1alpha1/search/cache/<path>:
// it has no objects of its own.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Search struct {
	metav1.TypeMeta `json:",inline"`
}

// Proxying is the virtual resource behind /apis/search.karmada.io/v1alpha1/proxying/karmada/proxy/<path>:
// it has no objects of its own.
//
// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object
type Proxying struct {
	metav1.TypeMeta `json:",inline"`
}
