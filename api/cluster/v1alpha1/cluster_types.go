package v1alpha1

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Cluster registers one member cluster with the control plane: how to reach it (push mode) or
// that an agent reaches out from it (pull mode), where it sits (provider/region/zones) and what
// it reports back (version, enabled APIs, capacity). It is Karmada's cluster.karmada.io Cluster.
//
// The name must be a DNS-1123 label of at most 48 characters, because the execution namespace
// "karmada-es-<name>" derived from it must still be a valid namespace name.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=clusters,scope=Cluster
// +kubebuilder:subresource:status
// +kubebuilder:printcolumn:name="VERSION",type=string,JSONPath=`.status.kubernetesVersion`
// +kubebuilder:printcolumn:name="MODE",type=string,JSONPath=`.spec.syncMode`
// +kubebuilder:printcolumn:name="READY",type=string,JSONPath=`.status.conditions[?(@.type=="Ready")].status`
// +kubebuilder:printcolumn:name="AGE",type=date,JSONPath=`.metadata.creationTimestamp`
// +kubebuilder:validation:XValidation:rule="size(self.metadata.name) <= 48",message="metadata.name of a Cluster must be no more than 48 characters, so that its execution namespace karmada-es-<name> is a valid namespace name"
// +kubebuilder:validation:XValidation:rule="self.metadata.name.matches('^[a-z0-9]([-a-z0-9]*[a-z0-9])?$')",message="metadata.name of a Cluster must be a DNS-1123 label: lower case letters, digits and '-', starting and ending with a letter or digit"
type Cluster struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Spec is the desired registration: connection details and placement attributes.
	// +required
	Spec ClusterSpec `json:"spec"`

	// Status is what the cluster status controller last observed about the member cluster.
	// +optional
	Status ClusterStatus `json:"status,omitempty"`
}

// ClusterSpec is Karmada's Cluster.spec.
type ClusterSpec struct {
	// ID is a unique identifier of the member cluster, usually the UID of its kube-system
	// namespace; it lets the control plane notice a cluster joined twice under two names.
	// +optional
	ID string `json:"id,omitempty"`

	// SyncMode says who applies Works to the member cluster: Push (the control plane does)
	// or Pull (an agent running next to the member cluster does).
	// +kubebuilder:validation:Enum=Push;Pull
	// +required
	SyncMode ClusterSyncMode `json:"syncMode"`

	// APIEndpoint is the URL of the member cluster's kube-apiserver.
	// +optional
	APIEndpoint string `json:"apiEndpoint,omitempty"`

	// SecretRef names the Secret, in the control plane, that holds the credentials used to
	// reach the member cluster: key "caBundle" (PEM CA certificates) and key "token" (a bearer
	// token).
	// +optional
	SecretRef *LocalSecretReference `json:"secretRef,omitempty"`

	// ImpersonatorSecretRef names the Secret holding the token of the impersonator service
	// account in the member cluster, used by the cluster proxy to act on behalf of users.
	// Key "token".
	// +optional
	ImpersonatorSecretRef *LocalSecretReference `json:"impersonatorSecretRef,omitempty"`

	// InsecureSkipTLSVerification disables verification of the member API server's
	// certificate. Only for testing.
	// +optional
	InsecureSkipTLSVerification bool `json:"insecureSkipTLSVerification,omitempty"`

	// ProxyURL is an HTTP(S) or SOCKS5 proxy through which the member cluster is reached,
	// for example "socks5://proxy.example.com:1080".
	// +optional
	ProxyURL string `json:"proxyURL,omitempty"`

	// ProxyHeader holds extra HTTP headers sent to the proxy named by ProxyURL. A value may
	// hold several comma-separated values.
	// +optional
	ProxyHeader map[string]string `json:"proxyHeader,omitempty"`

	// Provider is the cloud provider that runs the cluster; the "provider" key of policy field
	// selectors and of spread constraints matches it.
	// +optional
	Provider string `json:"provider,omitempty"`

	// Region is the region the cluster runs in; the "region" key of policy field selectors
	// and of spread constraints matches it.
	// +optional
	Region string `json:"region,omitempty"`

	// Zone is the single zone the cluster runs in.
	// Deprecated: Karmada replaced it by Zones; it is kept so that older manifests still apply.
	// +optional
	Zone string `json:"zone,omitempty"`

	// Zones lists the zones the cluster spans; the "zone" key of policy field selectors and
	// of spread constraints matches them.
	// +optional
	Zones []string `json:"zones,omitempty"`

	// Taints repel workloads from the cluster unless their policy tolerates them
	// (placement.clusterTolerations). The control plane itself adds
	// cluster.karmada.io/not-ready and cluster.karmada.io/unreachable.
	// +optional
	Taints []corev1.Taint `json:"taints,omitempty"`

	// ResourceModels describe the nodes of the cluster as grades of resource ranges; the
	// scheduler's resource estimate counts how many nodes fall into each grade
	// (status.resourceSummary.allocatableModelings).
	// +optional
	ResourceModels []ResourceModel `json:"resourceModels,omitempty"`
}

