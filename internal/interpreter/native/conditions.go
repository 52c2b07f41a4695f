package native

import "k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"

// condition tells whether a pruning or retention rule applies to an object: the template for
// Prune, the object about to be sent for Retain.
type condition func(obj map[string]any) bool

// generatedSelector holds for a Job whose selector the API server generated (spec.manualSelector
// not true).
func generatedSelector(obj map[string]any) bool {
	manual, _, _ := unstructured.NestedBool(obj, "spec", "manualSelector")
	return !manual
}

// notHeadless holds for a Service whose spec.clusterIP is not "None".
func notHeadless(obj map[string]any) bool {
	ip, _, _ := unstructured.NestedString(obj, "spec", "clusterIP")
	return ip != "None"
}

// needsClusterIP holds for a Service of any type but ExternalName.
func needsClusterIP(obj map[string]any) bool {
	t, _, _ := unstructured.NestedString(obj, "spec", "type")
	return t != "ExternalName"
}

// needsHealthCheckNodePort holds for a Service of type LoadBalancer with externalTrafficPolicy
// Local, the only Services the API server gives a health-check node port.
func needsHealthCheckNodePort(obj map[string]any) bool {
	t, _, _ := unstructured.NestedString(obj, "spec", "type")
	policy, _, _ := unstructured.NestedString(obj, "spec", "externalTrafficPolicy")
	return t == "LoadBalancer" && policy == "Local"
}

// serviceAccountToken holds for a Secret of type kubernetes.io/service-account-token.
func serviceAccountToken(obj map[string]any) bool {
	t, _, _ := unstructured.NestedString(obj, "type")
	return t == serviceAccountTokenType
}

// retainsReplicas holds for an object labelled RetainReplicasLabel=true.
func retainsReplicas(obj map[string]any) bool {
	v, _, _ := unstructured.NestedString(obj, "metadata", "labels", RetainReplicasLabel)
	return v == "true"
}
