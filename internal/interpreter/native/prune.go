package native

import (
	"strings"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
)

// More kinds with pruning or retention rules.
var (
	serviceAccountKind = schema.GroupKind{Kind: "ServiceAccount"}
	secretKind         = schema.GroupKind{Kind: "Secret"}
)

// serviceAccountTokenType is the Secret type whose data and service-account uid annotation the
// token controller of each cluster fills in.
const serviceAccountTokenType = "kubernetes.io/service-account-token"

// pruning is one rule of Prune: it removes, in place, one kind of field that belongs to the
// cluster that stores the object rather than to the resource template.
type pruning func(obj map[string]any)

// serverSetMetadata are the metadata fields every API server fills in or manages for the object
// it stores: they name the control plane's copy and cannot be sent to a member.
var serverSetMetadata = []string{
	"uid", "resourceVersion", "generation", "creationTimestamp", "managedFields", "selfLink",
	"ownerReferences", "finalizers", "deletionTimestamp", "deletionGracePeriodSeconds",
}

// prunings lists, per kind, the fields Prune removes on top of server-set metadata and status.
// It is Karmada's list of "irrelevant fields" (the prune step before a template becomes a Work
// manifest), including its Job TTL hook.
var prunings = map[schema.GroupKind][]pruning{
	// The Deployment controller's revision bookkeeping: each member's controller keeps its own.
	deploymentKind: {
		drop("metadata", "annotations", "deployment.kubernetes.io/revision"),
		drop("metadata", "annotations", "deployment.kubernetes.io/revision-history"),
	},
	jobKind: {
		// A member's TTL controller would delete a finished Job, and the
		// propagation would then create it again, over and over.
		drop("spec", "ttlSecondsAfterFinished"),
		// The API server generates the selector and the pod labels that match
		// it from the Job's uid, which differs in every cluster.
		dropKeys([]string{"spec", "selector", "matchLabels"},
			"controller-uid", "batch.kubernetes.io/controller-uid").when(generatedSelector),
		dropIfEmpty("spec", "selector", "matchLabels").when(generatedSelector),
		dropIfEmpty("spec", "selector").when(generatedSelector),
		dropKeys([]string{"spec", "template", "metadata", "labels"},
			"controller-uid", "batch.kubernetes.io/controller-uid", "job-name", "batch.kubernetes.io/job-name").when(generatedSelector),
	},
	// A service-account token Secret gets its token and the account's uid from the token
	// controller of the cluster it lives in.
	secretKind: {
		drop("metadata", "annotations", "kubernetes.io/service-account.uid").when(serviceAccountToken),
		drop("data").when(serviceAccountToken),
	},
	// Legacy token Secrets a cluster generated for the account (named <account>-token-<suffix>).
	serviceAccountKind: {dropGeneratedTokenSecrets},
	// Cluster IPs are allocated by each cluster from its own range; "None" (headless) is the
	// user's choice and stays.
	serviceKind: {
		drop("spec", "clusterIP").when(notHeadless),
		drop("spec", "clusterIPs").when(notHeadless),
	},
	// The node the scheduler of the control plane's cluster picked for the claim's volume.
	pvcKind: {drop("metadata", "annotations", "volume.kubernetes.io/selected-node")},
}

// Prune removes, in place, what a resource template holds that makes no sense in a member
// cluster, as Karmada's prune step does before a template is put into a Work: the metadata the
// control plane's API server set (uid, resourceVersion, generation, creationTimestamp,
// managedFields, selfLink, ownerReferences, finalizers, deletion fields), .status, and per kind:
//   - Deployment: the deployment.kubernetes.io/revision and revision-history annotations;
//   - Job: spec.ttlSecondsAfterFinished and, unless spec.manualSelector is true, the generated
//     selector and pod-template labels (controller-uid, job-name, with and without the
//     batch.kubernetes.io/ prefix);
//   - Secret of type kubernetes.io/service-account-token: data and the
//     kubernetes.io/service-account.uid annotation;
//   - ServiceAccount: the secrets named <account>-token-*;
//   - Service: spec.clusterIP and spec.clusterIPs, unless the Service is headless (None);
//   - PersistentVolumeClaim: the volume.kubernetes.io/selected-node annotation.
//
// Kinds are recognised by API group and kind, whatever the version. Fields of an unexpected
// type are left alone. Pruning twice gives the same object.
func Prune(obj *unstructured.Unstructured) {
	for _, f := range serverSetMetadata {
		unstructured.RemoveNestedField(obj.Object, "metadata", f)
	}
	unstructured.RemoveNestedField(obj.Object, "status")
	for _, p := range prunings[groupKindOf(obj)] {
		p(obj.Object)
	}
}

// drop removes the field at path.
func drop(path ...string) pruning {
	return func(obj map[string]any) { unstructured.RemoveNestedField(obj, path...) }
}

// dropKeys removes keys from the map at path.
func dropKeys(path []string, keys ...string) pruning {
	return func(obj map[string]any) {
		m, ok := nestedMap(obj, path...)
		if !ok {
			return
		}
		for _, k := range keys {
			delete(m, k)
		}
	}
}

// dropIfEmpty removes the map at path when it has no keys left.
func dropIfEmpty(path ...string) pruning {
	return func(obj map[string]any) {
		if m, ok := nestedMap(obj, path...); ok && len(m) == 0 {
			unstructured.RemoveNestedField(obj, path...)
		}
	}
}

// when restricts p to the objects c holds for.
func (p pruning) when(c condition) pruning {
	return func(obj map[string]any) {
		if c(obj) {
			p(obj)
		}
	}
}

// dropGeneratedTokenSecrets removes from a ServiceAccount's secrets the references to token
// Secrets its cluster generated, which are named after the account.
func dropGeneratedTokenSecrets(obj map[string]any) {
	secrets, ok := obj["secrets"].([]any)
	if !ok {
		return
	}
	name, _, _ := unstructured.NestedString(obj, "metadata", "name")
	prefix := name + "-token-"
	kept := make([]any, 0, len(secrets))
	for _, s := range secrets {
		if ref, _ := s.(map[string]any); ref != nil {
			if n, _ := ref["name"].(string); strings.HasPrefix(n, prefix) {
				continue
			}
		}
		kept = append(kept, s)
	}
	if len(kept) == 0 {
		delete(obj, "secrets")
		return
	}
	obj["secrets"] = kept
}

// nestedMap returns the map at path without copying it; ok is false when there is none.
func nestedMap(obj map[string]any, path ...string) (map[string]any, bool) {
	v, found, err := unstructured.NestedFieldNoCopy(obj, path...)
	if err != nil || !found {
		return nil, false
	}
	m, ok := v.(map[string]any)
	return m, ok
}