// ClusterSyncMode is how Works reach a member cluster: Push or Pull.
type ClusterSyncMode string

const (
	// Push means the control plane applies Works to the member cluster directly.
	Push ClusterSyncMode = "Push"
	// Pull means an agent in the member cluster fetches and applies its Works.
	Pull ClusterSyncMode = "Pull"
)

// LocalSecretReference names a Secret in the control plane.
type LocalSecretReference struct {
	// Namespace of the Secret.
	// +required
	Namespace string `json:"namespace"`
	// Name of the Secret.
	// +required
	Name string `json:"name"`
}

// ResourceModel is one grade of a cluster's resource model: nodes whose allocatable
// resources fall inside every range belong to this grade.
type ResourceModel struct {
	// Grade is the index of this model; higher grades describe bigger nodes.
	// +required
	Grade uint `json:"grade"`

	// Ranges bounds each resource of this grade as the half-open interval [min, max).
	// +required
	Ranges []ResourceModelRange `json:"ranges"`
}

// ResourceModelRange bounds one resource of a ResourceModel as [Min, Max).
type ResourceModelRange struct {
	// Name is the resource name, for example "cpu" or "memory".
	// +required
	Name corev1.ResourceName `json:"name"`

	// Min is the inclusive lower bound.
	// +required
	Min resource.Quantity `json:"min"`

	// Max is the exclusive upper bound.
	// +required
	Max resource.Quantity `json:"max"`
}

// ClusterStatus is Karmada's Cluster.status, written by the cluster status controller
// (or by the agent in pull mode).
type ClusterStatus struct {
	// KubernetesVersion is the version reported by the member API server, for example
	// "v1.37.2".
	// +optional
	KubernetesVersion string `json:"kubernetesVersion,omitempty"`

	// APIEnablements lists the resources the member cluster serves, by group/version.
	// +optional
	APIEnablements []APIEnablement `json:"apiEnablements,omitempty"`

	// Conditions are the Ready and CompleteAPIEnablements conditions of the cluster.
	// +optional
	Conditions []metav1.Condition `json:"conditions,omitempty"`

	// NodeSummary counts the member cluster's nodes.
	// +optional
	NodeSummary *NodeSummary `json:"nodeSummary,omitempty"`

	// ResourceSummary sums the member cluster's node resources.
	// +optional
	ResourceSummary *ResourceSummary `json:"resourceSummary,omitempty"`

	// RemedyActions are the actions (for example "TrafficControl") that Remedy objects
	// currently require for this cluster.
	// +optional
	RemedyActions []string `json:"remedyActions,omitempty"`
}

// APIEnablement is one group/version served by a member cluster and its resources.
type APIEnablement struct {
	// GroupVersion is "group/version", or "v1" for the core group.
	// +required
	GroupVersion string `json:"groupVersion"`

	// Resources lists the resources of the group/version.
	// +optional
	Resources []APIResource `json:"resources,omitempty"`
}

// APIResource is one resource of an APIEnablement.
type APIResource struct {
	// Name is the plural resource name, for example "deployments".
	// +required
	Name string `json:"name"`

	// Kind is the kind of the resource, for example "Deployment".
	// +required
	Kind string `json:"kind"`
}

// NodeSummary counts the nodes of a member cluster.
type NodeSummary struct {
	// TotalNum is the number of nodes.
	// +optional
	TotalNum int32 `json:"totalNum,omitempty"`

	// ReadyNum is the number of Ready nodes.
	// +optional
	ReadyNum int32 `json:"readyNum,omitempty"`
}

// ResourceSummary sums the resources of a member cluster's nodes and pods.
type ResourceSummary struct {
	// Allocatable is the sum of the nodes' allocatable resources.
	// +optional
	Allocatable corev1.ResourceList `json:"allocatable,omitempty"`

	// Allocating is the sum of the requests of pods that are not scheduled yet.
	// +optional
	Allocating corev1.ResourceList `json:"allocating,omitempty"`

	// Allocated is the sum of the requests of scheduled pods.
	// +optional
	Allocated corev1.ResourceList `json:"allocated,omitempty"`

	// AllocatableModelings counts the nodes of each ResourceModel grade.
	// +optional
	AllocatableModelings []AllocatableModeling `json:"allocatableModelings,omitempty"`
}

// AllocatableModeling is the number of nodes that fall into one resource model grade.
type AllocatableModeling struct {
	// Grade is the ResourceModel grade.
	// +required
	Grade uint `json:"grade"`

	// Count is the number of nodes in the grade.
	// +required
	Count int `json:"count"`
}

// ClusterList is a list of Cluster.
//
// +kubebuilder:object:root=true
type ClusterList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the clusters.
	Items []Cluster `json:"items"`
}
