package v1alpha1

import (
	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ResourceInterpreterWebhookConfiguration is Karmada's registration of resource interpreter
// webhooks: HTTP services that answer interpreter operations for the kinds and operations
// their rules name. Like admission webhook configurations, it has no spec; the webhooks are
// at the top level.
//
// +kubebuilder:object:root=true
// +kubebuilder:resource:path=resourceinterpreterwebhookconfigurations,scope=Cluster,categories=karmada-io
type ResourceInterpreterWebhookConfiguration struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`

	// Webhooks are the interpreter webhooks and what they interpret.
	// +required
	Webhooks []ResourceInterpreterWebhook `json:"webhooks"`
}

// ResourceInterpreterWebhook is one interpreter webhook.
type ResourceInterpreterWebhook struct {
	// Name is the fully qualified webhook name, for example "workloads.example.com".
	// +required
	Name string `json:"name"`

	// ClientConfig says how to reach the webhook (URL or Service, and CA bundle).
	// +required
	ClientConfig admissionregistrationv1.WebhookClientConfig `json:"clientConfig"`

	// Rules are the kinds and operations the webhook interprets.
	// +optional
	Rules []RuleWithOperations `json:"rules,omitempty"`

	// TimeoutSeconds is the call timeout, 1 to 30 seconds (Karmada's webhook refuses
	// others). Defaults to 10.
	// +kubebuilder:validation:Minimum=1
	// +kubebuilder:validation:Maximum=30
	// +optional
	TimeoutSeconds *int32 `json:"timeoutSeconds,omitempty"`

	// InterpreterContextVersions are the ResourceInterpreterContext versions the webhook
	// understands, in order of preference; the first one the caller knows is used.
	// +required
	InterpreterContextVersions []string `json:"interpreterContextVersions"`
}

// RuleWithOperations is a set of kinds and the interpreter operations on them.
type RuleWithOperations struct {
	// Operations are the interpreter operations, for example "InterpretReplica"; "*" means
	// all and comes alone. Other names are refused, as Karmada's webhook refuses them.
	// +required
	Operations []InterpreterOperation `json:"operations"`

	// Rule names the kinds.
	Rule `json:",inline"`
}

// Rule names kinds by group, version and kind; "*" is a wildcard in each list.
type Rule struct {
	// APIGroups are the API groups; "" is the core group.
	// +required
	APIGroups []string `json:"apiGroups"`

	// APIVersions are the versions.
	// +required
	APIVersions []string `json:"apiVersions"`

	// Kinds are the kind names.
	// +required
	Kinds []string `json:"kinds"`
}

// InterpreterOperation is one operation of the resource interpreter. A webhook's rules may
// name the operations Karmada's webhook accepts: "*", InterpretReplica, ReviseReplica,
// Retain, AggregateStatus, InterpretStatus, InterpretHealth, InterpretDependency and
// InterpretComponent (checked by the FlotillaValidation admission plugin: CEL over three
// nested lists is beyond the API server's cost budget).
type InterpreterOperation string

// Interpreter operations, as Karmada names them.
const (
	// InterpreterOperationAll matches every operation.
	InterpreterOperationAll InterpreterOperation = "*"
	// InterpreterOperationInterpretReplica reads the replica count and per-replica needs.
	InterpreterOperationInterpretReplica InterpreterOperation = "InterpretReplica"
	// InterpreterOperationReviseReplica sets the replica count of a cluster's copy.
	InterpreterOperationReviseReplica InterpreterOperation = "ReviseReplica"
	// InterpreterOperationInterpretStatus picks the status reported back from a cluster.
	InterpreterOperationInterpretStatus InterpreterOperation = "InterpretStatus"
	// InterpreterOperationPrune strips a resource template before it is put into a Work.
	InterpreterOperationPrune InterpreterOperation = "Prune"
	// InterpreterOperationRetain keeps fields that member clusters changed.
	InterpreterOperationRetain InterpreterOperation = "Retain"
	// InterpreterOperationAggregateStatus merges cluster statuses into the template.
	InterpreterOperationAggregateStatus InterpreterOperation = "AggregateStatus"
	// InterpreterOperationInterpretHealth judges health in a cluster.
	InterpreterOperationInterpretHealth InterpreterOperation = "InterpretHealth"
	// InterpreterOperationInterpretDependency lists the objects a resource depends on.
	InterpreterOperationInterpretDependency InterpreterOperation = "InterpretDependency"
	// InterpreterOperationInterpretComponent lists the components (pod templates with their
	// replicas and requirements) of a multi-template workload (Karmada v1.19).
	InterpreterOperationInterpretComponent InterpreterOperation = "InterpretComponent"
)

// ResourceInterpreterWebhookConfigurationList is a list of
// ResourceInterpreterWebhookConfiguration.
//
// +kubebuilder:object:root=true
type ResourceInterpreterWebhookConfigurationList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`

	// Items are the configurations.
	Items []ResourceInterpreterWebhookConfiguration `json:"items"`
}
